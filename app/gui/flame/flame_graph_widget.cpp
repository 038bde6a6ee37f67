#include "flame_graph_widget.h"

#include "gui_text.h"
#include "theme.h"

#include "stallscope/base/loop_guard.h"

#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace stallscope::gui {

using analysis::FlameGraph;
using analysis::FlameNode;

namespace {

constexpr int kMinLabelWidth = 28; // px: narrower frames get no label
constexpr int kMaxNameChars = 400; // kernel names can be kilobytes of templates
constexpr double kFadeToBackground = 0.62;

QColor blend(const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
                            float(a.greenF() * (1 - t) + b.greenF() * t),
                            float(a.blueF() * (1 - t) + b.blueF() * t));
}

QString percent(int64_t part, int64_t whole) {
    if (whole <= 0) return QStringLiteral("–");
    const double share = double(part) / double(whole);
    return QString::number(share * 100, 'f', share < 0.001 ? 2 : 1) + QStringLiteral(" %");
}

} // namespace

FlameGraphWidget::FlameGraphWidget(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::MinimumExpanding);
}

void FlameGraphWidget::setGraph(std::shared_ptr<const model::Trace> trace, FlameGraph graph) {
    m_trace = std::move(trace);
    m_graph = std::move(graph);
    if (!m_trace) m_graph.nodes.clear(), m_graph.totalNs = 0;
    m_zoom = 0;
    m_hover = -1;
    updateMatches();
    relayout();
    updateGeometry();
    update();
    Q_EMIT zoomChanged(m_zoom);
}

void FlameGraphWidget::zoomTo(int node) {
    if (node < 0 || size_t(node) >= m_graph.nodes.size()) node = 0;
    if (node == m_zoom) return;
    m_zoom = node;
    relayout();
    update();
    Q_EMIT zoomChanged(m_zoom);
}

void FlameGraphWidget::zoomOut() {
    if (m_zoom > 0) zoomTo(m_graph.nodes[size_t(m_zoom)].parent);
}

void FlameGraphWidget::setSearch(const QString& text) {
    if (text == m_search) return;
    m_search = text;
    updateMatches();
    update();
}

void FlameGraphWidget::updateMatches() {
    m_match.clear();
    m_matchedTotalNs = 0;
    m_matchedCount = 0;
    if (m_search.isEmpty() || m_graph.nodes.empty()) return;
    const size_t n = m_graph.nodes.size();
    m_match.assign(n, 0);
    std::vector<char> covered(n, 0);           // a match at or above the node
    std::unordered_map<uint32_t, char> byName; // nodes share names: test each name once
    for (size_t i = 0; i < n; ++i) {
        const FlameNode& nd = m_graph.nodes[i];
        if (i == 0 || !nd.name.valid()) { // "all", "(no launch call)"
            m_match[i] = nodeName(int(i)).contains(m_search, Qt::CaseInsensitive);
        } else {
            auto [it, fresh] = byName.try_emplace(nd.name.value, 0);
            if (fresh) it->second = nodeName(int(i)).contains(m_search, Qt::CaseInsensitive);
            m_match[i] = it->second;
        }
        const bool above = nd.parent >= 0 && covered[size_t(nd.parent)];
        covered[i] = m_match[i] || above;
        if (!m_match[i]) continue;
        ++m_matchedCount;
        if (!above) m_matchedTotalNs += nd.totalNs;
    }
}

QRectF FlameGraphWidget::frameRect(int node) const {
    return node >= 0 && size_t(node) < m_rects.size() ? m_rects[size_t(node)] : QRectF();
}

int FlameGraphWidget::nodeAt(QPointF pos) const {
    for (int32_t f : m_frames)
        if (m_rects[size_t(f)].contains(pos)) return f;
    return -1;
}

QString FlameGraphWidget::nodeName(int node) const {
    if (!m_trace || node < 0 || size_t(node) >= m_graph.nodes.size()) return {};
    const std::string_view s = analysis::flameNodeName(*m_trace, m_graph, node);
    return QString::fromUtf8(s.data(), qsizetype(std::min<size_t>(s.size(), kMaxNameChars)));
}

QSize FlameGraphWidget::sizeHint() const {
    return {800, minimumSizeHint().height()};
}

QSize FlameGraphWidget::minimumSizeHint() const {
    const int rows = m_graph.empty() ? 3 : m_graph.maxDepth + 1;
    return {200, rows * kRowHeight + 1};
}

QString FlameGraphWidget::formatDuration(int64_t ns) { return significantDuration(ns); }

// ---------------------------------------------------------------- layout and painting

