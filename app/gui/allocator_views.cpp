#include "allocator_views.h"

#include "gui_text.h"
#include "theme.h"

#include "stallscope/base/text_format.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <unordered_map>

namespace stallscope::gui {

using analysis::DeviceMemory;
using analysis::MemoryEventRow;

namespace {

QString bytes(int64_t b) {
    return QString::fromStdString(base::formatBytes(b < 0 ? 0 : uint64_t(b)));
}

/// Prefix sums over the allocations' rows (Fenwick tree): the bytes live below a block.
class PrefixSums {
public:
    explicit PrefixSums(size_t n) : m_t(n + 1, 0) {}
    void add(size_t i, int64_t v) {
        for (++i; i < m_t.size(); i += i & (~i + 1)) m_t[i] += v;
    }
    [[nodiscard]] int64_t before(size_t i) const { // sum of [0, i)
        int64_t s = 0;
        for (; i > 0; i -= i & (~i + 1)) s += m_t[i];
        return s;
    }

private:
    std::vector<int64_t> m_t;
};

QColor bandColour(size_t k) {
    // Golden-angle hues: neighbours differ.
    return QColor::fromHsv(int((k * 137) % 360), 150, 215);
}

} // namespace

// ---------------------------------------------------------------- active blocks

ActiveMemoryWidget::ActiveMemoryWidget(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(140);
    setMouseTracking(true);
    setToolTip(tr("The blocks live at each moment, stacked in the order they were allocated "
                  "(a freed block lets those above it fall): the largest in colour, the rest "
                  "grey, what was allocated before the events pale at the bottom."));
}

void ActiveMemoryWidget::setDevice(const model::Trace* trace, const DeviceMemory* device,
                                   int64_t startNs, int64_t endNs) {
    m_trace = trace;
    m_device = device;
    m_start = startNs;
    m_end = std::max(endNs, startNs + 1);
    m_allocOf.clear();
    m_coloured.clear();
    m_colourOf.clear();
    m_base = 0;
    m_max = 1;
    if (device && !device->rows.empty()) {
        const auto& rows = device->rows;
        // Frees matched to their allocation by address (as the analysis does).
        m_allocOf.assign(rows.size(), -1);
        std::unordered_map<uint64_t, int32_t> live;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].bytes > 0 && rows[i].addr) live[rows[i].addr] = int32_t(i);
            if (rows[i].bytes < 0 && rows[i].addr)
                if (auto it = live.find(rows[i].addr); it != live.end()) {
                    m_allocOf[i] = it->second;
                    live.erase(it);
                }
        }
        // Before the first event: what its total says was already allocated.
        const MemoryEventRow& first = rows.front();
        if (first.totalAllocated >= 0)
            m_base = std::max<int64_t>(0, first.totalAllocated - first.bytes);
        for (const MemoryEventRow& e : rows) m_max = std::max(m_max, e.totalAllocated);
        // The blocks that matter most to the picture: bytes x time live in the window.
        std::vector<std::pair<double, size_t>> weight;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].bytes <= 0) continue;
            const int64_t from = std::max(rows[i].ts, m_start);
            const int64_t to = std::min(rows[i].freedAt >= 0 ? rows[i].freedAt : m_end, m_end);
            if (to < from) continue;
            weight.emplace_back(double(rows[i].bytes) * double(to - from + 1), i);
        }
        const size_t n = std::min(kColoured, weight.size());
        std::partial_sort(weight.begin(), weight.begin() + std::ptrdiff_t(n), weight.end(),
                          [](const auto& a, const auto& b) { return a.first > b.first; });
        m_colourOf.assign(rows.size(), -1);
        for (size_t k = 0; k < n; ++k) {
            m_coloured.push_back(weight[k].second);
            m_colourOf[weight[k].second] = int32_t(k);
        }
    }
    update();
}

QRectF ActiveMemoryWidget::plot() const {
    return QRectF(70, 22, std::max(10, width() - 80), std::max(10, height() - 42));
}

template <class Visit> void ActiveMemoryWidget::sweep(int columns, int last, Visit&& visit) const {
    const auto& rows = m_device->rows;
    PrefixSums below(rows.size());
    std::vector<size_t> liveColoured;
    int64_t base = m_base, total = m_base;
    size_t next = 0;
    const double span = double(m_end - m_start);
    for (int c = 0; c <= last && c < columns; ++c) {
        const int64_t until = m_start + int64_t(span * double(c + 1) / double(columns));
        int64_t peak = total;
        for (; next < rows.size() && rows[next].ts <= until; ++next) {
            const MemoryEventRow& e = rows[next];
            if (e.bytes > 0) {
                below.add(next, e.bytes);
                if (m_colourOf[next] >= 0) liveColoured.push_back(next);
            } else if (e.bytes < 0) {
                if (const int32_t a = m_allocOf[next]; a >= 0) {
                    below.add(size_t(a), -rows[size_t(a)].bytes);
                    if (m_colourOf[size_t(a)] >= 0) std::erase(liveColoured, size_t(a));
                } else {
                    base = std::max<int64_t>(0, base + e.bytes); // allocated before the events
                }
            }
            total = e.totalAllocated >= 0 ? e.totalAllocated : base + below.before(rows.size());
            peak = std::max(peak, total);
        }
        visit(c, peak, base, below, liveColoured);
    }
}

void ActiveMemoryWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const Theme& th = Theme::current();
    const QRectF r = plot();
    p.setPen(th.grid);
    p.drawRect(r);
    if (!m_device || m_device->rows.empty()) return;
    const int columns = std::max(1, int(r.width()));
    const double top = double(m_max);
    auto yOf = [&](double v) { return r.bottom() - std::clamp(v / top, 0.0, 1.0) * r.height(); };
    const QColor grey = th.dark ? QColor(90, 90, 96) : QColor(200, 200, 205);
    const QColor before = th.dark ? QColor(60, 60, 66) : QColor(225, 225, 230);
    const auto& rows = m_device->rows;
    sweep(columns, columns - 1,
          [&](int c, int64_t peak, int64_t base, const PrefixSums& below,
              const std::vector<size_t>& live) {
              const double x = r.left() + c;
              p.fillRect(QRectF(x, yOf(double(peak)), 1, r.bottom() - yOf(double(peak))), grey);
              p.fillRect(QRectF(x, yOf(double(base)), 1, r.bottom() - yOf(double(base))), before);
              for (size_t row : live) {
                  const double lo = double(base + below.before(row));
                  const double hi = lo + double(rows[row].bytes);
                  p.fillRect(QRectF(x, yOf(hi), 1, std::max(0.5, yOf(lo) - yOf(hi))),
                             bandColour(size_t(m_colourOf[row])));
              }
          });
    p.setPen(th.mutedText);
    p.drawText(QRectF(0, r.top() - 2, 66, 16), Qt::AlignRight, bytes(m_max));
    p.drawText(QRectF(0, r.bottom() - 14, 66, 16), Qt::AlignRight, QStringLiteral("0"));
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 16), Qt::AlignLeft,
               QStringLiteral("+0"));
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 16), Qt::AlignRight,
               "+" + durationText(m_end - m_start));
    p.drawText(
        QRectF(r.left(), 2, r.width(), 16), Qt::AlignLeft,
        tr("Live blocks, stacked as allocated (the %1 largest in colour)").arg(m_coloured.size()));
}

int ActiveMemoryWidget::blockAt(QPoint pt) const {
    const QRectF r = plot();
    if (!m_device || m_device->rows.empty() || !r.contains(pt)) return -1;
    const int columns = std::max(1, int(r.width()));
    const int want = std::clamp(int(pt.x() - r.left()), 0, columns - 1);
    const double v = (r.bottom() - pt.y()) / r.height() * double(m_max);
    int found = -1;
    const auto& rows = m_device->rows;
    sweep(columns, want,
          [&](int c, int64_t, int64_t base, const PrefixSums& below,
              const std::vector<size_t>& live) {
              if (c != want) return;
              for (size_t row : live) {
                  const double lo = double(base + below.before(row));
                  if (v >= lo && v < lo + double(rows[row].bytes)) found = int(row);
              }
          });
    return found;
}

QString ActiveMemoryWidget::blockText(int row) const {
    if (!m_device || row < 0 || size_t(row) >= m_device->rows.size()) return {};
    const MemoryEventRow& e = m_device->rows[size_t(row)];
    QString where;
    if (const model::AllocatorSnapshot* snap = m_trace ? m_trace->allocatorSnapshot() : nullptr) {
        const auto f = snap->userFrame(e.stack);
        where = f ? QString::fromStdString(snap->frameText(*f)) : tr("(no Python frame)");
    } else if (m_trace && e.op.valid()) {
        where = QString::fromUtf8(m_trace->str(m_trace->slices().name[e.op.index()]));
    }
    QString s = bytes(e.bytes);
    if (!where.isEmpty()) s += " · " + where;
    s += tr(" · allocated +%1").arg(durationText(e.ts - m_start));
    s += e.freedAt >= 0 ? tr(", freed +%1").arg(durationText(e.freedAt - m_start))
                        : tr(", not freed in the events");
    return s;
}

void ActiveMemoryWidget::mousePressEvent(QMouseEvent* e) {
    if (const int row = blockAt(e->position().toPoint()); row >= 0) Q_EMIT blockActivated(row);
}

