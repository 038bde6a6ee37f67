#pragma once
// When the injection records: while all three gates are open.
//
//   time window   [init + delay, init + delay + duration) from STALLSCOPE_CAPTURE_DELAY /
//                 STALLSCOPE_CAPTURE_DURATION (seconds; duration 0 = until the end); "init"
//                 is InitializeInjection, i.e. the program's first CUDA call (cuInit).
//   profiler      with STALLSCOPE_CAPTURE_PROFILER_RANGE=1: only between cudaProfilerStart()
//                 and cudaProfilerStop() (cuProfilerStart/Stop; torch.cuda.profiler.start()).
//   recorder      Control STOP closes it, START opens it again (open at the start).
//
// Every transition is stamped, so RecordingIntervals knows exactly when recording was on;
// records are kept when they overlap an interval (a kernel running across a stop is kept
// whole). CUPTI collection is also switched off while closed, so nothing is paid for it.
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

namespace stallscope::capture::cupti {

/// Half-open [begin, end) intervals, sorted and disjoint; end = kOpen while still recording.
class RecordingIntervals {
public:
    static constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
    struct Interval {
        int64_t begin, end;
    };

    /// Whether [start, end] (an event; end >= start) overlaps an interval. An instant
    /// (start == end) is kept when begin <= start < end.
    [[nodiscard]] bool overlaps(int64_t start, int64_t end) const;
    [[nodiscard]] const std::vector<Interval>& intervals() const { return m_intervals; }
    [[nodiscard]] bool empty() const { return m_intervals.empty(); }

    void open(int64_t t);
    void close(int64_t t);
    /// Forgets intervals that ended before `t`.
    void pruneBefore(int64_t t);

private:
    std::vector<Interval> m_intervals;
};

struct RangeSettings {
    int64_t delayNs = 0;
    int64_t durationNs = 0; // 0: no end
    bool profilerRange = false;
};

/// The gates and their history; thread-safe (profiler callbacks run on the program's
/// threads, recorder commands and timers on the flush thread).
class RangeControl {
public:
    RangeControl(RangeSettings settings, int64_t initNs);

    void recorderStart(int64_t now);
    void recorderStop(int64_t now);
    void profilerStart(int64_t now);
    void profilerStop(int64_t now);
    /// Applies the time window at `now` (call whenever the clock passes nextDeadline()).
    void tick(int64_t now);

    [[nodiscard]] bool recording() const;
    /// The next time the time window opens or closes after `now`; kOpen when never.
    [[nodiscard]] int64_t nextDeadline(int64_t now) const;
    /// True once the time window has closed for good: nothing will be recorded any more.
    [[nodiscard]] bool finished(int64_t now) const;
    /// A copy of the intervals recorded so far (for filtering a flush's records).
    [[nodiscard]] RecordingIntervals snapshot() const;
    void pruneBefore(int64_t t);

private:
    void apply(int64_t now, bool windowEdge); // m_mutex held
    [[nodiscard]] bool inWindow(int64_t now) const;

    mutable std::mutex m_mutex;
    RangeSettings m_settings;
    int64_t m_windowBegin, m_windowEnd;
    bool m_recorderOpen = true;
    bool m_profilerOpen = false;
    bool m_recording = false;
    RecordingIntervals m_intervals;
};

} // namespace stallscope::capture::cupti
