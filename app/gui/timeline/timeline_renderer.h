#pragma once
// Paints the timeline for a viewport. Per lane it binary-searches the visible slices and
// merges runs of slices narrower than two pixels into one block by searching ahead, so a
// frame costs O(pixels x log n) whatever the zoom (never a walk over the whole trace).
#include "timeline_layout.h"

#include <QColor>
#include <QRectF>
#include <QString>

#include <vector>

class QPainter;

namespace stallscope::gui {

struct TimelineViewport {
    static constexpr int kHeaderWidth = 240;
    static constexpr int kRulerHeight = 24;
    static constexpr int kStepBandHeight = 16;
    static constexpr int kTopHeight = kRulerHeight + kStepBandHeight;

    int64_t startNs = 0;
    double nsPerPx = 1000;
    int width = 1200, height = 800;  // whole widget
    int scrollY = 0;                 // content offset of the row area

    [[nodiscard]] double xOf(int64_t ns) const { return kHeaderWidth + double(ns - startNs) / nsPerPx; }
    [[nodiscard]] int64_t nsAt(double x) const { return startNs + static_cast<int64_t>((x - kHeaderWidth) * nsPerPx); }
    [[nodiscard]] int64_t endNs() const { return nsAt(width); }
    [[nodiscard]] int contentWidth() const { return std::max(1, width - kHeaderWidth); }
    /// Widget y of content y.
    [[nodiscard]] int yOf(int contentY) const { return kTopHeight + contentY - scrollY; }
};

struct TimelineState {
    model::SliceId selected;
    bool hasRange = false;
    int64_t rangeStart = 0, rangeEnd = 0;
    std::vector<analysis::Interval> shaded;  // the selected finding's ranges
    std::vector<int> shadedRows;             // rows they concern (empty = all)
    QString shadeLabel;
    std::vector<uint8_t> searchMatch;        // by StringId: 1 when the name matches the search
    int64_t timeOrigin = 0;                  // ruler labels are relative to this
};

struct RenderStats {
    size_t slicesDrawn = 0, mergedBlocks = 0, labels = 0, lanesVisited = 0;
};

class TimelineRenderer {
public:
    void paint(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp, const TimelineState& state);
    [[nodiscard]] const RenderStats& stats() const { return m_stats; }
    /// Widget-space rectangle of a slice (invalid when its row is hidden).
    static QRectF sliceRect(const TimelineLayout& layout, const TimelineViewport& vp, model::SliceId slice);
    /// Picks the slice under (x, y); tolerates a few pixels around narrow slices.
    static model::SliceId hitTest(const TimelineLayout& layout, const TimelineViewport& vp, double x, double y);
    /// Tick spacing in ns for labels at least `minPx` apart.
    static int64_t tickStep(double nsPerPx, double minPx);
    static QString formatTime(int64_t ns, int64_t step);
    /// The fill colour of a slice drawn on its own (by kind, varied by name).
    static QColor sliceColor(const model::Trace& t, model::SliceId slice);

private:
    void paintRows(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp, const TimelineState& s);
    void paintLane(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp, const TimelineState& s,
                   model::TrackId track, int depth, int y);
    void paintCounter(QPainter& p, const CounterSeries& c, const TimelineViewport& vp, int y, int h);
    void paintOverlays(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp, const TimelineState& s);
    void paintHeaders(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp);
    void paintRuler(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp, const TimelineState& s);

    RenderStats m_stats;
};

} // namespace stallscope::gui
