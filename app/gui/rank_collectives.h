#pragma once
// The ranks side by side at one step, on the common clock: one row per rank with its step's
// extent and its collective kernels, each split into the wait for the last rank to arrive
// (amber) and the transfer (blue); a line through all rows at each collective's last arrival
// links the same collective across the ranks, so the rank that arrives late stands out as the
// one without amber. Drawn from the cross-rank analysis alone (digests), so it works for
// hundreds of ranks whose traces are not loaded.
#include "stallscope/analysis/cross_rank.h"

#include <QWidget>

namespace stallscope::gui {

class RankCollectivesView : public QWidget {
    Q_OBJECT
public:
    explicit RankCollectivesView(QWidget* parent = nullptr);
    void setData(const analysis::CrossRankResult* cross, int32_t loadedRank);
    void setColumn(int column); // a step column of the heat map
    [[nodiscard]] int column() const { return m_column; }
    [[nodiscard]] QSize sizeHint() const override { return {600, 300}; }
    /// The time range drawn (common clock), for tests.
    [[nodiscard]] std::pair<int64_t, int64_t> range() const { return {m_lo, m_hi}; }
    /// The collectives (indices into the cross-rank result) drawn at this column.
    [[nodiscard]] const std::vector<size_t>& shown() const { return m_shown; }

Q_SIGNALS:
    void rankActivated(int32_t rank, int column);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;

private:
    void relayout();
    [[nodiscard]] QRect plot() const;
    [[nodiscard]] int rowAt(int y) const;

    const analysis::CrossRankResult* m_cross = nullptr;
    int32_t m_loaded = -1;
    int m_column = 0;
    int64_t m_lo = 0, m_hi = 1;
    std::vector<size_t> m_shown;
};

} // namespace stallscope::gui
