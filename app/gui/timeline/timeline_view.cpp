#include "timeline_view.h"

#include "../gui_text.h"

#include "../theme.h"

#include "stallscope/model/time_math.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace stallscope::gui {

using namespace model;

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(400, 200);
    m_vscroll = new QScrollBar(Qt::Vertical, this);
    connect(m_vscroll, &QScrollBar::valueChanged, this, [this](int v) {
        m_vp.scrollY = v;
        update();
    });
}

void TimelineView::setData(std::shared_ptr<const Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
                           std::shared_ptr<const TimelineIndex> index) {
    m_layout.build(std::move(trace), std::move(analysis), std::move(index));
    if (m_operatorsOnly) m_layout.setAllOperatorsOnly(true);
    m_state = {};
    m_searchJob.cancel();
    m_pendingMatch = PendingMatch::None;
    m_matchIndex = -1;
    m_vp.scrollY = 0;
    if (m_layout.analysis()) m_state.timeOrigin = m_layout.analysis()->window.startNs;
    else if (m_layout.trace()) m_state.timeOrigin = m_layout.trace()->startNs();
    fitAll();
    updateScrollBar();
}

bool TimelineView::showsAll() const {
    return !m_layout.trace() ||
           (m_vp.startNs <= m_layout.startNs() && m_vp.endNs() >= m_layout.endNs());
}

void TimelineView::setLiveData(std::shared_ptr<const Trace> trace,
                               std::shared_ptr<const TimelineIndex> index,
                               std::shared_ptr<const analysis::AnalysisResult> analysis) {
    const bool first = !m_layout.trace();
    const bool following = showsAll();
    std::vector<QString> collapsed;
    for (const TimelineGroup& g : m_layout.groups())
        if (g.collapsed) collapsed.push_back(g.label);
    const TimelineViewport keep = m_vp;
    m_layout.build(std::move(trace), std::move(analysis), std::move(index));
    if (m_operatorsOnly) m_layout.setAllOperatorsOnly(true);
    for (size_t gi = 0; gi < m_layout.groups().size(); ++gi)
        if (std::find(collapsed.begin(), collapsed.end(), m_layout.groups()[gi].label) != collapsed.end())
            m_layout.setCollapsed(int(gi), true);
    m_state.selected = {};  // slice ids are not stable across snapshots
    m_state.search.reset();
    m_state.shaded.clear(); // a finding of the previous snapshot's analysis
    m_state.shadedRows.clear();
    m_state.shadeLabel.clear();
    m_searchJob.cancel();
    m_pendingMatch = PendingMatch::None;
    m_matchIndex = -1;
    if (m_layout.analysis())
        m_state.timeOrigin = m_layout.analysis()->window.startNs;
    else if (first && m_layout.trace())
        m_state.timeOrigin = m_layout.trace()->startNs();
    if (following) {
        fitAll();
    } else {
        m_vp = keep;
        clampView();
    }
    updateScrollBar();
    update();
}

void TimelineView::resizeEvent(QResizeEvent*) {
    const int sw = m_vscroll->sizeHint().width();
    m_vscroll->setGeometry(width() - sw, TimelineViewport::kTopHeight, sw, height() - TimelineViewport::kTopHeight);
    m_vp.width = width() - sw;
    m_vp.height = height();
    updateScrollBar();
}

void TimelineView::updateScrollBar() {
    const int page = std::max(1, height() - TimelineViewport::kTopHeight);
    m_vscroll->setPageStep(page);
    m_vscroll->setSingleStep(TimelineLayout::kLaneHeight * 2);
    m_vscroll->setRange(0, std::max(0, m_layout.totalHeight() - page));
    m_vp.scrollY = m_vscroll->value();
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    m_renderer.paint(p, m_layout, m_vp, m_state);
    // The corner above the scroll bar, next to the ruler.
    p.fillRect(QRect(m_vp.width, 0, width() - m_vp.width, TimelineViewport::kTopHeight), Theme::current().ruler);
    if (!m_layout.trace()) {
        p.setPen(Theme::current().mutedText);
        p.drawText(rect(), Qt::AlignCenter,
                   tr("Open a torch.profiler trace (File ▸ Open, or drop a .json, .json.gz or log folder here)"));
    }
}