void FlameGraphWidget::relayout() {
    const auto& nodes = m_graph.nodes;
    m_rects.assign(nodes.size(), QRectF());
    m_frames.clear();
    const double w = width();
    if (m_graph.empty() || w <= 0) return;
    // The zoomed frame and its ancestors span the width.
    for (int a = m_zoom; a >= 0; a = nodes[size_t(a)].parent) {
        m_rects[size_t(a)] = QRectF(0, nodes[size_t(a)].depth * kRowHeight, w, kRowHeight);
        m_frames.push_back(a);
        if (!STALLSCOPE_ADVANCED(nodes[size_t(a)].parent, a)) break;  // parents come before children
    }
    std::reverse(m_frames.begin(), m_frames.end());
    const int64_t zoomTotal = nodes[size_t(m_zoom)].totalNs;
    if (zoomTotal <= 0) return;
    const double scale = w / double(zoomTotal);
    std::vector<int32_t> stack{m_zoom};
    while (!stack.empty()) {
        const int32_t parent = stack.back();
        stack.pop_back();
        const QRectF pr = m_rects[size_t(parent)];
        double x = pr.left();
        for (int32_t c : nodes[size_t(parent)].children) {
            if (!STALLSCOPE_ADVANCED(parent, c)) continue;  // a child before its parent would cycle
            // Children of a slice that crosses its parent's end may exceed it: clip.
            const double cw = std::min(double(nodes[size_t(c)].totalNs) * scale, pr.right() - x);
            m_rects[size_t(c)] =
                QRectF(x, nodes[size_t(c)].depth * kRowHeight, std::max(0.0, cw), kRowHeight);
            x += std::max(0.0, cw);
            if (cw < kMinFrameWidth) continue;
            m_frames.push_back(c);
            stack.push_back(c);
        }
    }
}

bool FlameGraphWidget::isAncestorOfZoom(int node) const {
    return node >= 0 && node != m_zoom &&
           m_graph.nodes[size_t(node)].depth < m_graph.nodes[size_t(m_zoom)].depth;
}

QColor FlameGraphWidget::frameColor(int node) const {
    const Theme& th = Theme::current();
    const FlameNode& n = m_graph.nodes[size_t(node)];
    if (node == 0 || !n.name.valid()) return th.dark ? QColor(84, 88, 97) : QColor(200, 204, 212);
    const uint64_t h = model::StringPool::hash(m_trace->str(n.name));
    // The kind picks the hue family (CPU ops blue, annotations violet, runtime orange,
    // kernels green, copies amber...), the name a stable variation inside it.
    return th.eventColor(n.kind, uint32_t(h ^ (h >> 32)));
}

void FlameGraphWidget::paintFrame(QPainter& p, int node, const QFontMetrics& fm) const {
    const Theme& th = Theme::current();
    const QRectF& r = m_rects[size_t(node)];
    const int x0 = int(std::lround(r.left()));
    const int x1 = std::max(x0 + 1, int(std::lround(r.right())));
    const QRect box(x0, int(r.top()), std::max(1, x1 - x0 - 1), kRowHeight - 1);
    const bool searching = !m_match.empty();
    const bool matched = searching && m_match[size_t(node)];
    QColor c = frameColor(node);
    if ((searching && !matched) || isAncestorOfZoom(node))
        c = blend(c, th.background, kFadeToBackground);
    if (node == m_hover) c = th.dark ? c.lighter(125) : c.darker(112);
    p.fillRect(box, c);
    if (matched) {
        p.setPen(QPen(th.dark ? th.searchMatch : th.searchMatch.darker(135), 2));
        p.drawRect(QRectF(box).adjusted(1, 1, -1, -1));
    }
    if (node == m_hover) {
        p.setPen(QPen(th.text, 1));
        p.drawRect(box.adjusted(0, 0, -1, -1));
    }
    if (box.width() < kMinLabelWidth) return;
    const QString label = fm.elidedText(nodeName(node), Qt::ElideRight, box.width() - 8);
    if (label.size() <= 1) return;                                  // only the ellipsis would fit
    p.setPen(th.dark ? QColor(240, 241, 244) : QColor(22, 24, 28)); // as the timeline's labels
    p.drawText(box.adjusted(4, 0, -4, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
}

void FlameGraphWidget::paintEvent(QPaintEvent* e) {
    QPainter p(this);
    const Theme& th = Theme::current();
    p.fillRect(e->rect(), th.background);
    if (m_graph.empty()) {
        QString msg = tr("No trace loaded");
        if (m_trace)
            msg = m_graph.mode == analysis::FlameMode::GpuTime
                      ? tr("No GPU work starts in this range")
                      : tr("No CPU activity starts in this range");
        p.setPen(th.mutedText);
        p.drawText(rect(), Qt::AlignCenter, msg);
        return;
    }
    const QFontMetrics fm(font());
    for (int32_t f : m_frames)
        if (m_rects[size_t(f)].intersects(QRectF(e->rect()))) paintFrame(p, f, fm);
}

void FlameGraphWidget::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    relayout();
}

// ---------------------------------------------------------------- interaction

void FlameGraphWidget::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::RightButton) {
        zoomOut();
        return;
    }
    m_pressed = e->button() == Qt::LeftButton;
    m_pressPos = e->position().toPoint();
}