void ActiveMemoryWidget::mouseMoveEvent(QMouseEvent* e) {
    const int row = blockAt(e->position().toPoint());
    if (row >= 0)
        QToolTip::showText(e->globalPosition().toPoint(), blockText(row), this);
    else
        QToolTip::hideText();
}

// ---------------------------------------------------------------- segment map

namespace {
constexpr int kRowHeight = 12;
constexpr int kLeft = 96;
} // namespace

SegmentMapWidget::SegmentMapWidget(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
}

void SegmentMapWidget::setSnapshot(const model::AllocatorSnapshot* snapshot, int32_t device) {
    m_snap = snapshot;
    m_segments.clear();
    m_largest = 1;
    if (snapshot) {
        for (uint32_t i = 0; i < snapshot->segments.size(); ++i)
            if (snapshot->segments[i].device == device) {
                m_segments.push_back(i);
                m_largest = std::max(m_largest, snapshot->segments[i].totalSize);
            }
        std::stable_sort(m_segments.begin(), m_segments.end(), [&](uint32_t a, uint32_t b) {
            return snapshot->segments[a].totalSize > snapshot->segments[b].totalSize;
        });
    }
    setMinimumHeight(int(m_segments.size()) * kRowHeight + 24);
    updateGeometry();
    update();
}

QSize SegmentMapWidget::sizeHint() const {
    return {500, int(m_segments.size()) * kRowHeight + 24};
}

int SegmentMapWidget::segmentAt(QPoint p) const {
    const int i = (p.y() - 20) / kRowHeight;
    if (p.y() < 20 || i < 0 || size_t(i) >= m_segments.size()) return -1;
    return int(m_segments[size_t(i)]);
}

void SegmentMapWidget::paintEvent(QPaintEvent* e) {
    QPainter p(this);
    const Theme& th = Theme::current();
    const QColor allocated(52, 120, 200), pending(230, 150, 40);
    const QColor inactive = th.dark ? QColor(80, 80, 86) : QColor(215, 215, 220);
    p.setPen(th.mutedText);
    p.drawText(QRect(4, 2, width() - 8, 16), Qt::AlignLeft,
               tr("Segments, largest first (full bar %1): blue allocated · orange pending "
                  "free · grey free")
                   .arg(bytes(m_largest)));
    if (!m_snap) return;
    const double w = std::max(10, width() - kLeft - 8);
    const int first = std::max(0, (e->rect().top() - 20) / kRowHeight);
    const int last = std::min(int(m_segments.size()), (e->rect().bottom() - 20) / kRowHeight + 1);
    for (int i = first; i < last; ++i) {
        const model::SnapshotSegment& s = m_snap->segments[m_segments[size_t(i)]];
        const double y = 20 + i * kRowHeight;
        p.setPen(th.mutedText);
        p.drawText(QRectF(0, y, kLeft - 6, kRowHeight), Qt::AlignRight | Qt::AlignVCenter,
                   bytes(s.totalSize));
        const double scale = w / double(m_largest);
        p.fillRect(QRectF(kLeft, y + 1, double(s.totalSize) * scale, kRowHeight - 2), inactive);
        for (uint32_t b = s.blockBegin; b < s.blockEnd; ++b) {
            const model::SnapshotBlock& blk = m_snap->blocks[b];
            if (blk.state == model::BlockState::Inactive) continue;
            const double x = kLeft + double(blk.address - s.address) * scale;
            p.fillRect(QRectF(x, y + 1, std::max(1.0, double(blk.size) * scale), kRowHeight - 2),
                       blk.state == model::BlockState::ActivePendingFree ? pending : allocated);
        }
    }
}

void SegmentMapWidget::mouseMoveEvent(QMouseEvent* e) {
    const int i = segmentAt(e->position().toPoint());
    if (i < 0 || !m_snap) {
        QToolTip::hideText();
        return;
    }
    const model::SnapshotSegment& s = m_snap->segments[size_t(i)];
    int64_t free = 0, largestFree = 0;
    for (uint32_t b = s.blockBegin; b < s.blockEnd; ++b)
        if (m_snap->blocks[b].state == model::BlockState::Inactive) {
            free += m_snap->blocks[b].size;
            largestFree = std::max(largestFree, m_snap->blocks[b].size);
        }
    QToolTip::showText(e->globalPosition().toPoint(),
                       tr("segment 0x%1 (%2, stream %3): %4, %5 allocated, %6 free in %7 "
                          "blocks (largest free %8)")
                           .arg(QString::number(s.address, 16))
                           .arg(s.large ? tr("large pool") : tr("small pool"))
                           .arg(s.stream)
                           .arg(bytes(s.totalSize), bytes(s.allocatedSize), bytes(free))
                           .arg(s.blockEnd - s.blockBegin)
                           .arg(bytes(largestFree)),
                       this);
}

} // namespace stallscope::gui
