#pragma once
// Half-open [start, end) nanosecond intervals, the set operations on them, and a device's busy
// intervals: facts about the model that the analysis, the timeline scene and the GUI share.
#include "stallscope/model/time_math.h"

#include <cstdint>
#include <vector>

namespace stallscope::model {

class Trace;

struct Interval {
    int64_t start = 0;
    int64_t end = 0;
    /// Saturating: an interval across all of int64 is INT64_MAX long, not negative.
    [[nodiscard]] int64_t length() const { return end > start ? satSub(end, start) : 0; }
    bool operator==(const Interval&) const = default;
};

using Intervals = std::vector<Interval>;

/// Sorts and merges overlapping or touching intervals; drops empty ones.
Intervals mergeIntervals(Intervals in);
/// Total length of merged intervals.
int64_t totalLength(const Intervals& merged);
/// Parts of merged `a` inside [lo, hi).
Intervals clip(const Intervals& merged, int64_t lo, int64_t hi);
/// Union of two merged lists (linear).
Intervals unite(const Intervals& a, const Intervals& b);
/// Intersection of two merged lists.
Intervals intersect(const Intervals& a, const Intervals& b);
/// `a` minus `b` (both merged).
Intervals subtract(const Intervals& a, const Intervals& b);
/// [lo, hi) minus merged `busy`: the gaps.
Intervals complement(const Intervals& busy, int64_t lo, int64_t hi);
/// Length of merged `a` inside [lo, hi), by binary search.
int64_t lengthWithin(const Intervals& merged, int64_t lo, int64_t hi);

/// Merged busy intervals of a GPU device: all its GPU work, or its kernels only.
Intervals gpuBusyIntervals(const Trace& trace, int32_t device, bool kernelsOnly);

} // namespace stallscope::model
