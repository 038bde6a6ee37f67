#pragma once
// The compare view (File ▸ Compare With Baseline…, a trace dropped with Shift, or
// `stallscope --baseline BEFORE AFTER`): two runs of one program, analysis/run_diff.h shown.
// The two timelines one above the other on one time scale, aligned at a chosen step (or at the
// events of a selected table row), zoom and pan linked; below, tabs: the per-step overview of
// both (stacked bars on one scale), the findings before and after, the aligned operator and
// kernel tables (a row selects its events in both timelines) and the differential flame graph.
#include "background_job.h"
#include "document.h"

#include "stallscope/analysis/run_diff.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QTabWidget;
class QTableWidget;

namespace stallscope::gui {

class DiffFlameWidget;
class StepBarsWidget;
class TimelineView;

class CompareWindow : public QWidget {
    Q_OBJECT
public:
    enum Tab { Overview, Findings, Operators, Kernels, Flame, Ranks };
    explicit CompareWindow(QWidget* parent = nullptr);

    /// Loads BEFORE and AFTER on the thread pool, compares them and shows the result (an error
    /// in the summary line when one cannot be opened).
    void openPaths(const QString& before, const QString& after);
    /// Loads BEFORE (a baseline) and compares it with a document already open.
    void openBaseline(const QString& before, std::shared_ptr<Document> after);
    /// Shows two loaded documents (each one's first rank, or its representative capture).
    void setDocuments(std::shared_ptr<Document> before, std::shared_ptr<Document> after);
    [[nodiscard]] bool loading() const { return m_job.busy(); }

    /// Aligns the timelines at the index-th step of each window and zooms to it.
    void alignAtStep(int index);
    /// Selects row `row` of the operator (or kernel) table: its first call in each run is
    /// selected in that run's timeline, and the timelines are aligned at those calls.
    void selectRow(bool kernels, int row);

    [[nodiscard]] const analysis::RunDiff* diff() const { return m_diff.get(); }
    [[nodiscard]] TimelineView* timeline(bool after) const { return after ? m_after : m_before; }
    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] QTableWidget* table(bool kernels) const {
        return kernels ? m_kernels : m_operators;
    }
    [[nodiscard]] QTableWidget* findingsTable() const { return m_findings; }
    /// Rank by rank (two runs of several ranks): window and waiting before -> after.
    [[nodiscard]] QTableWidget* ranksTable() const { return m_ranks; }
    [[nodiscard]] DiffFlameWidget* flame() const { return m_flame; }
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    [[nodiscard]] QComboBox* stepCombo() const { return m_stepCombo; }
    /// AFTER's time minus BEFORE's at the aligned point.
    [[nodiscard]] int64_t offsetNs() const { return m_offsetNs; }

private:
    struct Loaded {
        std::shared_ptr<Document> before, after;
        std::shared_ptr<const analysis::RunDiff> diff;
        QString error;
    };
    void present(Loaded loaded);
    void syncFrom(TimelineView* from);
    void fillSummary();
    void fillOverview();
    void fillFindings();
    void fillTable(bool kernels);
    void fillRanks();
    [[nodiscard]] const LoadedTrace* side(bool after) const;

    std::shared_ptr<Document> m_beforeDoc, m_afterDoc;
    std::shared_ptr<const analysis::RunDiff> m_diff;
    LatestJob<Loaded> m_job{this};
    TimelineView* m_before = nullptr;
    TimelineView* m_after = nullptr;
    QLabel* m_beforeLabel = nullptr;
    QLabel* m_afterLabel = nullptr;
    QLabel* m_summary = nullptr;
    QComboBox* m_stepCombo = nullptr;
    QComboBox* m_overviewMode = nullptr;
    QTabWidget* m_tabs = nullptr;
    StepBarsWidget* m_beforeBars = nullptr;
    StepBarsWidget* m_afterBars = nullptr;
    QLabel* m_legend = nullptr;
    QTableWidget* m_findings = nullptr;
    QTableWidget* m_operators = nullptr;
    QTableWidget* m_kernels = nullptr;
    QTableWidget* m_ranks = nullptr;
    DiffFlameWidget* m_flame = nullptr;
    int64_t m_offsetNs = 0;
    bool m_syncing = false;
};

} // namespace stallscope::gui
