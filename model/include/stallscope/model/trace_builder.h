#pragma once
// Accepts events in any order and in batches, then produces the immutable Trace.
// Importers append whole batches; a live capture appends as records arrive and
// publishes snapshots (copies) while it keeps appending.
#include "stallscope/model/trace.h"

#include <atomic>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

namespace stallscope::model {

/// A flow endpoint as written (s / t / f); bound to slices at finalize.
struct FlowEndpoint {
    int64_t ts = 0;
    TrackId track;
    uint64_t id = 0;
    StringId category;
    char phase = 's';           // 's' start, 't' step, 'f' finish
    bool bindEnclosing = true;  // false: binds to the next slice (Chrome's default for 'f')
};

/// A B or E event, paired at finalize by thread and time.
struct BeginEnd {
    int64_t ts = 0;
    TrackId track;
    StringId name;
    StringId category;
    uint64_t srcOffset = 0;
    uint32_t srcLength = 0;
    uint32_t correlation = SliceTable::kNoCorrelation;
    bool begin = true;
};

/// One slice, for callers that append one at a time (live capture, tests).
struct SliceRow {
    int64_t start = 0;
    int64_t dur = 0;
    TrackId track;
    StringId name;
    StringId category;
    EventKind kind = EventKind::Other;
    uint32_t correlation = SliceTable::kNoCorrelation;
    uint64_t extra = SliceExtra::kNone;
    uint64_t srcOffset = 0;
    uint32_t srcLength = 0;
    uint8_t flags = 0;
};

class TraceBuilder {
public:
    TraceBuilder();
    ~TraceBuilder();
    TraceBuilder(TraceBuilder&&) noexcept;
    TraceBuilder& operator=(TraceBuilder&&) noexcept;

    StringPool& strings() { return m_trace->m_strings; }
    StringId intern(std::string_view s) { return m_trace->m_strings.intern(s); }

    ProcessId process(RowKey key);
    TrackId track(ProcessId process, RowKey key);
    ProcessInfo& processInfo(ProcessId id) { return m_trace->m_processes[id.index()]; }
    TrackInfo& trackInfo(TrackId id) { return m_trace->m_tracks[id.index()]; }
    [[nodiscard]] size_t processCount() const { return m_trace->m_processes.size(); }
    [[nodiscard]] size_t trackCount() const { return m_trace->m_tracks.size(); }

    /// Columns in arrival order, for bulk appends by importers.
    SliceTable& sliceColumns() { return m_trace->m_slices; }
    void appendSlice(const SliceRow& row);

    void appendInstant(int64_t ts, TrackId track, StringId name, StringId category, char scope,
                       uint64_t srcOffset, uint32_t srcLength);
    CounterId counterSeries(ProcessId process, StringId name, StringId key);
    void appendCounter(CounterId series, int64_t ts, double value);
    void appendMemory(const MemorySample& sample) { m_trace->m_memory.push_back(sample); }
    void appendFlowEndpoint(const FlowEndpoint& e) { m_flowEndpoints.push_back(e); }
    void appendBeginEnd(const BeginEnd& e) { m_beginEnds.push_back(e); }

    TraceMetadata& metadata() { return m_trace->m_metadata; }
    Diagnostics& diagnostics() { return m_trace->m_diagnostics; }
    ImportStats& stats() { return m_trace->m_stats; }
    void setAllocatorSnapshot(std::shared_ptr<const AllocatorSnapshot> s) {
        m_trace->m_allocator = std::move(s);
    }
    void setEventSource(std::shared_ptr<const EventSource> source) { m_source = std::move(source); }
    /// Added to every timestamp at finalize (baseTimeNanoseconds of relative-time traces).
    void setTimeBase(int64_t ns) { m_timeBase = ns; }

    /// An immutable copy of everything appended so far; the builder stays usable.
    [[nodiscard]] std::shared_ptr<const Trace> snapshot() const;
    /// A copy of everything appended so far (a plain copy of the columns), to be finished
    /// elsewhere: snapshot() in two halves, so that a caller can finish the copy on another
    /// thread while this builder keeps appending (progressive open).
    [[nodiscard]] TraceBuilder clone() const;
    /// Finalizes and hands over the data; the builder is empty afterwards. With `stop`, the
    /// finaliser checks it between its stages and returns nullptr once it is set (a
    /// progressive open's copy of a cancelled import).
    [[nodiscard]] std::shared_ptr<const Trace> finish(const std::atomic<bool>* stop = nullptr);

private:
    struct KeyHash {
        size_t operator()(const std::pair<uint32_t, RowKey>& k) const noexcept;
    };
    struct KeyEq {
        bool operator()(const std::pair<uint32_t, RowKey>& a,
                        const std::pair<uint32_t, RowKey>& b) const noexcept {
            return a.first == b.first && a.second == b.second;
        }
    };

    friend class TraceFinalizer;

    std::unique_ptr<Trace> m_trace;
    std::unordered_map<std::pair<uint32_t, RowKey>, uint32_t, KeyHash, KeyEq> m_processIndex;
    std::unordered_map<std::pair<uint32_t, RowKey>, uint32_t, KeyHash, KeyEq> m_trackIndex;
    std::vector<FlowEndpoint> m_flowEndpoints;
    std::vector<BeginEnd> m_beginEnds;
    std::vector<uint32_t> m_counterSampleSeries;  // series of each counter sample, by arrival
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> m_counterIndex;
    std::shared_ptr<const EventSource> m_source;
    int64_t m_timeBase = 0;
};

} // namespace stallscope::model