void TimelineView::clampView() {
    // Any zoom from 0.01 ns/px to four times the trace; any start that keeps half a screen
    // of the trace in view. Saturating: a trace may span all of int64.
    const double span = std::max(1.0, nsDiff(m_layout.endNs(), m_layout.startNs()));
    const double maxScale = span * 4 / m_vp.contentWidth() + 1;
    m_vp.nsPerPx = std::isfinite(m_vp.nsPerPx) ? std::clamp(m_vp.nsPerPx, TimelineViewport::kMinNsPerPx, maxScale) : maxScale;
    const int64_t half = nsFromDouble(m_vp.nsPerPx * m_vp.contentWidth() / 2);
    const int64_t lo = satSub(m_layout.startNs(), half), hi = satSub(m_layout.endNs(), half);
    m_vp.startNs = std::clamp(m_vp.startNs, lo, std::max(lo, hi));
}

void TimelineView::zoomTo(int64_t lo, int64_t hi, double margin) {
    if (hi <= lo) hi = satAdd(lo, 1000);
    const double span = nsDiff(hi, lo);
    m_vp.nsPerPx = std::max(TimelineViewport::kMinNsPerPx, span * (1 + 2 * margin) / m_vp.contentWidth());
    m_vp.startNs = satSub(lo, nsFromDouble(span * margin));
    clampView();
    update();
    Q_EMIT viewChanged();
}

void TimelineView::zoomBy(double factor, double x) {
    if (!(factor > 0) || !std::isfinite(factor)) return;
    x = std::clamp(x, double(TimelineViewport::kHeaderWidth), double(m_vp.width));
    const int64_t anchor = m_vp.nsAt(x);
    m_vp.nsPerPx = std::max(TimelineViewport::kMinNsPerPx, m_vp.nsPerPx * factor);
    m_vp.startNs = satSub(anchor, nsFromDouble((x - TimelineViewport::kHeaderWidth) * m_vp.nsPerPx));
    clampView();
    update();
    Q_EMIT viewChanged();
}

void TimelineView::panByPixels(double px) {
    m_vp.startNs = satAdd(m_vp.startNs, nsFromDouble(px * m_vp.nsPerPx));
    clampView();
    update();
    Q_EMIT viewChanged();
}

void TimelineView::fitAll() {
    if (const analysis::AnalysisResult* a = m_layout.analysis(); a && a->window.length() > 0)
        zoomTo(a->window.startNs, a->window.endNs, 0.01);
    else
        zoomTo(m_layout.startNs(), m_layout.endNs(), 0.01);
}

void TimelineView::fitSelection() {
    if (m_state.selected.valid()) {
        const SliceTable& s = m_layout.trace()->slices();
        zoomTo(s.start[m_state.selected.index()], s.end(m_state.selected.index()), 0.1);
    } else if (m_state.hasRange) {
        zoomTo(m_state.rangeStart, m_state.rangeEnd, 0.02);
    } else if (!m_state.shaded.empty()) {
        zoomTo(m_state.shaded.front().start, m_state.shaded.back().end, 0.05);
    }
}

void TimelineView::scrollToRow(int row) {
    if (row < 0 || static_cast<size_t>(row) >= m_layout.rows().size()) return;
    const TimelineRow& r = m_layout.rows()[static_cast<size_t>(row)];
    const int page = height() - TimelineViewport::kTopHeight;
    if (r.y < m_vp.scrollY || r.y + std::min(r.height, page) > m_vp.scrollY + page)
        m_vscroll->setValue(std::max(0, r.y - page / 4));
}

