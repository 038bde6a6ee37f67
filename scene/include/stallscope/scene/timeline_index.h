#pragma once
// What a timeline needs per trace, built once (off the GUI thread): per track and nesting
// depth the slices sorted by start, so a visible range is a binary search and sub-pixel
// runs can be skipped by searching ahead; and the counter series (GPU utilisation, launch
// queue depth, allocator memory) with range queries that cost O(log n) whatever the zoom.
#include "stallscope/model/graph_replays.h"
#include "stallscope/model/intervals.h"
#include "stallscope/model/trace.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace stallscope::scene {

enum class CounterKind { Utilization, Memory, QueueDepth };

/// A counter track's samples.
struct CounterSeries {
    CounterKind kind = CounterKind::Utilization;
    int32_t device = -1;
    model::Intervals busy;                         // Utilization: merged busy intervals
    std::vector<std::pair<int64_t, double>> steps; // Memory / QueueDepth: value from each ts on
    double maxValue = 1;
    std::string unit;
    bool reserved = false; // Memory: the allocator's reserved total (else the allocated one)

    /// Builds the lookup tables; call once after filling busy or steps.
    void prepare();
    /// Utilization: busy ns inside [lo, hi).
    [[nodiscard]] int64_t busyWithin(int64_t lo, int64_t hi) const;
    /// Utilization: busy ns before `t`. `hint` is a search start kept between calls: a
    /// painter sweeping left to right gallops from it instead of searching the whole series.
    [[nodiscard]] int64_t busyBefore(int64_t t, size_t& hint) const;
    /// Memory / QueueDepth: the largest value in force anywhere in [lo, hi).
    [[nodiscard]] double maxWithin(int64_t lo, int64_t hi) const;
    [[nodiscard]] double maxWithin(int64_t lo, int64_t hi, size_t& hint) const;
    /// Memory / QueueDepth: the value in force at `t` (0 before the first sample).
    [[nodiscard]] double valueAt(int64_t t) const;

private:
    static constexpr size_t kBlock = 64, kSuper = 4096;
    std::vector<int64_t> m_busyBefore; // total busy length of busy[0..i)
    std::vector<double> m_blockMax;    // max of steps[k*kBlock .. (k+1)*kBlock)
    std::vector<double> m_superMax;    // max of steps[k*kSuper .. (k+1)*kSuper)
};

/// First index in [from, n) where `before(i)` is false, for a predicate true then false:
/// gallops from `from` (1, 2, 4, ...) then bisects, so nearby answers cost O(log distance).
/// Total for any predicate and any `from` (a predicate that is not monotone gets some
/// index in [from, n], never a loop that does not end): each probe moves right.
template <class Pred> size_t gallop(size_t from, size_t n, Pred before) {
    size_t lo = from, step = 1;
    while (lo < n && before(lo)) {
        const size_t probe = lo + std::min(step, n - lo);
        if (probe == n || !before(probe)) {
            size_t hi = probe;
            ++lo;
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (before(mid))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            return lo;
        }
        lo = probe;
        if (step < n) step *= 2;
    }
    return lo;
}

/// Plain data (tests build disordered lanes to check that the queries stay total); build()
/// is the way to make one.
struct TimelineIndex {
    using Lane = std::vector<uint32_t>;
    static constexpr int kMaxLanes = 32; // deeper slices share the last lane
    static constexpr size_t kSample = 64;

    std::vector<std::vector<Lane>> lanes;                   // per track, per depth
    std::vector<std::vector<std::vector<int64_t>>> samples; // start of every kSample-th lane slice
    // Per lane, the largest end among its first (k+1)*kSample slices: where the visible
    // part of a lane begins even when its slices overlap (a slice crossing its parent's
    // end, the deepest lane holding every depth below it).
    std::vector<std::vector<std::vector<int64_t>>> maxEnds;
    std::vector<CounterSeries> counters;
    /// Operators-only views: per track of the trace, the lane set (appended to `lanes` after
    /// the tracks' own, addressed by a TrackId past them) of its slices without Python frames,
    /// nested by their operator ancestors alone; invalid for a track without Python frames.
    std::vector<model::TrackId> operatorViews;
    /// Per slice, its lane in its track's operators-only view (kNotShown: a Python frame);
    /// empty when no track has Python frames.
    std::vector<uint8_t> operatorDepth;
    static constexpr uint8_t kNotShown = 255;
    /// CUDA/HIP graph replays (model/graph_replays.h), by (stream, start): drawn as a range
    /// around their kernels on the stream's row.
    std::vector<model::GraphReplay> graphReplays;

    /// The index of `t`, which must outlive it (lanes hold indices into its slice table).
    static std::shared_ptr<const TimelineIndex> build(const model::Trace& t);

    /// Slices of `track` at nesting `depth` (the last lane: that depth and deeper), sorted
    /// by start; empty for a track or depth the index does not have.
    [[nodiscard]] const Lane& lane(model::TrackId track, int depth) const;
    /// Lanes of `track` (1 .. kMaxLanes), 0 for an unknown track.
    [[nodiscard]] int laneCount(model::TrackId track) const;
    /// The lane set of `track`'s operators-only view, or invalid when it has no Python frames.
    [[nodiscard]] model::TrackId operatorsOnly(model::TrackId track) const;
    /// The lane of slice `slice` in lane set `laneTrack` (its track's own or its operators-only
    /// view), or -1 when that view does not show it.
    [[nodiscard]] int laneOf(const model::SliceTable& s, model::TrackId laneTrack,
                             uint32_t slice) const;
    /// The first position >= `from` in that lane whose slice starts at or after `t`. Gallops
    /// over the lane's compact start samples, then bisects one block: a few cache misses
    /// however far `t` is (a binary search over the slice table misses at every probe).
    /// Total: for any `from` and `t` the answer is in [min(from, n), n] (n = lane size).
    [[nodiscard]] size_t seek(const model::SliceTable& s, model::TrackId track, int depth,
                              size_t from, int64_t t) const;
    /// The first position in that lane whose slice, or one before it, ends at or after `t`:
    /// everything before it ends before `t`. O(log n + kSample) with overlapping slices too.
    [[nodiscard]] size_t firstVisible(const model::SliceTable& s, model::TrackId track, int depth,
                                      int64_t t) const;
};

} // namespace stallscope::scene
