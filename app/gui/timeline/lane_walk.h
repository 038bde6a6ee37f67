#pragma once
// The level of detail of one timeline lane, apart from painting: which slices are drawn on
// their own and which runs of narrow slices are merged into one block (Tracy's rule). Kept
// free of QPainter so that tests can check it on any input, and bounded by construction:
// every item consumes at least one slice, and a merged run grows by at least one pixel
// per search, so a lane costs O(visible pixels x log n) whatever the data holds (equal
// starts, zero durations, slices that overlap on one lane, timestamps at the ends of
// int64) and always ends.
#include "timeline_layout.h"
#include "timeline_viewport.h"

#include "stallscope/base/loop_guard.h"
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <cmath>

namespace stallscope::gui {

/// One thing to draw on a lane.
struct LaneItem {
    bool merged = false;         // a run of slices narrower than kMinSliceWidth
    size_t first = 0, last = 0;  // the lane positions [first, last) it stands for
    double x0 = 0, x1 = 0;       // widget x, clipped to the content area +- 2 px
};

inline constexpr double kMinSliceWidth = 2.0;  // px: narrower slices are merged into runs

/// Calls emit(const LaneItem&) for the visible part of lane (track, depth), left to right,
/// and returns the number of items.
template <class Emit>
size_t walkLane(const TimelineLayout& layout, model::TrackId track, int depth, const TimelineViewport& vp, Emit&& emit) {
    const std::vector<uint32_t>& lane = layout.lane(track, depth);
    const size_t n = lane.size();
    if (n == 0 || !layout.trace()) return 0;
    const model::SliceTable& sl = layout.trace()->slices();
    const double left = TimelineViewport::kHeaderWidth - 2.0, right = vp.width + 2.0;
    const int64_t t1 = vp.endNs();
    auto x = [&](int64_t ns) { return std::clamp(vp.xOf(ns), left, right); };
    auto endOf = [&sl](uint32_t idx) { return model::satAdd(sl.start[idx], sl.dur[idx]); };
    size_t items = 0;
    size_t i = layout.firstVisible(track, depth, vp.startNs);
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
                const size_t k = std::clamp(layout.seek(track, depth, next, bound), next, n);
                if (k == next) break;  // the next slice starts right of the run
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

} // namespace stallscope::gui
