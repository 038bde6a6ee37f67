#pragma once
// The Overview tab: the TensorBoard profiler plugin's Overview page. One stacked bar per step
// of what ran (kernel, memcpy, memset, communication, runtime, data loading, CPU, other:
// analysis::stepBreakdown) or, switched, of why the GPU was idle (the idle causes per step),
// the steady steps' mean beside them, and the same figures as a table. Clicking a bar or a
// row selects that step in the window (the Step box: the timeline zooms to it).
#include "stallscope/analysis/step_breakdown.h"

#include <QWidget>

#include <algorithm>
#include <functional>
#include <memory>

class QComboBox;
class QLabel;
class QTableWidget;

namespace stallscope::gui {

/// The bars: one per step plus the mean; hover names a segment, a click selects a step.
class StepBarsWidget : public QWidget {
    Q_OBJECT
public:
    enum class Mode { Categories, IdleCauses };
    explicit StepBarsWidget(QWidget* parent = nullptr);
    void setBreakdown(const analysis::StepBreakdown& breakdown, Mode mode);
    /// The bars' height scale at least this long (two widgets side by side on one scale).
    void setScaleNs(int64_t ns);
    /// The longest bar (the scale, before setScaleNs).
    [[nodiscard]] int64_t longestBarNs() const;
    /// The height the bars are drawn to: the longest bar, or the scale set when longer.
    [[nodiscard]] int64_t scaleNs() const { return std::max(longestBarNs(), m_scaleNs); }
    [[nodiscard]] QSize sizeHint() const override { return {600, 220}; }
    /// The segments a bar is made of, bottom up (label, ns, colour).
    struct Segment {
        QString label;
        int64_t ns;
        QColor color;
    };
    [[nodiscard]] std::vector<Segment> segments(size_t bar) const;
    [[nodiscard]] size_t barCount() const;
    /// The step index (into the breakdown's steps) under x, or -1 (the mean, the margins).
    [[nodiscard]] int stepAt(int x) const;

Q_SIGNALS:
    void stepClicked(int64_t number);

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;

private:
    [[nodiscard]] QRectF plot() const;
    [[nodiscard]] double slot() const;
    [[nodiscard]] int64_t barLength(size_t bar) const;
    analysis::StepBreakdown m_b;
    Mode m_mode = Mode::Categories;
    int64_t m_scaleNs = 1;
};

class OverviewPanel : public QWidget {
    Q_OBJECT
public:
    explicit OverviewPanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const analysis::AnalysisResult> analysis);
    [[nodiscard]] StepBarsWidget* bars() const { return m_bars; }
    [[nodiscard]] QTableWidget* table() const { return m_table; }
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    [[nodiscard]] bool hasSteps() const;

Q_SIGNALS:
    void stepActivated(int64_t number);

private:
    void refresh();
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    QComboBox* m_device;
    QComboBox* m_mode;
    QLabel* m_summary;
    StepBarsWidget* m_bars;
    QTableWidget* m_table;
};

} // namespace stallscope::gui
