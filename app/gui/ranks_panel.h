#pragma once
// The ranks of a multi-rank document: the cross-rank line (collectives, straggler, imbalance,
// findings across ranks), the ranks × steps heat map and one row per rank (utilisation,
// largest idle cause, mean step, top finding, time in collectives split into waiting and
// transfer, last arrivals), and the ranks side by side at a step with their collectives
// linked (RankCollectivesView). Activating a row or clicking a cell asks for that rank (at that
// step); with many ranks the window loads that rank's trace on demand.
#include "document.h"

#include "stallscope/analysis/cross_rank.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QTableWidget;

namespace stallscope::gui {

class RankCollectivesView;
class RankHeatmap;

class RanksPanel : public QWidget {
    Q_OBJECT
public:
    explicit RanksPanel(QWidget* parent = nullptr);
    void setDocument(const Document* doc, int current);
    [[nodiscard]] QTableWidget* table() const { return m_table; }
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    [[nodiscard]] RankHeatmap* heatmap() const { return m_heatmap; }
    [[nodiscard]] QComboBox* measure() const { return m_measure; }
    [[nodiscard]] RankCollectivesView* collectives() const { return m_collectives; }

Q_SIGNALS:
    /// A rank by its number; `column` is a step column of the heat map, -1 for the whole window.
    void rankActivated(int32_t rank, int column);

private:
    QLabel* m_summary;
    QComboBox* m_measure;
    RankHeatmap* m_heatmap;
    RankCollectivesView* m_collectives;
    QTableWidget* m_table;
    bool m_measureChosen = false; // the user picked a measure: keep it across documents
    // The panel's own copy: its widgets point into it, so a document freed elsewhere (a new
    // recording, another file) never leaves them a dangling pointer.
    analysis::CrossRankResult m_cross;
};

} // namespace stallscope::gui
