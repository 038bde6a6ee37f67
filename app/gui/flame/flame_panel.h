#pragma once
// The Flame graph tab: a mode chooser (CPU time of the operator stacks, or GPU time by the
// CPU stack that launched it), in GPU mode a device picker when the trace has several GPUs,
// a frame search, "Reset zoom" and a line describing the range
// and totals, above a scrollable FlameGraphWidget. The graph covers the analysis window, or
// a timeline selection after setRange().
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/flame_graph.h"
#include "stallscope/model/trace.h"

#include "background_job.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QScrollArea;
class QToolButton;

namespace stallscope::gui {

class FlameGraphWidget;

class FlamePanel : public QWidget {
    Q_OBJECT
public:
    explicit FlamePanel(QWidget* parent = nullptr);

    /// Shows the analysis window of `trace` (the whole trace when `analysis` is null).
    void setData(std::shared_ptr<const model::Trace> trace,
                 std::shared_ptr<const analysis::AnalysisResult> analysis);
    /// Restricts the graph to the slices starting in [startNs, endNs) (a timeline selection).
    void setRange(int64_t startNs, int64_t endNs);
    /// Back to the analysis window.
    void clearRange();

    void setMode(analysis::FlameMode mode);
    [[nodiscard]] analysis::FlameMode mode() const;
    /// GPU mode: the device whose work is charged (-1: all).
    void setDevice(int32_t device);
    [[nodiscard]] int32_t device() const;
    [[nodiscard]] QComboBox* devicePicker() const { return m_device; }
    /// "Skip wrappers": a new graph opens zoomed to its first frame that is not a wrapper
    /// (analysis::firstBranchingNode). On by default.
    [[nodiscard]] QToolButton* skipWrappersButton() const { return m_skipWrappers; }
    [[nodiscard]] bool hasRange() const { return m_hasRange; }
    /// True while the graph for the current mode, device and range is built (off the GUI
    /// thread); graphBuilt() says when it is shown.
    [[nodiscard]] bool building() const { return m_job.busy(); }

    [[nodiscard]] FlameGraphWidget* graphWidget() const { return m_graph; }
    [[nodiscard]] QLineEdit* searchField() const { return m_search; }
    [[nodiscard]] QLabel* infoLabel() const { return m_info; }
    /// The line under the graph: the hovered frame, or the zoom and search summary.
    [[nodiscard]] QLabel* statusLabel() const { return m_status; }
    /// The full texts of the two labels (they are elided to their width).
    [[nodiscard]] const QString& infoText() const { return m_infoText; }
    [[nodiscard]] const QString& statusText() const { return m_statusText; }

Q_SIGNALS:
    /// A frame was double-clicked (its name; invalid for "all" and "(no launch call)").
    void frameActivated(stallscope::model::StringId name);
    /// The graph asked for by the last setData/setRange/mode/device change is shown.
    void graphBuilt();

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    QHBoxLayout* buildToolbar();
    void rebuild();
    void updateInfo();
    void updateStatus();
    [[nodiscard]] QString rangeDescription() const;
    [[nodiscard]] QString frameSummary(int node) const;

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    bool m_hasRange = false;
    int64_t m_rangeStart = 0, m_rangeEnd = 0;

    void fillDevices();

    QComboBox* m_mode = nullptr;
    QComboBox* m_device = nullptr;
    QLineEdit* m_search = nullptr;
    QToolButton* m_reset = nullptr;
    QToolButton* m_skipWrappers = nullptr;
    QLabel* m_info = nullptr;
    QLabel* m_status = nullptr;
    QString m_infoText, m_statusText; // before elision
    QScrollArea* m_scroll = nullptr;
    FlameGraphWidget* m_graph = nullptr;
    LatestJob<analysis::FlameGraph> m_job{this};
};

} // namespace stallscope::gui