void FlameGraphWidget::mouseReleaseEvent(QMouseEvent* e) {
    if (!m_pressed || e->button() != Qt::LeftButton) return;
    m_pressed = false;
    if ((e->position().toPoint() - m_pressPos).manhattanLength() > 4) return;
    const int node = nodeAt(e->position());
    if (node == 0)
        zoomOut();
    else if (node > 0)
        zoomTo(node);
}

void FlameGraphWidget::mouseDoubleClickEvent(QMouseEvent* e) {
    m_pressed = false; // the release that follows is not a click
    const int node = nodeAt(e->position());
    if (e->button() == Qt::LeftButton && node > 0)
        Q_EMIT frameActivated(m_graph.nodes[size_t(node)].name);
}

void FlameGraphWidget::mouseMoveEvent(QMouseEvent* e) {
    setHover(nodeAt(e->position()));
}

void FlameGraphWidget::leaveEvent(QEvent* e) {
    QWidget::leaveEvent(e);
    setHover(-1);
}

void FlameGraphWidget::setHover(int node) {
    if (node == m_hover) return;
    const QRectF old = frameRect(m_hover);
    m_hover = node;
    update(old.toAlignedRect().adjusted(-1, -1, 1, 1));
    update(frameRect(node).toAlignedRect().adjusted(-1, -1, 1, 1));
    if (node >= 0)
        setCursor(Qt::PointingHandCursor);
    else
        unsetCursor();
    Q_EMIT hoveredChanged(node);
}

void FlameGraphWidget::keyPressEvent(QKeyEvent* e) {
    if ((e->key() == Qt::Key_Escape || e->key() == Qt::Key_Backspace) && m_zoom > 0)
        zoomOut();
    else if (e->key() == Qt::Key_Home && m_zoom > 0)
        resetZoom();
    else
        QWidget::keyPressEvent(e);
}

bool FlameGraphWidget::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* he = static_cast<QHelpEvent*>(e);
    const int node = nodeAt(he->pos());
    if (node < 0) {
        QToolTip::hideText();
        e->ignore();
    } else {
        QToolTip::showText(he->globalPos(), tooltipHtml(node), this,
                           frameRect(node).toAlignedRect());
    }
    return true;
}

QString FlameGraphWidget::tooltipHtml(int node) const {
    const FlameNode& n = m_graph.nodes[size_t(node)];
    const int64_t root = m_graph.totalNs, zoomed = m_graph.nodes[size_t(m_zoom)].totalNs;
    QString name = nodeName(node);
    if (name.size() > 160) name = name.left(100) + QStringLiteral(" … ") + name.right(50);
    const QString muted = Theme::current().mutedText.name();
    QString html =
        QStringLiteral(
            "<p style='white-space:pre-wrap'><b>%1</b></p><table cellspacing='0' cellpadding='1'>")
            .arg(name.toHtmlEscaped());
    auto row = [&](const QString& label, const QString& value, const QString& note) {
        html += QStringLiteral(
                    "<tr><td>%1&nbsp;&nbsp;</td><td align='right'>%2</td><td style='color:%3'>"
                    "&nbsp;&nbsp;%4</td></tr>")
                    .arg(label, value, muted, note);
    };
    QString totalNote = percent(n.totalNs, root) + tr(" of all");
    if (m_zoom > 0 && node != m_zoom && !isAncestorOfZoom(node))
        totalNote += tr(", %1 of the zoomed frame").arg(percent(n.totalNs, zoomed));
    row(tr("Total"), formatDuration(n.totalNs), totalNote);
    row(tr("Self"), formatDuration(n.selfNs), percent(n.selfNs, root) + tr(" of all"));
    if (node > 0 && n.name.valid()) {
        const bool context = n.count == 0 && m_graph.mode == analysis::FlameMode::CpuTime;
        row(tr("Count"), context ? QStringLiteral("–") : QLocale().toString(qulonglong(n.count)),
            context ? tr("starts before the range") : QString());
    }
    html += QStringLiteral("</table>");
    if (node > 0 && n.name.valid())
        html += QStringLiteral("<p style='color:%1'>%2</p>")
                    .arg(muted, QString::fromUtf8(model::kindName(n.kind).data(),
                                                  qsizetype(model::kindName(n.kind).size())));
    return html;
}

} // namespace stallscope::gui
