#pragma once
// The rows of the timeline: per process a header, then its threads/streams (one lane per
// nesting depth) and counter tracks. Lanes hold the slices of one depth sorted by start, so
// a visible range is a binary search and sub-pixel runs can be skipped by searching ahead.
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/intervals.h"
#include "stallscope/model/trace.h"

#include <QString>

#include <algorithm>
#include <memory>
#include <vector>

namespace stallscope::gui {

enum class RowKind { Group, Slices, Counter };
enum class CounterKind { Utilization, Memory, QueueDepth };

/// A counter track's samples, with range queries that cost O(log n) whatever the zoom.
struct CounterSeries {
    CounterKind kind = CounterKind::Utilization;
    int32_t device = -1;
    analysis::Intervals busy;                       // Utilization: merged busy intervals
    std::vector<std::pair<int64_t, double>> steps;  // Memory / QueueDepth: value from each ts on
    double maxValue = 1;
    QString unit;

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

private:
    static constexpr size_t kBlock = 64, kSuper = 4096;
    std::vector<int64_t> m_busyBefore;  // total busy length of busy[0..i)
    std::vector<double> m_blockMax;     // max of steps[k*kBlock .. (k+1)*kBlock)
    std::vector<double> m_superMax;     // max of steps[k*kSuper .. (k+1)*kSuper)
};

/// First index in [from, n) where `before(i)` is false, for a predicate true then false:
/// gallops from `from` (1, 2, 4, ...) then bisects, so nearby answers cost O(log distance).
/// Total for any predicate and any `from` (a predicate that is not monotone gets some
/// index in [from, n], never a loop that does not end): each probe moves right.
template <class Pred>
size_t gallop(size_t from, size_t n, Pred before) {
    size_t lo = from, step = 1;
    while (lo < n && before(lo)) {
        const size_t probe = lo + std::min(step, n - lo);
        if (probe == n || !before(probe)) {
            size_t hi = probe;
            ++lo;
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (before(mid)) lo = mid + 1;
                else hi = mid;
            }
            return lo;
        }
        lo = probe;
        if (step < n) step *= 2;
    }
    return lo;
}

/// What the timeline needs per trace, built once off the GUI thread: per track and depth
/// the slices sorted by start, and the counter series.
struct TimelineIndex {
    using Lane = std::vector<uint32_t>;
    std::vector<std::vector<Lane>> lanes;                    // per track, per depth
    std::vector<std::vector<std::vector<int64_t>>> samples;  // start of every kSample-th lane slice
    // Per lane, the largest end among its first (k+1)*kSample slices: where the visible
    // part of a lane begins even when its slices overlap (a slice crossing its parent's
    // end, the deepest lane holding every depth below it).
    std::vector<std::vector<std::vector<int64_t>>> maxEnds;
    std::vector<CounterSeries> counters;
    static constexpr int kMaxLanes = 32;
    static constexpr size_t kSample = 64;

    static std::shared_ptr<const TimelineIndex> build(const model::Trace& t);
};

struct TimelineRow {
    RowKind kind = RowKind::Slices;
    int group = -1;                  // index into groups()
    model::TrackId track;            // Slices rows
    int lanes = 1;                   // Slices rows: nesting depths shown
    int counter = -1;                // Counter rows: index into counters()
    QString label, sublabel;
    int y = 0, height = 0;           // after relayout()
    bool visible = true;
};

struct TimelineGroup {
    QString label;
    model::ProcessId process;
    int32_t device = -1;             // GPU device, or -1
    bool collapsed = false;
};

class TimelineLayout {
public:
    static constexpr int kLaneHeight = 18;
    static constexpr int kGroupHeight = 24;
    static constexpr int kCounterHeight = 40;
    static constexpr int kMaxLanes = TimelineIndex::kMaxLanes;

    TimelineLayout() = default;
    /// Builds rows for `trace`; `index` is built here when not given (see TimelineIndex).
    void build(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
               std::shared_ptr<const TimelineIndex> index = nullptr);
    /// Recomputes row positions after a group was collapsed or expanded.
    void relayout();
    void setCollapsed(int group, bool collapsed);

    [[nodiscard]] const model::Trace* trace() const { return m_trace.get(); }
    [[nodiscard]] const std::shared_ptr<const model::Trace>& sharedTrace() const { return m_trace; }
    [[nodiscard]] const std::shared_ptr<const TimelineIndex>& index() const { return m_index; }
    [[nodiscard]] const analysis::AnalysisResult* analysis() const { return m_analysis.get(); }
    [[nodiscard]] const std::vector<TimelineRow>& rows() const { return m_rows; }
    [[nodiscard]] const std::vector<TimelineGroup>& groups() const { return m_groups; }
    [[nodiscard]] const std::vector<CounterSeries>& counters() const { return m_index ? m_index->counters : m_noCounters; }
    [[nodiscard]] int totalHeight() const { return m_totalHeight; }
    /// Slices of `track` at nesting `depth`, sorted by start (indices into the slice table).
    [[nodiscard]] const std::vector<uint32_t>& lane(model::TrackId track, int depth) const;
    /// The first position >= `from` in that lane whose slice starts at or after `t`. Gallops
    /// over the lane's compact start samples, then bisects one block: a few cache misses
    /// however far `t` is (a binary search over the slice table misses at every probe).
    /// Total: for any `from` and `t` the answer is in [min(from, n), n] (n = lane size).
    [[nodiscard]] size_t seek(model::TrackId track, int depth, size_t from, int64_t t) const;
    /// The first position in that lane whose slice, or one before it, ends at or after `t`:
    /// everything before it ends before `t`. O(log n + kSample) with overlapping slices too.
    [[nodiscard]] size_t firstVisible(model::TrackId track, int depth, int64_t t) const;
    /// Row index at content y (after relayout), or -1.
    [[nodiscard]] int rowAt(int y) const;
    /// First visible row of `track`, or -1.
    [[nodiscard]] int rowOfTrack(model::TrackId track) const;
    /// Rows of a GPU device's streams and of the threads that launch its work.
    [[nodiscard]] std::vector<int> rowsForDevice(int32_t device) const;
    [[nodiscard]] int64_t startNs() const { return m_startNs; }
    [[nodiscard]] int64_t endNs() const { return m_endNs; }

private:

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    std::vector<TimelineRow> m_rows;
    std::vector<TimelineGroup> m_groups;
    std::shared_ptr<const TimelineIndex> m_index;
    std::vector<CounterSeries> m_noCounters;
    std::vector<uint32_t> m_empty;
    int m_totalHeight = 0;
    int64_t m_startNs = 0, m_endNs = 0;
};

} // namespace stallscope::gui
