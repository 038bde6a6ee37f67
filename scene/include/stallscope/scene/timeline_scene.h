#pragma once
// The timeline scene: for a viewport and a set of rows, what a timeline draws, as a draw
// list that the GUI paints with QPainter and the reports write as SVG. One set of rules for
// both: which rows a finding concerns, the level of detail of a lane (which slices are
// drawn on their own and which runs of narrow slices become one block: Tracy's rule),
// which slices get a label, where the ruler's ticks go, and where a finding's ranges are
// shaded. Qt-free, so tests count what is drawn at any zoom without a display.
//
// Bounded by construction: every lane item consumes at least one slice and a merged run
// grows by at least one pixel per search, so a lane costs O(visible pixels x log n)
// whatever the data holds (equal starts, zero durations, slices that overlap on one lane,
// timestamps at the ends of int64), and ticks are counted, never walked to a time.
#include "stallscope/scene/timeline_index.h"

#include "stallscope/base/loop_guard.h"
#include "stallscope/model/intervals.h"
#include "stallscope/model/time_math.h"
#include "stallscope/model/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace stallscope::scene {

inline constexpr double kMinSliceWidth = 2.0;  // px: narrower slices are merged into runs
inline constexpr double kMinLabelWidth = 36.0; // px: slices at least this wide carry their name
inline constexpr double kTickMinPx = 100.0;    // px between labelled ticks, at least
inline constexpr int kMinorTicks = 5;          // minor divisions per major tick
inline constexpr double kMinShadeWidth = 2.0;  // px: a finding range is never thinner
inline constexpr double kShadeLabelWidth =
    60.0; // px: wider shaded ranges carry the finding's label

/// The mapping between time (int64 ns) and x. Total: any start, any positive scale and any
/// x give an answer without overflow (saturating at the ends of int64).
struct SceneViewport {
    static constexpr double kMinNsPerPx = 0.01;
    int64_t startNs = 0; // the time at x = left
    double nsPerPx = 1000;
    double left = 0, right = 1000; // the content area's x range

    [[nodiscard]] double xOf(int64_t ns) const {
        return left + model::nsDiff(ns, startNs) / scale();
    }
    /// The time at x, truncated toward startNs.
    [[nodiscard]] int64_t nsAt(double x) const {
        return model::satAdd(startNs, model::nsFromDouble((x - left) * scale()));
    }
    /// The first whole ns at or right of x: slices starting before it start left of x.
    [[nodiscard]] int64_t nsCeilAt(double x) const {
        return model::satAdd(startNs, model::nsFromDouble(std::ceil((x - left) * scale())));
    }
    [[nodiscard]] int64_t endNs() const { return nsAt(right); }
    /// nsPerPx as used: positive and finite whatever was stored.
    [[nodiscard]] double scale() const {
        return nsPerPx >= kMinNsPerPx && std::isfinite(nsPerPx) ? nsPerPx : kMinNsPerPx;
    }
};

/// One thing to draw on a lane.
struct LaneItem {
    bool merged = false;        // a run of slices narrower than kMinSliceWidth
    size_t first = 0, last = 0; // the lane positions [first, last) it stands for
    double x0 = 0, x1 = 0;      // x, clipped to the content area +- 2 px
};

/// Calls emit(const LaneItem&) for the visible part of lane (track, depth), left to right,
/// and returns the number of items.
template <class Emit>
size_t walkLane(const TimelineIndex& index, const model::SliceTable& sl, model::TrackId track,
                int depth, const SceneViewport& vp, Emit&& emit) {
    const TimelineIndex::Lane& lane = index.lane(track, depth);
    const size_t n = lane.size();
    if (n == 0) return 0;
    const double left = vp.left - 2.0, right = vp.right + 2.0;
    const int64_t t1 = vp.endNs();
    auto x = [&](int64_t ns) { return std::clamp(vp.xOf(ns), left, right); };
    auto endOf = [&sl](uint32_t idx) { return model::satAdd(sl.start[idx], sl.dur[idx]); };
    size_t items = 0;
    size_t i = index.firstVisible(sl, track, depth, vp.startNs);
    while (i < n && sl.start[lane[i]] < t1) {
        const uint32_t idx = lane[i];
        const double x0 = x(sl.start[idx]), x1 = x(endOf(idx));
        size_t next = i + 1;
        if (x1 - x0 >= kMinSliceWidth) {
            emit(LaneItem{false, i, next, x0, x1});
        } else {
            // A run: every slice that starts left of the run's next pixel joins it, found
            // by one search per pixel the run grows by. The search bound and the stop test
            // are the same number (the first ns of that pixel), so a slice starting exactly
            // on a pixel boundary cannot be both outside the search and inside the run.
            const double runStart = std::floor(x0);
            double runEnd = std::max(std::ceil(x1), runStart + 1);
            while (next < n) {
                // Past the right edge, the run takes whatever else is in view.
                const int64_t bound = runEnd >= right ? t1 : vp.nsCeilAt(runEnd + 1);
                const size_t k = std::clamp(index.seek(sl, track, depth, next, bound), next, n);
                if (k == next) break; // the next slice starts right of the run
                const uint32_t last = lane[k - 1];
                const double lx0 = x(sl.start[last]), lx1 = x(endOf(last));
                if (lx1 - lx0 >= kMinSliceWidth) {
                    // Slices of a lane that do not overlap leave only the last one wide:
                    // it ends the run and is drawn on its own, with its label.
                    if (k - 1 > next) runEnd = std::max(runEnd, std::ceil(x(endOf(lane[k - 2]))));
                    next = k - 1;
                    break;
                }
                runEnd = std::max(runEnd, std::ceil(lx1));
                next = k;
            }
            emit(LaneItem{true, i, next, runStart, std::min(runEnd, right)});
        }
        ++items;
        if (!STALLSCOPE_ADVANCED(i, next)) break;
        i = next;
    }
    return items;
}

