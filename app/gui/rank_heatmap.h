#pragma once
// The ranks × steps heat map of the Ranks panel: one cell per rank and step, coloured by the
// chosen measure (step time, waiting in collectives, GPU idle or one idle cause), the step's
// straggler outlined, the loaded rank marked; hovering tells the cell's figures, clicking a
// cell asks for that rank's timeline at that step.
#include "stallscope/analysis/cross_rank.h"

#include <QWidget>

namespace stallscope::gui {

class RankHeatmap : public QWidget {
    Q_OBJECT
public:
    enum class Measure { StepTime, Waiting, Idle, Cause };
    explicit RankHeatmap(QWidget* parent = nullptr);
    void setData(const analysis::CrossRankResult* cross, int32_t loadedRank);
    void setMeasure(Measure m, analysis::IdleCause cause = analysis::IdleCause::DataLoading);
    [[nodiscard]] QSize sizeHint() const override;
    [[nodiscard]] QSize minimumSizeHint() const override;
    /// The cell under a point: rank index and step column, or {-1, -1}.
    [[nodiscard]] std::pair<int, int> cellAt(QPoint p) const;
    /// The value a cell is coloured by, in [0, 1] of the scale (for tests).
    [[nodiscard]] double shade(int rankIndex, int column) const;

Q_SIGNALS:
    void cellActivated(int32_t rank, int column);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;
    bool event(QEvent* e) override;

private:
    [[nodiscard]] double value(const analysis::RankStepCell& c) const;
    [[nodiscard]] QRect grid() const;
    void rescale();

    const analysis::CrossRankResult* m_cross = nullptr;
    int32_t m_loaded = -1;
    Measure m_measure = Measure::StepTime;
    analysis::IdleCause m_cause = analysis::IdleCause::DataLoading;
    double m_lo = 0, m_hi = 0;
};

} // namespace stallscope::gui
