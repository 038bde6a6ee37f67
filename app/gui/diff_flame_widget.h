#pragma once
// The differential flame graph of two runs (analysis/run_diff.h), painted as the report draws
// it (reports/svg.h diffFlamePicture): GPU time by launching stack per step, a frame as wide as
// the mean of its before and after time, red where AFTER spends more, blue where less. Hover
// names a frame's times; a click zooms to it, a click on the top frame zooms out.
#include "stallscope/analysis/run_diff.h"

#include <QWidget>

namespace stallscope::gui {

class DiffFlameWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr int kRowHeight = 20;
    explicit DiffFlameWidget(QWidget* parent = nullptr);
    void setGraph(analysis::DiffFlameGraph graph);
    [[nodiscard]] const analysis::DiffFlameGraph& graph() const { return m_graph; }
    /// Makes `node` the full-width frame (0: the root).
    void zoomTo(int node);
    [[nodiscard]] int zoomedNode() const { return m_zoom; }
    /// The frame under `pos`, -1 when none.
    [[nodiscard]] int frameAt(QPointF pos) const;
    /// A frame's rectangle; empty when it is not laid out (outside the zoom, or narrower than
    /// a pixel).
    [[nodiscard]] QRectF frameRect(int node) const;
    [[nodiscard]] QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    bool event(QEvent* e) override;

private:
    void layoutFrames();
    analysis::DiffFlameGraph m_graph;
    int m_zoom = 0;
    std::vector<QRectF> m_rects; // per node; empty rect: not drawn
};

} // namespace stallscope::gui
