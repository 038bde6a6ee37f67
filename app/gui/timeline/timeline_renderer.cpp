#include "timeline_renderer.h"

#include "../theme.h"
#include "timeline_search.h"

#include "stallscope/base/text_format.h"
#include "stallscope/model/time_math.h"

#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>

#include <algorithm>
#include <array>
#include <cmath>

namespace stallscope::gui {

using namespace model;

namespace {

constexpr int kLane = TimelineLayout::kLaneHeight;

inline uint32_t nameHash(StringId id) { return id.value * 2654435761u; }

} // namespace

QString TimelineRenderer::formatTime(int64_t ns, int64_t step) {
    return QString::fromStdString(base::formatOffset(ns, step));
}

void TimelineRenderer::paint(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp,
                             const TimelineState& s) {
    m_stats = {};
    const Theme& th = Theme::current();
    p.fillRect(QRect(0, 0, vp.width, vp.height), th.background);
    if (!layout.trace() || !layout.index()) return;
    const SceneFrame frame = buildFrame(layout, vp, s);
    m_stats.slicesDrawn = frame.list.slices;
    m_stats.mergedBlocks = frame.list.runs;
    m_stats.labels = frame.list.labels;
    m_stats.lanesVisited = frame.list.lanesVisited;
    p.save();
    p.setClipRect(QRect(TimelineViewport::kHeaderWidth, TimelineViewport::kTopHeight, vp.contentWidth(),
                        vp.height - TimelineViewport::kTopHeight));
    paintRows(p, layout, vp);
    paintLanes(p, layout, s, frame);
    paintGraphReplays(p, layout, vp);
    paintOverlays(p, layout, vp, s, frame.list.shades);
    p.restore();
    paintHeaders(p, layout, vp);
    paintRuler(p, layout, vp, s, frame.list.ticks);
    // The bookmarks' flags, over the step band.
    p.save();
    p.setClipRect(
        QRect(TimelineViewport::kHeaderWidth, 0, vp.contentWidth(), TimelineViewport::kTopHeight));
    const QFontMetrics fm = p.fontMetrics();
    for (size_t i = 0; i < s.bookmarks.size(); ++i) {
        const TimelineState::Bookmark& b = s.bookmarks[i];
        const double x = vp.xOf(b.ns);
        if (x < TimelineViewport::kHeaderWidth - 200 || x > vp.width) continue;
        // A flag stops short of the next one (in time order).
        const double room =
            i + 1 < s.bookmarks.size() ? vp.xOf(s.bookmarks[i + 1].ns) - x - 10 : 180;
        const QString text = fm.elidedText(QStringLiteral("⚑ ") + b.label, Qt::ElideRight,
                                           int(std::clamp(room, 12.0, 180.0)));
        const QRectF flag(x, TimelineViewport::kRulerHeight, fm.horizontalAdvance(text) + 8,
                          TimelineViewport::kStepBandHeight);
        p.fillRect(flag, th.selection);
        p.setPen(Qt::white);
        p.drawText(flag.adjusted(4, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, text);
    }
    p.restore();
}

TimelineRenderer::SceneFrame TimelineRenderer::buildFrame(const TimelineLayout& layout,
                                                          const TimelineViewport& vp,
                                                          const TimelineState& s) {
    SceneFrame f;
    scene::SceneRequest rq;
    rq.viewport = vp.scene();
    rq.origin = s.timeOrigin;
    rq.shaded = &s.shaded;
    const int top = vp.scrollY, bottom = vp.scrollY + vp.height - TimelineViewport::kTopHeight;
    const auto& rows = layout.rows();
    for (int ri = std::max(0, layout.rowAt(top)); ri >= 0 && ri < static_cast<int>(rows.size());
         ++ri) {
        const TimelineRow& r = rows[static_cast<size_t>(ri)];
        if (!r.visible) continue;
        if (r.y >= bottom) break;
        if (r.kind != RowKind::Slices) continue;
        const int y = vp.yOf(r.y) + 2;
        // The lanes on screen: [first, last).
        int first = 0, last = r.lanes;
        while (first < last && y + first * kLane + kLane < TimelineViewport::kTopHeight) ++first;
        while (last > first && y + (last - 1) * kLane > vp.height) --last;
        if (first == last) continue;
        rq.rows.push_back({r.laneTrack, last, first});
        f.laneTop.push_back(y);
    }
    f.list = scene::buildScene(*layout.trace(), *layout.index(), rq);
    f.rows = std::move(rq.rows);
    return f;
}

void TimelineRenderer::paintRows(QPainter& p, const TimelineLayout& layout,
                                 const TimelineViewport& vp) {
    const Theme& th = Theme::current();
    const int top = vp.scrollY, bottom = vp.scrollY + vp.height - TimelineViewport::kTopHeight;
    const auto& rows = layout.rows();
    int alt = 0;
    for (int ri = std::max(0, layout.rowAt(top)); ri >= 0 && ri < static_cast<int>(rows.size()); ++ri) {
        const TimelineRow& r = rows[static_cast<size_t>(ri)];
        if (!r.visible) continue;
        if (r.y >= bottom) break;
        const int y = vp.yOf(r.y);
        const QRect band(TimelineViewport::kHeaderWidth, y, vp.contentWidth(), r.height);
        if (r.kind == RowKind::Group) {
            p.fillRect(band, th.headerBackground);
            alt = 0;
            continue;
        }
        p.fillRect(band, (alt++ % 2) ? th.trackAlternate : th.trackBackground);
        p.setPen(th.grid);
        p.drawLine(band.left(), band.bottom(), band.right(), band.bottom());
        if (r.kind == RowKind::Counter)
            paintCounter(p, layout.counters()[static_cast<size_t>(r.counter)], vp, y + 3,
                         r.height - 6);
    }
}

/// The scene's lane items: slices in their colour with their label when the scene gives
/// them one, runs of narrow slices as one darker block.
void TimelineRenderer::paintLanes(QPainter& p, const TimelineLayout& layout, const TimelineState& s,
                                  const SceneFrame& f) {
    const Trace& t = *layout.trace();
    const SliceTable& sl = t.slices();
    const Theme& th = Theme::current();
    const TimelineSearchResult* search = s.search.get();
    const QFontMetrics fm(p.font());
    const int h = kLane - 2;
    const QColor labelColor = th.dark ? QColor(240, 240, 240) : QColor(20, 20, 24);
    for (const scene::LaneDraw& item : f.list.items) {
        const int y = f.laneTop[item.row] + item.lane * kLane;
        const uint32_t idx = item.slice;
        const QRectF r(item.x0, y, item.x1 - item.x0, h);
        if (!item.merged) {
            p.fillRect(r, sliceColor(t, SliceId(idx)));
            if (search && search->matches(sl.name[idx])) {
                p.setPen(QPen(th.searchMatch, 2));
                p.drawRect(r.adjusted(1, 1, -1, -1));
            }
            if (item.labelled) {
                const std::string_view name = t.str(sl.name[idx]);
                const QString text = QString::fromUtf8(name.data(), static_cast<qsizetype>(std::min<size_t>(name.size(), 300)));
                p.setPen(labelColor);
                p.drawText(r.adjusted(4, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           fm.elidedText(text, Qt::ElideRight, static_cast<int>(r.width()) - 7));
            }
            continue;
        }
        // A merged run is coloured by the kind that holds most of its time (16 evenly spaced
        // samples bound the work), not by its first event: at fit-all a stream of kernels with
        // a copy first is kernel-coloured.
        uint32_t shown = idx;
        if (item.last > item.first + 1) { // [first, last) of the lane
            const auto& lane = layout.lane(f.rows[item.row].track, item.lane);
            std::array<int64_t, static_cast<size_t>(model::EventKind::Count)> byKind{};
            std::array<uint32_t, static_cast<size_t>(model::EventKind::Count)> example{};
            constexpr size_t kSamples = 16;
            const size_t span = item.last - item.first - 1;
            for (size_t k = 0; k < kSamples; ++k) {
                const uint32_t j = lane[item.first + span * k / (kSamples - 1)];
                const auto kind = static_cast<size_t>(sl.kind[j]);
                if (kind >= byKind.size()) continue;
                byKind[kind] += std::max<int64_t>(1, sl.dur[j]);
                example[kind] = j;
            }
            const size_t best =
                size_t(std::max_element(byKind.begin(), byKind.end()) - byKind.begin());
            if (byKind[best] > 0) shown = example[best];
        }
        QColor c = th.eventColor(sl.kind[shown], nameHash(sl.name[shown]));
        c = th.dark ? c.lighter(115) : c.darker(112);
        p.fillRect(r, c);
        if (search && search->anyIn(f.rows[item.row].track, item.lane, item.first, item.last))
            p.fillRect(QRectF(r.left(), y + h - 3, r.width(), 3), th.searchMatch);
    }
}

void TimelineRenderer::paintCounter(QPainter& p, const CounterSeries& c, const TimelineViewport& vp, int y, int h) {
    const Theme& th = Theme::current();
    const int x0 = TimelineViewport::kHeaderWidth, x1 = vp.width;
    QColor fill = c.kind == CounterKind::Utilization ? QColor(46, 160, 90)
                  : c.kind == CounterKind::Memory
                      ? (c.reserved ? QColor(110, 110, 190) : QColor(52, 120, 200))
                      : QColor(155, 89, 182);
    QColor line = fill;
    fill.setAlpha(th.dark ? 110 : 90);
    // One value per pixel column; the area is filled as runs of equal-height columns and
    // outlined with a cosmetic polyline (filling a 2000-point path costs ~10x more).
    const int n = std::max(0, x1 - x0);
    QPolygonF outline;
    outline.reserve(n);
    int runStart = x0;
    double runH = -1;
    auto flush = [&](int xEnd) {
        if (runH > 0) p.fillRect(QRectF(runStart, y + h - runH, xEnd - runStart, runH), fill);
    };
    size_t hint = 0;  // the series is swept left to right: each lookup gallops from the last
    int64_t busyA = c.kind == CounterKind::Utilization ? c.busyBefore(vp.nsAt(x0), hint) : 0;
    double v = 0;
    for (int x = x0; x < x1; ++x) {
        const int64_t a = vp.nsAt(x), b = vp.nsAt(x + 1);
        if (b > a) {  // else a pixel narrower than 1 ns: it repeats its neighbour
            if (c.kind == CounterKind::Utilization) {
                const int64_t busyB = c.busyBefore(b, hint);
                v = double(busyB - busyA) / double(b - a);
                busyA = busyB;
            } else {
                v = c.maxWithin(a, b, hint) / std::max(1e-9, c.maxValue);
            }
        }
        const double hv = std::round(std::clamp(v, 0.0, 1.0) * h);
        if (hv != runH) {
            flush(x);
            runStart = x;
            runH = hv;
        }
        outline << QPointF(x + 0.5, y + h - hv);
    }
    flush(x1);
    p.setPen(QPen(line, 0));
    p.drawPolyline(outline);
    p.setPen(th.mutedText);
    // The top of the row's scale, said as one (not a value at this time): the utilisation's
    // scale is 0-100 %, a counter's top is its peak over the trace.
    QString top = c.kind == CounterKind::Utilization
                      ? QCoreApplication::translate("TimelineView", "scale 0–100%")
                      : QCoreApplication::translate("TimelineView", "peak %1")
                            .arg(QString::number(c.maxValue, 'f', c.maxValue < 10 ? 1 : 0) + " " +
                                 QString::fromStdString(c.unit));
    p.drawText(QRect(x0 + 4, y - 2, 200, 14), Qt::AlignLeft | Qt::AlignTop, top);
}

void TimelineRenderer::paintGraphReplays(QPainter& p, const TimelineLayout& layout,
                                         const TimelineViewport& vp) {
    const scene::TimelineIndex& index = *layout.index();
    if (index.graphReplays.empty()) return;
    const Theme& th = Theme::current();
    const QColor edge = th.dark ? QColor(190, 150, 255) : QColor(120, 70, 190);
    QFont small = p.font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
    const QFontMetrics fm(small);
    const int top = vp.scrollY, bottom = vp.scrollY + vp.height - TimelineViewport::kTopHeight;
    const auto& rows = layout.rows();
    p.save();
    p.setFont(small);
    for (int ri = std::max(0, layout.rowAt(top)); ri >= 0 && ri < static_cast<int>(rows.size());
         ++ri) {
        const TimelineRow& r = rows[static_cast<size_t>(ri)];
        if (!r.visible || r.kind != RowKind::Slices) continue;
        if (r.y >= bottom) break;
        if (layout.trace()->track(r.track).kind != model::TrackKind::GpuStream) continue;
        const int y = vp.yOf(r.y);
        for (const scene::ReplayDraw& d : scene::placeReplays(index, r.laneTrack, vp.scene())) {
            const model::GraphReplay& g = index.graphReplays[d.replay];
            const QRectF box(d.x0, y + 1, d.x1 - d.x0, r.height - 3);
            p.setPen(QPen(edge, 1, Qt::DashLine));
            p.setBrush(Qt::NoBrush);
            p.drawRect(box);
            const QString label =
                g.graphId >= 0
                    ? QCoreApplication::translate("TimelineView", "graph %1").arg(g.graphId)
                    : QCoreApplication::translate("TimelineView", "graph replay");
            const int w = fm.horizontalAdvance(label) + 6;
            if (box.width() < w + 8) continue;
            const QRectF tag(box.right() - w - 1, box.bottom() - fm.height(), w, fm.height());
            p.fillRect(tag, th.dark ? QColor(40, 30, 60, 220) : QColor(245, 238, 255, 230));
            p.setPen(edge);
            p.drawText(tag, Qt::AlignCenter, label);
        }
    }
    p.restore();
}

void TimelineRenderer::paintOverlays(QPainter& p, const TimelineLayout& layout,
                                     const TimelineViewport& vp, const TimelineState& s,
                                     const std::vector<scene::Shade>& shades) {
    const Theme& th = Theme::current();
    const int contentTop = TimelineViewport::kTopHeight;
    // The selected finding's ranges (placed by the scene), on the rows they concern.
    if (!shades.empty()) {
        const QColor shade = th.findingShade();
        QColor edge = shade;
        edge.setAlpha(200);
        for (const scene::Shade& sh : shades) {
            const double a = sh.x0, w = sh.x1 - sh.x0;
            if (s.shadedRows.empty()) {
                p.fillRect(QRectF(a, contentTop, w, vp.height - contentTop), shade);
            } else {
                for (int ri : s.shadedRows) {
                    const TimelineRow& r = layout.rows()[static_cast<size_t>(ri)];
                    if (!r.visible || r.height == 0) continue;
                    p.fillRect(QRectF(a, vp.yOf(r.y), w, r.height), shade);
                }
            }
            p.setPen(QPen(edge, 1, Qt::DashLine));
            p.drawLine(QPointF(a, contentTop), QPointF(a, vp.height));
            p.drawLine(QPointF(a + w, contentTop), QPointF(a + w, vp.height));
            if (sh.labelled && !s.shadeLabel.isEmpty()) {
                QRectF lr(a + 3, contentTop + 2, std::min(w - 6, 360.0), 16);
                p.fillRect(lr, th.dark ? QColor(60, 20, 20, 200) : QColor(255, 235, 232, 230));
                p.setPen(th.dark ? QColor(255, 180, 170) : QColor(160, 30, 20));
                p.drawText(lr.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           QFontMetrics(p.font()).elidedText(s.shadeLabel, Qt::ElideRight, int(lr.width()) - 6));
            }
        }
    }
    if (s.hasRange) {
        const double a = vp.xOf(s.rangeStart), b = vp.xOf(s.rangeEnd);
        p.fillRect(QRectF(a, contentTop, std::max(1.0, b - a), vp.height - contentTop), th.rangeSelection);
    }
    // Bookmarks: a dashed line down the tracks and a flag with the label on the ruler.
    for (const TimelineState::Bookmark& b : s.bookmarks) {
        const double x = vp.xOf(b.ns);
        if (x < TimelineViewport::kHeaderWidth || x > vp.width) continue;
        QPen pen(th.selection, 1, Qt::DashLine);
        p.setPen(pen);
        p.drawLine(QPointF(x + 0.5, TimelineViewport::kRulerHeight), QPointF(x + 0.5, vp.height));
    }
    if (s.selected.valid()) {
        const QRectF r = sliceRect(layout, vp, s.selected);
        if (r.isValid()) {
            p.setPen(QPen(th.selection, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(r.adjusted(-1, -1, 1, 1));
        }
        // Launch <-> GPU work arrow.
        const Trace& t = *layout.trace();
        SliceId from, to;
        if (isGpuSide(t.slices().kind[s.selected.index()])) {
            from = t.launchOf(s.selected);
            to = s.selected;
        } else if (isLaunchSide(t.slices().kind[s.selected.index()])) {
            const auto work = t.gpuWorkOf(s.selected);
            from = s.selected;
            if (!work.empty()) to = work.front().slice;
        }
        if (from.valid() && to.valid()) {
            const QRectF a = sliceRect(layout, vp, from), b = sliceRect(layout, vp, to);
            if (a.isValid() && b.isValid()) {
                const QPointF pa(a.left(), a.center().y()), pb(b.left(), b.center().y());
                QPainterPath path(pa);
                path.cubicTo(pa + QPointF(30, 0), pb - QPointF(30, 0), pb);
                p.setRenderHint(QPainter::Antialiasing, true);
                p.setPen(QPen(th.flowArrow, 1.6));
                p.drawPath(path);
                const QPointF dir(1, 0);
                QPolygonF head;
                head << pb << pb - QPointF(7, 4) << pb - QPointF(7, -4);
                p.setBrush(th.flowArrow);
                p.drawPolygon(head);
                p.setRenderHint(QPainter::Antialiasing, false);
                (void)dir;
            }
        }
    }
}

void TimelineRenderer::paintHeaders(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp) {
    const Theme& th = Theme::current();
    const int W = TimelineViewport::kHeaderWidth;
    p.fillRect(QRect(0, TimelineViewport::kTopHeight, W, vp.height), th.headerBackground);
    p.save();
    p.setClipRect(QRect(0, TimelineViewport::kTopHeight, W, vp.height - TimelineViewport::kTopHeight));
    const int top = vp.scrollY, bottom = vp.scrollY + vp.height - TimelineViewport::kTopHeight;
    QFont bold = p.font();
    bold.setBold(true);
    const QFont normal = p.font();
    for (const TimelineRow& r : layout.rows()) {
        if (!r.visible || r.y + r.height < top) continue;
        if (r.y > bottom) break;
        const int y = vp.yOf(r.y);
        if (r.kind == RowKind::Group) {
            const bool collapsed = layout.groups()[static_cast<size_t>(r.group)].collapsed;
            p.fillRect(QRect(0, y, vp.width, r.height), th.headerBackground);
            p.setPen(th.text);
            p.setFont(bold);
            QPolygon tri;
            if (collapsed) tri << QPoint(8, y + 7) << QPoint(14, y + 12) << QPoint(8, y + 17);
            else tri << QPoint(6, y + 9) << QPoint(16, y + 9) << QPoint(11, y + 15);
            p.setBrush(th.mutedText);
            p.setPen(Qt::NoPen);
            p.drawPolygon(tri);
            p.setPen(th.text);
            p.drawText(QRect(22, y, W - 26, r.height), Qt::AlignVCenter | Qt::AlignLeft,
                       QFontMetrics(bold).elidedText(r.label, Qt::ElideRight, W - 28));
            p.setFont(normal);
            continue;
        }
        p.setPen(th.text);
        const QRect box(16, y, W - 20, std::min(r.height, 20));
        p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft, QFontMetrics(normal).elidedText(r.label, Qt::ElideRight, box.width()));
        if (!r.sublabel.isEmpty() && r.height >= 36) {
            p.setPen(th.mutedText);
            p.drawText(QRect(16, y + 18, W - 20, 16), Qt::AlignVCenter | Qt::AlignLeft, r.sublabel);
        }
        if (r.kind == RowKind::Slices && r.allLanes > TimelineLayout::kOpenCpuLanes &&
            r.height >= 54) {
            // A deep stack folded (or unfolded) by a click on the name.
            p.setPen(th.mutedText);
            p.drawText(
                QRect(16, y + 34, W - 20, 16), Qt::AlignVCenter | Qt::AlignLeft,
                r.lanes < r.allLanes
                    ? QCoreApplication::translate("TimelineView", "%1 of %2 levels · click for all")
                          .arg(r.lanes)
                          .arg(r.allLanes)
                    : QCoreApplication::translate("TimelineView", "%1 levels · click to fold")
                          .arg(r.allLanes));
        }
        if (r.kind == RowKind::Slices && r.laneTrack != r.track) {
            // Operators only: said under the name (the row's menu or View brings frames back).
            const int line = r.allLanes > TimelineLayout::kOpenCpuLanes ? 50 : 34;
            if (r.height >= line + 16) {
                p.setPen(th.mutedText);
                p.drawText(
                    QRect(16, y + line, W - 20, 16), Qt::AlignVCenter | Qt::AlignLeft,
                    QCoreApplication::translate("TimelineView", "operators only (no Python)"));
            }
        }
        p.setPen(th.grid);
        p.drawLine(0, y + r.height - 1, W, y + r.height - 1);
    }
    p.restore();
    p.setPen(th.grid);
    p.drawLine(W - 1, TimelineViewport::kTopHeight, W - 1, vp.height);
}

void TimelineRenderer::paintRuler(QPainter& p, const TimelineLayout& layout,
                                  const TimelineViewport& vp, const TimelineState& s,
                                  const scene::Ticks& ticks) {
    const Theme& th = Theme::current();
    const int W = TimelineViewport::kHeaderWidth, RH = TimelineViewport::kRulerHeight;
    p.fillRect(QRect(0, 0, vp.width, TimelineViewport::kTopHeight), th.ruler);
    // Legend in the corner.
    int lx = 8, ly = 5;
    QFont small = p.font();
    small.setPointSizeF(std::max(6.5, small.pointSizeF() - 1.5));
    p.setFont(small);
    const QFontMetrics fm(small);
    for (const LegendEntry& e : legendEntries()) {
        const int w = fm.horizontalAdvance(e.label) + 16;
        if (lx + w > W - 4) {
            lx = 8;
            ly += 14;
            if (ly > TimelineViewport::kTopHeight - 12) break;
        }
        p.fillRect(QRect(lx, ly + 2, 9, 9), th.kindColor(e.kind));
        p.setPen(th.mutedText);
        p.drawText(QRect(lx + 12, ly, w, 13), Qt::AlignVCenter | Qt::AlignLeft, e.label);
        lx += w + 4;
    }
    // Ticks.
    p.save();
    p.setClipRect(QRect(W, 0, vp.contentWidth(), TimelineViewport::kTopHeight));
    p.setPen(th.mutedText);
    for (const scene::Tick& tick : ticks.major) {
        p.drawLine(QPointF(tick.x, RH - 7), QPointF(tick.x, RH));
        p.drawText(QRectF(tick.x + 3, 2, 120, RH - 6), Qt::AlignLeft | Qt::AlignVCenter,
                   formatTime(tick.rel, ticks.step));
    }
    for (double x : ticks.minor) p.drawLine(QPointF(x, RH - 3), QPointF(x, RH));
    // Steps band.
    if (const analysis::AnalysisResult* a = layout.analysis()) {
        const QRect band(W, RH, vp.contentWidth(), TimelineViewport::kStepBandHeight);
        int k = 0;
        for (const auto& st : a->steps) {
            const double x0 = vp.xOf(st.startNs), x1 = vp.xOf(st.endNs);
            if (x1 < W || x0 > vp.width) {
                ++k;
                continue;
            }
            const QRectF r(x0, band.top() + 1, std::max(1.0, x1 - x0), band.height() - 2);
            p.fillRect(r, (k++ % 2) ? th.stepBand : th.stepBand.darker(th.dark ? 80 : 106));
            if (r.width() > 44) {
                p.setPen(th.text);
                p.drawText(r.adjusted(4, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                           fm.elidedText(QString("ProfilerStep#%1").arg(st.number), Qt::ElideRight, int(r.width()) - 6));
            }
        }
    }
    if (s.hasRange) {
        const double a = vp.xOf(s.rangeStart), b = vp.xOf(s.rangeEnd);
        p.fillRect(QRectF(a, 0, std::max(1.0, b - a), RH), th.rangeSelection.darker(110));
    }
    p.restore();
    p.setPen(th.grid);
    p.drawLine(0, TimelineViewport::kTopHeight - 1, vp.width, TimelineViewport::kTopHeight - 1);
}

QRectF TimelineRenderer::sliceRect(const TimelineLayout& layout, const TimelineViewport& vp, SliceId slice) {
    if (!slice.valid() || !layout.trace()) return {};
    const SliceTable& sl = layout.trace()->slices();
    const int ri = layout.rowOfTrack(sl.track[slice.index()]);
    if (ri < 0) return {};
    const TimelineRow& r = layout.rows()[static_cast<size_t>(ri)];
    if (!r.visible || r.height == 0) return {};
    // Its lane in the lane set the row draws (none: a Python frame of an operators-only row).
    const int depth = layout.index()->laneOf(sl, r.laneTrack, slice.index());
    if (depth < 0) return {};
    const int lane = std::min(depth, r.lanes - 1);
    const double x0 = vp.xOf(sl.start[slice.index()]);
    const double x1 = std::max(x0 + 2, vp.xOf(satAdd(sl.start[slice.index()], sl.dur[slice.index()])));
    return QRectF(x0, vp.yOf(r.y) + 2 + lane * kLane, x1 - x0, kLane - 2);
}

SliceId TimelineRenderer::hitTest(const TimelineLayout& layout, const TimelineViewport& vp, double x, double y) {
    if (!layout.trace() || x < TimelineViewport::kHeaderWidth || y < TimelineViewport::kTopHeight) return {};
    const int contentY = static_cast<int>(y) - TimelineViewport::kTopHeight + vp.scrollY;
    const int ri = layout.rowAt(contentY);
    if (ri < 0) return {};
    const TimelineRow& r = layout.rows()[static_cast<size_t>(ri)];
    if (r.kind != RowKind::Slices) return {};
    const int lane = (contentY - r.y - 2) / kLane;
    if (lane < 0 || lane >= r.lanes) return {};
    const SliceTable& sl = layout.trace()->slices();
    const std::vector<uint32_t>& ln = layout.lane(r.laneTrack, lane);
    const int64_t t = vp.nsAt(x);
    const int64_t tol = nsFromDouble(3 * vp.nsPerPx);
    auto it = std::upper_bound(ln.begin(), ln.end(), t, [&sl](int64_t v, uint32_t i) { return v < sl.start[i]; });
    SliceId best;
    int64_t bestDist = satAdd(tol, 1);
    for (auto c : {it, it == ln.begin() ? it : std::prev(it)}) {
        if (c == ln.end()) continue;
        const int64_t s0 = sl.start[*c], s1 = satAdd(s0, sl.dur[*c]);
        const int64_t dist = t < s0 ? satSub(s0, t) : t > s1 ? satSub(t, s1) : 0;
        if (dist < bestDist) best = SliceId(*c), bestDist = dist;
    }
    return best;
}

QColor TimelineRenderer::sliceColor(const Trace& t, SliceId slice) {
    const SliceTable& sl = t.slices();
    return Theme::current().eventColor(sl.kind[slice.index()], nameHash(sl.name[slice.index()]));
}

} // namespace stallscope::gui
