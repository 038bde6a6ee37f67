#pragma once
// An icicle flame graph: the root at the top, one 20 px row per depth, each frame as wide as
// its share of the zoomed frame's total. Click a frame to zoom into it; click the root, press
// Esc or right-click to zoom out one level; double-click to activate a frame's name. Search
// outlines the frames whose name contains the text.
#include "stallscope/analysis/flame_graph.h"
#include "stallscope/model/trace.h"

#include <QRectF>
#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QFontMetrics;
class QPainter;

namespace stallscope::gui {

class FlameGraphWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr int kRowHeight = 20;
    static constexpr double kMinFrameWidth = 1.0; // px; narrower frames are not drawn

    explicit FlameGraphWidget(QWidget* parent = nullptr);

    /// Shows a graph of `trace` (names are the trace's); the zoom goes back to the root.
    void setGraph(std::shared_ptr<const model::Trace> trace, analysis::FlameGraph graph);
    [[nodiscard]] const analysis::FlameGraph& graph() const { return m_graph; }
    [[nodiscard]] const model::Trace* trace() const { return m_trace.get(); }

    [[nodiscard]] int zoomedNode() const { return m_zoom; }
    /// Makes `node` the full-width frame (0 = the root, no zoom).
    void zoomTo(int node);
    /// Zooms out one level (to the zoomed frame's parent).
    void zoomOut();
    void resetZoom() { zoomTo(0); }

    /// Case-insensitive substring search over frame names; an empty text clears it.
    void setSearch(const QString& text);
    [[nodiscard]] const QString& searchText() const { return m_search; }
    /// Time of the matching frames, nested matches counted once.
    [[nodiscard]] int64_t matchedTotalNs() const { return m_matchedTotalNs; }
    [[nodiscard]] int matchedFrameCount() const { return m_matchedCount; }

    /// A frame's rectangle in widget coordinates; empty when it is not laid out (outside the
    /// zoomed subtree, or inside a frame narrower than a pixel).
    [[nodiscard]] QRectF frameRect(int node) const;
    /// The frame under `pos` (-1 when none).
    [[nodiscard]] int nodeAt(QPointF pos) const;
    [[nodiscard]] int hoveredNode() const { return m_hover; }
    /// The display name of a node.
    [[nodiscard]] QString nodeName(int node) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    /// "1.23 ms", "456 µs", "2.35 s".
    static QString formatDuration(int64_t ns);

Q_SIGNALS:
    void frameActivated(stallscope::model::StringId name);
    void zoomChanged(int node);
    void hoveredChanged(int node);

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    bool event(QEvent* e) override;

private:
    void relayout();
    void updateMatches();
    void setHover(int node);
    void paintFrame(QPainter& p, int node, const QFontMetrics& fm) const;
    [[nodiscard]] QColor frameColor(int node) const;
    [[nodiscard]] QString tooltipHtml(int node) const;
    [[nodiscard]] bool isAncestorOfZoom(int node) const;

    std::shared_ptr<const model::Trace> m_trace;
    analysis::FlameGraph m_graph;
    int m_zoom = 0;
    int m_hover = -1;
    std::vector<QRectF> m_rects;   // per node; empty when not laid out
    std::vector<int32_t> m_frames; // nodes to draw (at least kMinFrameWidth wide)
    QString m_search;
    std::vector<char> m_match; // per node, when searching
    int64_t m_matchedTotalNs = 0;
    int m_matchedCount = 0;
    bool m_pressed = false;
    QPoint m_pressPos;
};

} // namespace stallscope::gui
