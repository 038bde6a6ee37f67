#pragma once
// The Statistics tab: kernels, CPU operators, memory copies and runtime calls of the
// analysis window as sortable, filterable tables. Double-click or Enter on a row asks to
// show the row's example event (eventRequested).
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/trace.h"

#include <QWidget>

#include <array>
#include <memory>
#include <vector>

class QAbstractItemModel;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QModelIndex;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace stallscope::gui {

class StatsTableModel;

class StatsPanel : public QWidget {
    Q_OBJECT
public:
    enum Tab {
        KernelsTab,
        KernelsByOperatorTab,
        OperatorsTab,
        CopiesTab,
        RuntimeTab,
        CollectivesTab,
        TabCount
    };

    explicit StatsPanel(QWidget* parent = nullptr);

    void setData(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis);

    [[nodiscard]] QTabWidget* tabs() const { return m_tabs; }
    [[nodiscard]] QTableView* view(int tab) const;
    [[nodiscard]] QLineEdit* filter(int tab) const;
    /// The source model of a tab (a StatsTableModel); view(tab) shows it through proxy(tab).
    [[nodiscard]] QAbstractItemModel* model(int tab) const;
    [[nodiscard]] QSortFilterProxyModel* proxy(int tab) const;
    [[nodiscard]] QLabel* summary(int tab) const;
    /// The rows a tab shows (filtered, in its sort order) as CSV (RFC 4180): the column
    /// titles, then raw values: names as written, times in nanoseconds, shares in percent.
    [[nodiscard]] QString csv(int tab) const;
    /// Shows the row of `slice`'s name (a kernel, an operator by name, a runtime call): its
    /// tab, the filter cleared, the row selected and scrolled to. False when no row has it.
    bool showRowOf(const model::Trace& trace, model::SliceId slice);
    /// The Operators tab's "Group by" (name, name + input shapes, name + call stack).
    [[nodiscard]] QComboBox* operatorGrouping() const { return m_grouping; }

Q_SIGNALS:
    void eventRequested(stallscope::model::SliceId slice);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Page {
        StatsTableModel* model = nullptr;
        QSortFilterProxyModel* proxy = nullptr;
        QTableView* view = nullptr;
        QLineEdit* filter = nullptr;
        QLabel* summary = nullptr;
        QLabel* window = nullptr;
        QHBoxLayout* bar = nullptr;
    };

    QWidget* buildPage(int tab, StatsTableModel* model, model::EventKind barKind);
    void fitColumns(int tab);
    void updateSummary(int tab);
    void request(const QModelIndex& proxyIndex);
    void copySelection(int tab) const;
    [[nodiscard]] int pageOf(const QObject* widget) const;

    void regroupOperators(int index);

    QTabWidget* m_tabs = nullptr;
    QComboBox* m_grouping = nullptr;
    std::array<Page, TabCount> m_pages{};
};

} // namespace stallscope::gui