void TimelineView::selectSlice(SliceId slice, bool reveal) {
    m_state.selected = slice;
    if (slice.valid() && reveal) {
        const SliceTable& s = m_layout.trace()->slices();
        const TrackId track = s.track[slice.index()];
        const int row = m_layout.rowOfTrack(track);
        if (row >= 0) {
            const int group = m_layout.rows()[static_cast<size_t>(row)].group;
            if (group >= 0 && m_layout.groups()[static_cast<size_t>(group)].collapsed) {
                m_layout.setCollapsed(group, false);
                updateScrollBar();
            }
            scrollToRow(row);
        }
        const int64_t a = s.start[slice.index()], b = s.end(slice.index());
        if (a < m_vp.startNs || b > m_vp.endNs() || nsDiff(b, a) / m_vp.nsPerPx < 4)
            zoomTo(a, std::max(b, satAdd(a, 1000)), std::max(0.1, 2.0));
    }
    update();
    Q_EMIT sliceSelected(slice);
}

void TimelineView::setRange(int64_t lo, int64_t hi) {
    m_state.hasRange = hi > lo;
    m_state.rangeStart = std::min(lo, hi);
    m_state.rangeEnd = std::max(lo, hi);
    update();
    if (m_state.hasRange) Q_EMIT rangeSelected(m_state.rangeStart, m_state.rangeEnd);
}

void TimelineView::clearSelection() {
    m_state.selected = {};
    m_state.hasRange = false;
    update();
    Q_EMIT sliceSelected({});
}

void TimelineView::showFinding(const analysis::Finding* f) {
    m_state.shaded.clear();
    m_state.shadedRows.clear();
    m_state.shadeLabel.clear();
    if (f) {
        m_state.shaded = f->ranges;
        if (f->device >= 0 && !f->ranges.empty()) {
            int64_t lo = f->ranges.front().start, hi = f->ranges.front().end;
            for (const auto& r : f->ranges) lo = std::min(lo, r.start), hi = std::max(hi, r.end);
            m_state.shadedRows = m_layout.rowsForDevice(f->device, lo, hi);
        }
        m_state.shadeLabel = QString::fromStdString(std::string(analysis::findingKindName(f->kind)));
        if (!m_state.shaded.empty()) {
            // Zoom to the finding's largest range, with its neighbours in view.
            auto largest = std::max_element(m_state.shaded.begin(), m_state.shaded.end(),
                                            [](const auto& a, const auto& b) { return a.length() < b.length(); });
            const int64_t span = largest->length();
            zoomTo(largest->start - span / 2, largest->end + span / 2, 0.02);
        }
        if (!m_state.shadedRows.empty()) scrollToRow(m_state.shadedRows.front());
    }
    update();
}

void TimelineView::setOperatorsOnly(bool on) {
    m_operatorsOnly = on;
    m_layout.setAllOperatorsOnly(on);
    clampView();
    updateScrollBar();
    update();
}

void TimelineView::toggleGroup(int group) {
    if (group < 0) return;
    m_layout.setCollapsed(group, !m_layout.groups()[static_cast<size_t>(group)].collapsed);
    updateScrollBar();
    update();
}

void TimelineView::setSearch(const QString& text) {
    m_matchIndex = -1;
    m_state.search.reset();
    m_searchJob.cancel();
    const Trace* t = m_layout.trace();
    if (!t || text.trimmed().isEmpty()) {
        m_pendingMatch = PendingMatch::None;
        update();
        Q_EMIT searchFinished(0);
        return;
    }
    update();
    auto trace = m_layout.sharedTrace();
    auto index = m_layout.index();
    m_searchJob.start(
        [trace, index, needle = text.toStdString()](const std::atomic<bool>& cancel) {
            return searchTimeline(*trace, *index, needle, &cancel);
        },
        [this](std::shared_ptr<const TimelineSearchResult> result) {
            if (!result) return;  // cancelled
            m_state.search = std::move(result);
            update();
            const PendingMatch pending = std::exchange(m_pendingMatch, PendingMatch::None);
            if (pending != PendingMatch::None) nextMatch(pending == PendingMatch::Next);
            Q_EMIT searchFinished(matchCount());
        });
}

