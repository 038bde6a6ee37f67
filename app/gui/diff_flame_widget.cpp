#include "diff_flame_widget.h"

#include "theme.h"

#include "stallscope/reports/svg.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace stallscope::gui {

using analysis::DiffFlameNode;

namespace {
double meanNs(const DiffFlameNode& n) {
    return 0.5 * double(n.beforeNs + n.afterNs);
}
} // namespace

DiffFlameWidget::DiffFlameWidget(QWidget* parent) : QWidget(parent) {
    setObjectName("diffFlame");
    setMouseTracking(true);
    setMinimumHeight(120);
}

void DiffFlameWidget::setGraph(analysis::DiffFlameGraph graph) {
    m_graph = std::move(graph);
    m_zoom = 0;
    layoutFrames();
    updateGeometry();
    update();
}

QSize DiffFlameWidget::sizeHint() const {
    return {800, (m_graph.maxDepth + 2) * kRowHeight};
}

void DiffFlameWidget::zoomTo(int node) {
    if (node < 0 || size_t(node) >= m_graph.nodes.size()) node = 0;
    m_zoom = node;
    layoutFrames();
    update();
}

void DiffFlameWidget::layoutFrames() {
    m_rects.assign(m_graph.nodes.size(), QRectF());
    if (m_graph.empty()) return;
    const DiffFlameNode& z = m_graph.nodes[size_t(m_zoom)];
    if (meanNs(z) <= 0) return;
    const double scale = double(width()) / meanNs(z);
    // The zoomed frame's ancestors span the width above it (as context), then its subtree.
    for (int a = z.parent; a >= 0; a = m_graph.nodes[size_t(a)].parent)
        m_rects[size_t(a)] =
            QRectF(0, (m_graph.nodes[size_t(a)].depth) * kRowHeight, width(), kRowHeight - 1);
    struct Item {
        int node;
        double x;
    };
    std::vector<Item> todo{{m_zoom, 0}};
    while (!todo.empty()) {
        const Item it = todo.back();
        todo.pop_back();
        const DiffFlameNode& n = m_graph.nodes[size_t(it.node)];
        const double w = meanNs(n) * scale;
        if (w < 1.0) continue;
        m_rects[size_t(it.node)] = QRectF(it.x, n.depth * kRowHeight, w, kRowHeight - 1);
        double cx = it.x;
        for (int32_t c : n.children) {
            todo.push_back({c, cx});
            cx += meanNs(m_graph.nodes[size_t(c)]) * scale;
        }
    }
}

QRectF DiffFlameWidget::frameRect(int node) const {
    return node >= 0 && size_t(node) < m_rects.size() ? m_rects[size_t(node)] : QRectF();
}

int DiffFlameWidget::frameAt(QPointF pos) const {
    for (size_t i = m_rects.size(); i-- > 0;)
        if (!m_rects[i].isEmpty() && m_rects[i].contains(pos)) return int(i);
    return -1;
}

void DiffFlameWidget::resizeEvent(QResizeEvent*) {
    layoutFrames();
}

void DiffFlameWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const Theme& th = Theme::current();
    p.fillRect(rect(), th.background);
    if (m_graph.empty()) {
        p.setPen(th.mutedText);
        p.drawText(rect(), Qt::AlignCenter, tr("Neither run has GPU work to compare."));
        return;
    }
    const QFontMetricsF fm(font());
    for (size_t i = 0; i < m_rects.size(); ++i) {
        const QRectF& r = m_rects[i];
        if (r.isEmpty()) continue;
        const DiffFlameNode& n = m_graph.nodes[i];
        const uint32_t rgb = reports::diffFlameRgb(n.beforeNs, n.afterNs);
        p.fillRect(r.adjusted(0, 0, -0.5, 0),
                   QColor(int(rgb >> 16), int((rgb >> 8) & 0xFF), int(rgb & 0xFF)));
        if (r.width() > 30) {
            p.setPen(QColor(0x11, 0x11, 0x11));
            const QString name =
                fm.elidedText(QString::fromStdString(n.name), Qt::ElideRight, r.width() - 6);
            p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, name);
        }
    }
}

void DiffFlameWidget::mousePressEvent(QMouseEvent* e) {
    const int node = frameAt(e->position());
    if (node < 0) return;
    zoomTo(node == m_zoom ? m_graph.nodes[size_t(node)].parent : node);
}

bool DiffFlameWidget::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const int node = frameAt(he->pos());
        if (node >= 0)
            QToolTip::showText(
                he->globalPos(),
                QString::fromStdString(reports::diffFlameTitle(m_graph.nodes[size_t(node)])), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace stallscope::gui
