#pragma once
// Paints the timeline for a viewport with QPainter: the scene (stallscope/scene/
// timeline_scene.h) gives the lane items (level of detail, labels), the ruler's ticks and
// the finding's shading, the same draw list the report pictures write as SVG; this adds
// the widget's own parts (row headers, counters, selection, flow arrow, step band). A frame
// costs O(pixels x log n) whatever the zoom (never a walk over the whole trace).
#include "timeline_layout.h"
#include "timeline_search.h"
#include "timeline_viewport.h"

#include "stallscope/scene/timeline_scene.h"

#include <QColor>
#include <QRectF>
#include <QString>

#include <vector>

class QPainter;

namespace stallscope::gui {

struct TimelineState {
    model::SliceId selected;
    bool hasRange = false;
    int64_t rangeStart = 0, rangeEnd = 0;
    std::vector<model::Interval> shaded;     // the selected finding's ranges
    std::vector<int> shadedRows;             // rows they concern (empty = all)
    QString shadeLabel;
    std::shared_ptr<const TimelineSearchResult> search;  // the search's matches, or null
    int64_t timeOrigin = 0;                  // ruler labels are relative to this
    struct Bookmark {
        int64_t ns = 0;
        QString label;
    };
    std::vector<Bookmark> bookmarks; // in time order
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
    static model::SliceId hitTest(const TimelineLayout& layout, const TimelineViewport& vp,
                                  double x, double y);
    static QString formatTime(int64_t ns, int64_t step);
    /// The fill colour of a slice drawn on its own (by kind, varied by name).
    static QColor sliceColor(const model::Trace& t, model::SliceId slice);

    /// The scene of a frame: the draw list of the slice rows on screen, and the widget y
    /// of lane 0 of each of its rows.
    struct SceneFrame {
        scene::DrawList list;
        std::vector<scene::SceneRow> rows;
        std::vector<int> laneTop;
    };
    static SceneFrame buildFrame(const TimelineLayout& layout, const TimelineViewport& vp,
                                 const TimelineState& s);

private:
    void paintRows(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp);
    void paintLanes(QPainter& p, const TimelineLayout& layout, const TimelineState& s,
                    const SceneFrame& f);
    void paintCounter(QPainter& p, const CounterSeries& c, const TimelineViewport& vp, int y, int h);
    /// CUDA/HIP graph replays: a dashed range around each replay's work on its stream's row,
    /// labelled with its graph id when wide enough.
    void paintGraphReplays(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp);
    void paintOverlays(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp,
                       const TimelineState& s, const std::vector<scene::Shade>& shades);
    void paintHeaders(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp);
    void paintRuler(QPainter& p, const TimelineLayout& layout, const TimelineViewport& vp,
                    const TimelineState& s, const scene::Ticks& ticks);

    RenderStats m_stats;
};

} // namespace stallscope::gui