void TimelineView::nextMatch(bool forward) {
    if (m_searchJob.busy()) {
        m_pendingMatch = forward ? PendingMatch::Next : PendingMatch::Previous;
        return;
    }
    if (!m_state.search || m_state.search->slices.empty()) return;
    const std::vector<uint32_t>& matches = m_state.search->slices;
    const SliceTable& sl = m_layout.trace()->slices();
    if (m_matchIndex < 0) {
        const int64_t from = m_state.selected.valid() ? sl.start[m_state.selected.index()] : m_vp.nsAt(m_vp.width / 2.0);
        auto it = std::lower_bound(matches.begin(), matches.end(), from,
                                   [&sl](uint32_t i, int64_t v) { return sl.start[i] < v; });
        m_matchIndex = static_cast<int>(it - matches.begin());
        if (!forward) --m_matchIndex;
    } else {
        m_matchIndex += forward ? 1 : -1;
    }
    const int n = static_cast<int>(matches.size());
    m_matchIndex = ((m_matchIndex % n) + n) % n;
    selectSlice(SliceId(matches[static_cast<size_t>(m_matchIndex)]), true);
}

double TimelineView::anchorX() const {
    const QPoint p = mapFromGlobal(QCursor::pos());
    if (rect().contains(p) && p.x() >= TimelineViewport::kHeaderWidth) return p.x();
    return TimelineViewport::kHeaderWidth + m_vp.contentWidth() / 2.0;
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    const QPoint d = e->angleDelta();
    if (e->modifiers() & Qt::ControlModifier) {
        zoomBy(std::pow(0.85, d.y() / 120.0), e->position().x());
    } else if ((e->modifiers() & Qt::ShiftModifier) || std::abs(d.x()) > std::abs(d.y())) {
        panByPixels(-(d.x() ? d.x() : d.y()) / 2.0);
    } else {
        m_vscroll->setValue(m_vscroll->value() - d.y() / 2);
    }
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    setFocus();
    if (e->button() != Qt::LeftButton) return;
    const QPoint pos = e->position().toPoint();
    m_pressPos = pos;
    m_pressStartNs = m_vp.startNs;
    m_pressScrollY = m_vp.scrollY;
    if (pos.x() < TimelineViewport::kHeaderWidth && pos.y() >= TimelineViewport::kTopHeight) {
        const int ri = m_layout.rowAt(pos.y() - TimelineViewport::kTopHeight + m_vp.scrollY);
        if (ri >= 0 && m_layout.rows()[static_cast<size_t>(ri)].kind == RowKind::Group)
            toggleGroup(m_layout.rows()[static_cast<size_t>(ri)].group);
        else if (ri >= 0) { // a thread folded to its first levels: all of them, or back
            const TimelineRow& r = m_layout.rows()[static_cast<size_t>(ri)];
            if (r.kind == RowKind::Slices && r.allLanes > TimelineLayout::kOpenCpuLanes) {
                m_layout.setAllLanes(ri, r.lanes < r.allLanes);
                updateScrollBar();
                update();
            }
        }
        return;
    }
    if (pos.y() < TimelineViewport::kTopHeight || (e->modifiers() & Qt::ShiftModifier)) {
        m_drag = Drag::Range;
        m_rangeAnchor = m_vp.nsAt(pos.x());
        return;
    }
    m_drag = Drag::Pending;
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    const QPoint pos = e->position().toPoint();
    if (m_drag == Drag::Pending && (pos - m_pressPos).manhattanLength() > 4) m_drag = Drag::Pan;
    if (m_drag == Drag::Pan) {
        m_vp.startNs = satSub(m_pressStartNs, nsFromDouble((pos.x() - m_pressPos.x()) * m_vp.nsPerPx));
        clampView();
        m_vscroll->setValue(m_pressScrollY - (pos.y() - m_pressPos.y()));
        update();
        Q_EMIT viewChanged();
    } else if (m_drag == Drag::Range) {
        const int64_t now = m_vp.nsAt(std::max(pos.x(), TimelineViewport::kHeaderWidth));
        m_state.hasRange = true;
        m_state.rangeStart = std::min(now, m_rangeAnchor);
        m_state.rangeEnd = std::max(now, m_rangeAnchor);
        update();
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    const QPoint pos = e->position().toPoint();
    if (m_drag == Drag::Pending) {
        // A click on the steps band zooms to that step; on an event selects it.
        if (pos.y() >= TimelineViewport::kRulerHeight && pos.y() < TimelineViewport::kTopHeight && m_layout.analysis()) {
            const int64_t t = m_vp.nsAt(pos.x());
            const analysis::AnalysisResult& a = *m_layout.analysis();
            for (size_t i = 0; i < a.steps.size(); ++i)
                if (t >= a.steps[i].startNs && t < a.steps[i].endNs) {
                    const auto span = analysis::stepSpan(a.steps, i, a.window.endNs);
                    zoomTo(span.start, span.end, 0.02);
                }
        } else {
            selectSlice(TimelineRenderer::hitTest(m_layout, m_vp, pos.x(), pos.y()), false);
        }
    } else if (m_drag == Drag::Range) {
        if (nsDiff(m_state.rangeEnd, m_state.rangeStart) > 2 * m_vp.nsPerPx)
            setRange(m_state.rangeStart, m_state.rangeEnd);
        else {
            m_state.hasRange = false;
            update();
        }
    }
    m_drag = Drag::None;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
    const SliceId s = TimelineRenderer::hitTest(m_layout, m_vp, e->position().x(), e->position().y());
    if (!s.valid()) return;
    selectSlice(s, false);
    fitSelection();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    switch (e->key()) {
    case Qt::Key_W: zoomBy(0.8, anchorX()); break;
    case Qt::Key_S: zoomBy(1.25, anchorX()); break;
    case Qt::Key_A: panByPixels(-m_vp.contentWidth() * 0.15); break;
    case Qt::Key_D: panByPixels(m_vp.contentWidth() * 0.15); break;
    case Qt::Key_F: fitSelection(); break;
    case Qt::Key_0:
    case Qt::Key_Home: fitAll(); break;
    case Qt::Key_Escape: clearSelection(); break;
    case Qt::Key_Up: m_vscroll->setValue(m_vscroll->value() - TimelineLayout::kLaneHeight * 2); break;
    case Qt::Key_Down: m_vscroll->setValue(m_vscroll->value() + TimelineLayout::kLaneHeight * 2); break;
    case Qt::Key_PageUp: m_vscroll->setValue(m_vscroll->value() - m_vscroll->pageStep()); break;
    case Qt::Key_PageDown: m_vscroll->setValue(m_vscroll->value() + m_vscroll->pageStep()); break;
    default: QWidget::keyPressEvent(e); return;
    }
    e->accept();
}

bool TimelineView::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && m_layout.trace()) {
        auto* he = static_cast<QHelpEvent*>(e);
        const SliceId s = TimelineRenderer::hitTest(m_layout, m_vp, he->pos().x(), he->pos().y());
        if (s.valid()) {
            const Trace& t = *m_layout.trace();
            const SliceTable& sl = t.slices();
            const QString name = QString::fromUtf8(t.str(sl.name[s.index()]).data(),
                                                   static_cast<int>(std::min<size_t>(t.str(sl.name[s.index()]).size(), 400)));
            QToolTip::showText(he->globalPos(),
                               QString("<b>%1</b><br>%2 · %3<br>start %4")
                                   .arg(name.toHtmlEscaped(),
                                        QString::fromStdString(std::string(t.str(sl.category[s.index()]))).toHtmlEscaped(),
                                        durationText(sl.dur[s.index()]),
                                        TimelineRenderer::formatTime(sl.start[s.index()] - m_state.timeOrigin, 1000)),
                               this);
        } else if (const QString readout = counterReadout(
                       m_layout.rowAt(he->pos().y() - TimelineViewport::kTopHeight + m_vp.scrollY),
                       he->pos().x());
                   !readout.isEmpty()) {
            QToolTip::showText(he->globalPos(), readout, this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(e);
}

QString TimelineView::counterReadout(int row, double x) const {
    if (row < 0 || size_t(row) >= m_layout.rows().size() || x < TimelineViewport::kHeaderWidth)
        return {};
    const TimelineRow& r = m_layout.rows()[size_t(row)];
    if (r.kind != RowKind::Counter || r.counter < 0 ||
        size_t(r.counter) >= m_layout.counters().size())
        return {};
    const CounterSeries& c = m_layout.counters()[size_t(r.counter)];
    const int64_t t = m_vp.nsAt(x);
    const QString at = TimelineRenderer::formatTime(t - m_state.timeOrigin, 1000);
    if (c.kind == CounterKind::Utilization) {
        // Over the pixels around the cursor: a single pixel is all or nothing when zoomed in.
        const int64_t lo = m_vp.nsAt(x - 4), hi = std::max(m_vp.nsAt(x + 5), lo + 1);
        const double busy = double(c.busyWithin(lo, hi)) / double(hi - lo);
        return tr("<b>%1</b><br>busy %2 % of the %3 around %4")
            .arg(r.label.toHtmlEscaped(), QString::number(100.0 * busy, 'f', 1),
                 durationText(hi - lo), at);
    }
    const double v = c.valueAt(t);
    const QString unit = QString::fromStdString(c.unit);
    return tr("<b>%1</b><br>%2 %3 at %4 (peak %5 %3)")
        .arg(r.label.toHtmlEscaped(), QString::number(v, 'f', v < 10 ? 1 : 0), unit.toHtmlEscaped(),
             at, QString::number(c.maxValue, 'f', c.maxValue < 10 ? 1 : 0));
}

QMenu* TimelineView::contextMenuAt(QPoint pos) {
    auto* menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const Trace* t = m_layout.trace();
    const int row = m_layout.rowAt(pos.y() - TimelineViewport::kTopHeight + m_vp.scrollY);
    if (t && pos.x() < TimelineViewport::kHeaderWidth && pos.y() >= TimelineViewport::kTopHeight) {
        // A row's name: hide it, move its group.
        auto rowsChanged = [this](const std::vector<int>& newIndex) {
            for (int& r : m_state.shadedRows)
                if (r >= 0 && size_t(r) < newIndex.size()) r = newIndex[size_t(r)];
            clampView();
            updateScrollBar();
            update();
            Q_EMIT viewChanged();
        };
        if (row >= 0) {
            const TimelineRow& r = m_layout.rows()[size_t(row)];
            if (m_layout.canShowOperatorsOnly(row)) {
                // Python frames left out: the operators (and annotations) nested by themselves.
                QAction* ops = menu->addAction(
                    tr("Operators only (hide Python frames)"), this, [this, row, rowsChanged] {
                        const TimelineRow& rr = m_layout.rows()[size_t(row)];
                        m_layout.setOperatorsOnly(row, rr.laneTrack == rr.track);
                        rowsChanged({});
                    });
                ops->setObjectName("rowOperatorsOnly");
                ops->setCheckable(true);
                ops->setChecked(r.laneTrack != r.track);
            }
            if (r.kind != RowKind::Group)
                menu->addAction(tr("Hide this row"), this,
                                [this, row, rowsChanged] {
                                    m_layout.hideRow(row);
                                    rowsChanged({});
                                })
                    ->setObjectName("hideRow");
            if (r.kind != RowKind::Group) {
                menu->addAction(
                        tr("Move this row up"), this,
                        [this, row, rowsChanged] { rowsChanged(m_layout.moveRow(row, -1)); })
                    ->setObjectName("rowUp");
                menu->addAction(tr("Move this row down"), this,
                                [this, row, rowsChanged] { rowsChanged(m_layout.moveRow(row, 1)); })
                    ->setObjectName("rowDown");
            }
            const int group = r.group;
            if (group >= 0) {
                menu->addAction(
                        tr("Move this group to the top"), this,
                        [this, group, rowsChanged] { rowsChanged(m_layout.pinGroup(group)); })
                    ->setObjectName("pinGroup");
                menu->addAction(
                        tr("Move this group up"), this,
                        [this, group, rowsChanged] { rowsChanged(m_layout.moveGroup(group, -1)); })
                    ->setObjectName("groupUp");
                menu->addAction(
                        tr("Move this group down"), this,
                        [this, group, rowsChanged] { rowsChanged(m_layout.moveGroup(group, 1)); })
                    ->setObjectName("groupDown");
            }
        }
        if (const int hidden = m_layout.hiddenRows(); hidden > 0)
            menu->addAction(tr("Show the %n hidden row(s)", nullptr, hidden), this,
                            [this, rowsChanged] {
                                m_layout.showHiddenRows();
                                rowsChanged({});
                            })
                ->setObjectName("showHidden");
        return menu;
    }
    const SliceId s = t ? TimelineRenderer::hitTest(m_layout, m_vp, pos.x(), pos.y()) : SliceId();
    if (s.valid()) {
        const SliceTable& sl = t->slices();
        const std::string_view raw = t->str(sl.name[s.index()]);
        const QString name = QString::fromUtf8(raw.data(), static_cast<qsizetype>(raw.size()));
        const int64_t lo = sl.start[s.index()], hi = lo + std::max<int64_t>(sl.dur[s.index()], 1);
        selectSlice(s, false);
        menu->addAction(tr("Copy name"), this, [name] { QApplication::clipboard()->setText(name); })
            ->setObjectName("copyName");
        menu->addAction(tr("Zoom to event"), this, [this, lo, hi] { zoomTo(lo, hi); })
            ->setObjectName("zoomTo");
        menu->addAction(tr("Select its time as the range"), this,
                        [this, lo, hi] { setRange(lo, hi); })
            ->setObjectName("selectRange");
        menu->addSeparator();
        menu->addAction(tr("Find similar (search for its name)"), this,
                        [this, name] { Q_EMIT searchRequested(name); })
            ->setObjectName("findSimilar");
        const EventKind k = sl.kind[s.index()];
        if (k == EventKind::Kernel || k == EventKind::CpuOp || k == EventKind::Runtime ||
            k == EventKind::Driver)
            menu->addAction(tr("Show in statistics"), this,
                            [this, s] { Q_EMIT statisticsRequested(s); })
                ->setObjectName("showInStatistics");
        menu->addAction(tr("Add a bookmark at its start (M)"), this,
                        [this, lo, name] { addBookmark(lo, name); })
            ->setObjectName("bookmark");
        // Follow the arrows: launch call <-> GPU work, and the trace's other flows.
        std::vector<std::pair<QString, SliceId>> follow;
        if (isGpuSide(k)) {
            if (const SliceId l = t->launchOf(s); l.valid())
                follow.emplace_back(tr("Go to its launch call"), l);
        } else if (isLaunchSide(k)) {
            for (const auto& w : t->gpuWorkOf(s)) {
                follow.emplace_back(tr("Go to the GPU work it launched"), w.slice);
                break;
            }
        }
        size_t flows = 0;
        for (const Flow& f : t->flows()) {
            if (flows >= 8) break;
            const SliceId other = f.from == s ? f.to : f.to == s ? f.from : SliceId();
            if (!other.valid() || f.kind == FlowKind::Launch) continue;
            const std::string_view n = t->str(sl.name[other.index()]);
            follow.emplace_back(
                (f.from == s ? tr("Follow the flow to %1") : tr("Follow the flow back to %1"))
                    .arg(QString::fromUtf8(n.data(),
                                           static_cast<qsizetype>(std::min<size_t>(n.size(), 60)))),
                other);
            ++flows;
        }
        if (!follow.empty()) menu->addSeparator();
        for (const auto& [text, target] : follow)
            menu->addAction(text, this,
                            [this, target] {
                                selectSlice(target, true);
                                Q_EMIT sliceSelected(target);
                            })
                ->setObjectName("follow");
    } else {
        menu->addAction(tr("Fit all (0)"), this, [this] { fitAll(); })->setObjectName("fitAll");
        if (t && pos.x() >= TimelineViewport::kHeaderWidth) {
            const int64_t at = m_vp.nsAt(pos.x());
            menu->addAction(tr("Add a bookmark here"), this, [this, at] { addBookmark(at, {}); })
                ->setObjectName("bookmarkHere");
        }
        if (m_state.hasRange && m_state.rangeEnd > m_state.rangeStart)
            menu->addAction(tr("Zoom to the range"), this,
                            [this] { zoomTo(m_state.rangeStart, m_state.rangeEnd, 0.02); })
                ->setObjectName("zoomToRange");
    }
    return menu;
}

void TimelineView::addBookmark(int64_t ns, const QString& label) {
    auto& b = m_state.bookmarks;
    const auto at =
        std::upper_bound(b.begin(), b.end(), ns,
                         [](int64_t v, const TimelineState::Bookmark& x) { return v < x.ns; });
    b.insert(at, {ns, label.isEmpty() ? tr("Bookmark %1").arg(b.size() + 1) : label});
    update();
    Q_EMIT bookmarksChanged();
}

void TimelineView::addBookmarkHere() {
    if (!m_layout.trace()) return;
    if (m_state.selected.valid()) {
        const SliceTable& s = m_layout.trace()->slices();
        const std::string_view n = m_layout.trace()->str(s.name[m_state.selected.index()]);
        addBookmark(
            s.start[m_state.selected.index()],
            QString::fromUtf8(n.data(), static_cast<qsizetype>(std::min<size_t>(n.size(), 80))));
    } else if (m_state.hasRange) {
        addBookmark(m_state.rangeStart, {});
    } else {
        addBookmark(m_vp.nsAt(TimelineViewport::kHeaderWidth + m_vp.contentWidth() / 2.0), {});
    }
}

void TimelineView::removeBookmark(int index) {
    if (index < 0 || size_t(index) >= m_state.bookmarks.size()) return;
    m_state.bookmarks.erase(m_state.bookmarks.begin() + index);
    update();
    Q_EMIT bookmarksChanged();
}

void TimelineView::setBookmarks(std::vector<TimelineState::Bookmark> bookmarks) {
    std::sort(bookmarks.begin(), bookmarks.end(),
              [](const TimelineState::Bookmark& a, const TimelineState::Bookmark& b) {
                  return a.ns < b.ns;
              });
    m_state.bookmarks = std::move(bookmarks);
    update();
}

void TimelineView::goToBookmark(int index) {
    if (index < 0 || size_t(index) >= m_state.bookmarks.size()) return;
    const int64_t span = m_vp.endNs() - m_vp.startNs;
    const int64_t at = m_state.bookmarks[size_t(index)].ns;
    zoomTo(at - span / 2, at + span / 2, 0);
}

void TimelineView::contextMenuEvent(QContextMenuEvent* e) {
    contextMenuAt(e->pos())->popup(e->globalPos());
}

} // namespace stallscope::gui
