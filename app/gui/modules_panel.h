#pragma once
// The Modules tab: the nn.Module hierarchy of the analysis window (analysis::buildModuleTree)
// as a tree with occurrences, operators, host and device time, the TensorBoard plugin's
// Module view. Built when the tab is first shown for a trace; a double-click shows the
// module's first range on the timeline.
#include "stallscope/analysis/module_tree.h"

#include <QWidget>

#include <memory>

class QLabel;
class QTreeWidget;
class QTreeWidgetItem;

namespace stallscope::gui {

class ModulesPanel : public QWidget {
    Q_OBJECT
public:
    enum Col {
        Name,
        Occurrences,
        Operators,
        HostTotal,
        HostSelf,
        DeviceTotal,
        DeviceSelf,
        ColumnCount
    };

    explicit ModulesPanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const model::Trace> trace,
                 std::shared_ptr<const analysis::AnalysisResult> analysis);
    [[nodiscard]] QTreeWidget* tree() const { return m_tree; }
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    /// The tree shown (built on demand).
    [[nodiscard]] const analysis::ModuleTree& modules();
    /// Every module, depth first in the tree's order, as CSV (RFC 4180): its path of names,
    /// then raw values (times in nanoseconds). Export CSV… writes it.
    [[nodiscard]] QString csv();

Q_SIGNALS:
    void eventRequested(stallscope::model::SliceId slice);

protected:
    void showEvent(QShowEvent* e) override;

private:
    void rebuild();
    QTreeWidgetItem* item(int node, QTreeWidgetItem* parent);

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    analysis::ModuleTree m_modules;
    bool m_dirty = true;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_summary = nullptr;
};

} // namespace stallscope::gui
