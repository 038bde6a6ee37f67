#pragma once
// The Memory tab (traces recorded with profile_memory=True; analysis::analyzeMemory): per
// device (and allocator snapshots: their history replayed) the allocated and reserved curves with
// the peak marked, the peaks, headroom and advice, and three tables: what was live at the allocated
// peak (by operator or by Python frame), the operators' memory (the TensorBoard plugin's memory
// statistics) and the allocation events (sortable, filterable; a double-click selects the event's
// operator on the timeline, a click on the curve zooms the timeline there); the Active blocks
// picture and, for allocator snapshots, the Allocator tab (segments and their blocks when it was
// taken, out-of-memory events; allocator_views.h). Follows a step or range scope.
#include "stallscope/analysis/memory.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace stallscope::gui {

/// Allocated and reserved over the window, as steps; the peak marked.
class MemoryCurveWidget : public QWidget {
    Q_OBJECT
public:
    explicit MemoryCurveWidget(QWidget* parent = nullptr);
    void setDevice(const analysis::DeviceMemory* device, int64_t startNs, int64_t endNs);
    [[nodiscard]] QSize sizeHint() const override { return {600, 140}; }
    /// The time at widget x (for a click), and the value shown at a time.
    [[nodiscard]] int64_t timeAt(double x) const;

Q_SIGNALS:
    void timeActivated(int64_t ns);

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;

private:
    [[nodiscard]] QRectF plot() const;
    const analysis::DeviceMemory* m_device = nullptr;
    int64_t m_start = 0, m_end = 1;
};

class ActiveMemoryWidget;
class MemoryEventsModel;
class SegmentMapWidget;

class MemoryPanel : public QWidget {
    Q_OBJECT
public:
    enum Tab { LiveTab, OperatorsTab, EventsTab, ActiveTab, AllocatorTab };
    explicit MemoryPanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const model::Trace> trace,
                 std::shared_ptr<const analysis::AnalysisResult> analysis);
    [[nodiscard]] const analysis::MemoryAnalysis& memory();
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    /// The Live at the peak or Operators table.
    [[nodiscard]] QTableWidget* table(Tab tab) const;
    /// Shows one of the three tabs (the events are filled when theirs is shown).
    void showTab(Tab tab);
    /// The events (a model over the analysis' rows: tens of thousands stay cheap), sorted
    /// and filtered by the proxy the view shows.
    [[nodiscard]] QTableView* eventsView() const { return m_events; }
    [[nodiscard]] QSortFilterProxyModel* events() const { return m_eventsProxy; }
    [[nodiscard]] MemoryCurveWidget* curve() const { return m_curve; }
    [[nodiscard]] QComboBox* grouping() const { return m_grouping; }
    [[nodiscard]] QLineEdit* filter() const { return m_filter; }
    [[nodiscard]] ActiveMemoryWidget* activeBlocks() const { return m_active; }
    [[nodiscard]] SegmentMapWidget* segments() const { return m_segments; }
    [[nodiscard]] QLabel* allocatorSummary() const { return m_allocatorSummary; }
    [[nodiscard]] QLabel* blockInfo() const { return m_blockInfo; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    /// Shows a block of the Active blocks picture (its stack, or its operator selected).
    void showBlock(int row);

Q_SIGNALS:
    void eventRequested(stallscope::model::SliceId slice);
    void timeRequested(int64_t ns);

protected:
    void showEvent(QShowEvent* e) override;

private:
    void rebuild();
    void showDevice();
    void fillLive();
    void showAllocator(const analysis::DeviceMemory* d);
    void fillEvents();
    void applyFilter();
    [[nodiscard]] const analysis::DeviceMemory* device() const;

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    analysis::MemoryAnalysis m_memory;
    bool m_dirty = true;
    QComboBox* m_device = nullptr;
    QLabel* m_summary = nullptr;
    MemoryCurveWidget* m_curve = nullptr;
    QTabWidget* m_tabs = nullptr;
    QComboBox* m_grouping = nullptr;
    QLineEdit* m_filter = nullptr;
    QTableWidget* m_live = nullptr;
    QTableWidget* m_ops = nullptr;
    QTableView* m_events = nullptr;
    ActiveMemoryWidget* m_active = nullptr;
    QLabel* m_blockInfo = nullptr;
    SegmentMapWidget* m_segments = nullptr;
    QLabel* m_allocatorSummary = nullptr;
    MemoryEventsModel* m_eventsModel = nullptr;
    QSortFilterProxyModel* m_eventsProxy = nullptr;
    const analysis::DeviceMemory* m_eventsShown = nullptr; // the device the events model shows
};

} // namespace stallscope::gui