/// The ruler: major ticks at a round step (labelled relative to an origin) and minor ones.
struct Tick {
    double x = 0;
    int64_t rel = 0; // the tick's time minus the origin: its label (base::formatOffset(rel, step))
};
struct Ticks {
    int64_t step = 1;
    std::vector<Tick> major;
    std::vector<double> minor;
};
/// Ticks inside [vp.left, vp.right], labels at least `minPx` apart.
Ticks placeTicks(const SceneViewport& vp, int64_t origin, double minPx = kTickMinPx);

/// A finding's range as drawn: at least kMinShadeWidth wide, clipped to the content area.
struct Shade {
    double x0 = 0, x1 = 0;
    bool labelled = false; // wide enough (kShadeLabelWidth) to carry the finding's label
};
std::vector<Shade> placeShades(const model::Intervals& ranges, const SceneViewport& vp);

/// The graph replays of `index` on `stream` that show in the viewport, at least
/// kMinSliceWidth wide (narrower ones are left out: a fit-all view of a serving trace holds
/// thousands), as [first, last) positions into index.graphReplays.
struct ReplayDraw {
    size_t replay = 0; // position in index.graphReplays
    double x0 = 0, x1 = 0;
};
std::vector<ReplayDraw> placeReplays(const TimelineIndex& index, model::TrackId stream,
                                     const SceneViewport& vp);

/// Rows a finding on `device` concerns inside [lo, hi): the CPU threads that launch the
/// device's GPU work there, most launches first (the busiest CPU threads when none does),
/// at most `max`. Launches are counted over at most kRowScanLimit GPU slices per stream.
inline constexpr size_t kRowScanLimit = 200000;
std::vector<model::TrackId> launchingThreads(const model::Trace& t, int32_t device, int64_t lo,
                                             int64_t hi, size_t max);
/// The device's GPU streams (all devices for -1) with work in [lo, hi), busiest first, at
/// most `max`, returned in track order; a given device's streams are kept even when idle.
std::vector<model::TrackId> deviceStreams(const model::Trace& t, int32_t device, int64_t lo,
                                          int64_t hi, size_t max);

/// A row of slices in the scene: lanes [firstLane, lanes) of `track` are drawn.
struct SceneRow {
    model::TrackId track;
    int lanes = 1;
    int firstLane = 0;
};

/// One lane item of the draw list.
struct LaneDraw {
    uint32_t row = 0;  // index into SceneRequest::rows
    uint16_t lane = 0; // nesting depth
    bool merged = false;
    bool labelled = false; // a slice wide enough for its name (kMinLabelWidth)
    uint32_t slice = 0; // the slice drawn, or the first slice of a run (index into the slice table)
    size_t first = 0, last = 0; // lane positions [first, last)
    double x0 = 0, x1 = 0;
};

struct SceneRequest {
    SceneViewport viewport;
    std::vector<SceneRow> rows;
    int64_t origin = 0; // tick labels are relative to this
    double tickMinPx = kTickMinPx;
    const model::Intervals* shaded = nullptr; // a finding's ranges, or null
    size_t maxItems = SIZE_MAX;               // lane items at most (a file-size cap for the SVG)
};

struct DrawList {
    std::vector<LaneDraw> items; // row by row, lane by lane, left to right
    Ticks ticks;
    std::vector<Shade> shades;
    size_t slices = 0, runs = 0, labels = 0, lanesVisited = 0;
    bool truncated = false; // maxItems was reached
};

DrawList buildScene(const model::Trace& t, const TimelineIndex& index, const SceneRequest& request);

} // namespace stallscope::scene
