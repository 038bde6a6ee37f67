#pragma once
// The immutable trace model (../shared/spec/style.md "The model"): struct-of-arrays tables,
// each track's slices contiguous and sorted by (start asc, duration desc), int64 ns,
// interned strings, strong ids, raw args read back on demand through an EventSource.
// Built by TraceBuilder; shared with views as std::shared_ptr<const Trace>.
#include "stallscope/model/allocator_snapshot.h"
#include "stallscope/model/diagnostics.h"
#include "stallscope/model/event_kind.h"
#include "stallscope/model/event_source.h"
#include "stallscope/model/ids.h"
#include "stallscope/model/string_pool.h"
#include "stallscope/model/time_math.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stallscope::model {

/// A pid or tid as written: an integer, or a string that is not an integer ("Spans").
struct RowKey {
    int64_t number = 0;
    StringId text;  // valid when the key is a string
    [[nodiscard]] bool isString() const { return text.valid(); }
    bool operator==(const RowKey&) const = default;
};

enum class TrackKind : uint8_t { CpuThread, GpuStream, Other };

struct ProcessInfo {
    RowKey key;
    StringId name;            // process_name metadata
    StringId labels;          // process_labels metadata ("CPU", "GPU 0")
    int64_t sortIndex = 0;
    bool hasSortIndex = false;
    int32_t gpuDevice = -1;   // device index when this process is a GPU row
};

struct TrackInfo {
    ProcessId process;
    RowKey key;
    StringId name;            // thread_name metadata, or derived ("stream 7")
    int64_t sortIndex = 0;
    bool hasSortIndex = false;
    TrackKind kind = TrackKind::CpuThread;
    uint32_t sliceBegin = 0, sliceEnd = 0;     // [begin, end) in the slice table
    uint32_t instantBegin = 0, instantEnd = 0; // [begin, end) in the instant table
    uint32_t endIndexBegin = 0;                // first entry of this track in the end index
    uint16_t maxDepth = 0;
    // Kineto's "Stream Sync" row of a stream (2026: its cuda_sync events on tid = stream +
    // 1,000,000 of the GPU, so that they do not overlap the stream's kernels): the stream's
    // track; invalid for every other track. Shown under the stream, counted as part of it.
    TrackId syncOf;
};

/// Slice flags.
enum SliceFlag : uint8_t {
    kSliceFromBeginEnd = 1u << 0,     // made from a B/E pair
    kSliceDurationClamped = 1u << 1,  // negative or missing duration, set to 0
    kSliceCrossesParent = 1u << 2,    // starts inside its parent and ends after it
    kSliceUnterminated = 1u << 3,     // B without E, closed at the trace end
};

/// Slices (X events and B/E pairs), struct of arrays. After finalize the rows of one
/// track are contiguous and sorted by (start asc, dur desc).
struct SliceTable {
    std::vector<int64_t> start;       // ns
    std::vector<int64_t> dur;         // ns, >= 0
    std::vector<TrackId> track;
    std::vector<StringId> name;
    std::vector<StringId> category;   // as written ("cpu_op", "Operator", ...)
    std::vector<SliceId> parent;      // enclosing slice on the same track
    std::vector<uint64_t> srcOffset;  // event text in the source
    std::vector<uint32_t> srcLength;
    std::vector<uint32_t> correlation;// args.correlation, kNoCorrelation when absent
    std::vector<uint64_t> extra;      // kind-specific: see SliceExtra
    std::vector<EventKind> kind;
    std::vector<uint8_t> flags;
    std::vector<uint16_t> depth;

    static constexpr uint32_t kNoCorrelation = UINT32_MAX;

    [[nodiscard]] size_t size() const { return start.size(); }
    void reserve(size_t n);
    void resize(size_t n);
    void clear() { resize(0); }
    [[nodiscard]] size_t memoryBytes() const;
    [[nodiscard]] int64_t end(size_t i) const { return satAdd(start[i], dur[i]); }
};

/// The per-slice `extra` word: bytes for copies and memsets, occupancy figures for
/// kernels, the External id for CPU-side events.
struct SliceExtra {
    static uint64_t packKernel(float blocksPerSm, float estOccupancyPct);
    static float blocksPerSm(uint64_t extra);
    static float estOccupancyPct(uint64_t extra);  // < 0 when absent
    static constexpr uint64_t kNone = UINT64_MAX;
};

static_assert(
    sizeof(int64_t) * 2 + sizeof(TrackId) + sizeof(StringId) * 2 + sizeof(SliceId) +
            sizeof(uint64_t) + sizeof(uint32_t) * 2 + sizeof(uint64_t) + sizeof(EventKind) +
            sizeof(uint8_t) + sizeof(uint16_t) ==
        60,
    "per-slice bytes: keep the model within ../shared/spec/performance.md's 64 bytes per event");

struct InstantTable {
    std::vector<int64_t> ts;
    std::vector<TrackId> track;
    std::vector<StringId> name;
    std::vector<StringId> category;
    std::vector<char> scope;          // 't' thread, 'p' process, 'g' global
    std::vector<uint64_t> srcOffset;
    std::vector<uint32_t> srcLength;

    [[nodiscard]] size_t size() const { return ts.size(); }
    [[nodiscard]] size_t memoryBytes() const;
    void clear();
};

enum class FlowKind : uint8_t { Launch, ForwardBackward, Other };

struct Flow {
    SliceId from;
    SliceId to;
    StringId category;
    FlowKind kind = FlowKind::Other;
};

struct CounterSeries {
    ProcessId process;
    StringId name;  // the C event's name ("GPU 0 Utilization")
    StringId key;   // the arg key holding the value ("GPU Utilization")
    uint32_t sampleBegin = 0, sampleEnd = 0;
};

struct CounterSamples {
    std::vector<int64_t> ts;
    std::vector<double> value;
    [[nodiscard]] size_t size() const { return ts.size(); }
};

/// `[memory]` instants of the allocator (profile_memory=True).
struct MemorySample {
    int64_t ts = 0;
    int64_t bytes = 0;             // + allocation, - free
    int64_t totalAllocated = -1;
    int64_t totalReserved = -1;
    int16_t deviceType = -1;       // 0 CPU, 1 CUDA
    int16_t deviceId = -1;
    ProcessId process;
    TrackId track;        // the thread that allocated or freed (invalid: not said)
    uint64_t addr = 0;    // the block's address (0: not said); frees match by it
    uint32_t stack = 0;   // allocator snapshots: the event's AllocatorSnapshot stack (0: none)
    uint8_t category = 0; // memory timelines: memoryCategoryName's index + 1 (0: not said)
};

struct DeviceProperties {
    int32_t id = -1;
    std::string name;
    int64_t totalGlobalMem = 0;
    int32_t computeMajor = 0, computeMinor = 0;
    int32_t numSms = 0;
    int32_t maxThreadsPerBlock = 0, maxThreadsPerMultiprocessor = 0;
    int32_t regsPerBlock = 0, regsPerMultiprocessor = 0;
    int32_t warpSize = 0;
    int64_t sharedMemPerBlock = 0, sharedMemPerMultiprocessor = 0;
};

struct DistributedInfo {
    bool present = false;
    std::string backend;
    int32_t rank = -1;
    int32_t worldSize = -1;
    std::string rawJson;
};

/// Counts of what the input contained, before any interpretation.
struct ImportStats {
    uint64_t entries = 0;                         // elements of the event array
    std::map<std::string, uint64_t> byPhase;      // "X" -> n
    std::map<std::string, uint64_t> byCategory;   // cat as written -> n
    uint64_t inputBytes = 0;                      // bytes read (compressed size for .gz)
    uint64_t textBytes = 0;                       // uncompressed JSON bytes
    double seconds = 0;                           // import wall time incl. finalize
    double finalizeSeconds = 0;                   // of which sorting, nesting, indexes
};

struct TraceMetadata {
    std::string formatName;        // "Kineto JSON", "legacy autograd profiler JSON", ...
    std::string sourcePath;
    bool compressed = false;
    std::optional<int64_t> baseTimeNs;  // baseTimeNanoseconds when present
    std::string displayTimeUnit;
    std::string traceName;
    std::optional<int64_t> schemaVersion;
    std::vector<DeviceProperties> devices;
    DistributedInfo distributed;
    std::vector<std::pair<std::string, std::string>> other;  // top-level key -> raw JSON
    // Where the event array ends in the uncompressed source text, for writers that copy the
    // original text (the annotated trace): the offset of the ']' that closes it when
    // eventsArrayClosed, else just after the last complete element, or the '[' when there
    // is none (a bare array may omit the ']'; truncated input ends early; what follows is
    // separators or an incomplete event).
    bool bareArray = false;             // an array of events with no object around it
    bool eventsArrayClosed = false;
    uint64_t eventsArrayEnd = 0;
    TextOpener reopenText;              // the file's text again; empty for memory and live traces
    // Read from another profiler's records (Nsight, RPD, rocprofv3) through their Kineto form
    // (importers/src/kineto_text.h): ImportStats::textBytes is that form's size, inputBytes
    // the file's.
    bool translated = false;
};

/// Correlation index: launch call <-> GPU work, by args.correlation.
struct CorrelationEntry {
    uint32_t correlation;
    SliceId slice;
    auto operator<=>(const CorrelationEntry&) const = default;
};

class Trace {
public:
    static constexpr uint32_t kEndIndexStride = 64;

    Trace();
    ~Trace();
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    const StringPool& strings() const { return m_strings; }
    std::string_view str(StringId id) const { return m_strings.view(id); }

    const std::vector<ProcessInfo>& processes() const { return m_processes; }
    const std::vector<TrackInfo>& tracks() const { return m_tracks; }
    const ProcessInfo& process(ProcessId id) const { return m_processes[id.index()]; }
    const TrackInfo& track(TrackId id) const { return m_tracks[id.index()]; }
    /// Tracks in display order: processes by sort index, then threads by sort index.
    const std::vector<TrackId>& displayOrder() const { return m_displayOrder; }

    const SliceTable& slices() const { return m_slices; }
    const InstantTable& instants() const { return m_instants; }
    const std::vector<Flow>& flows() const { return m_flows; }
    const std::vector<CounterSeries>& counterSeries() const { return m_counterSeries; }
    const CounterSamples& counterSamples() const { return m_counterSamples; }
    const std::vector<MemorySample>& memorySamples() const { return m_memory; }
    const TraceMetadata& metadata() const { return m_metadata; }
    /// The allocator snapshot this trace was read from (null for event traces).
    const AllocatorSnapshot* allocatorSnapshot() const { return m_allocator.get(); }
    const Diagnostics& diagnostics() const { return m_diagnostics; }
    const ImportStats& importStats() const { return m_stats; }

    /// Slices of one track, as a [begin, end) index range.
    [[nodiscard]] std::pair<uint32_t, uint32_t> sliceRange(TrackId t) const {
        return {m_tracks[t.index()].sliceBegin, m_tracks[t.index()].sliceEnd};
    }
    /// First slice of track `t` whose end is >= `ns` (start of a visible-range walk).
    /// Uses the per-track running maximum of ends, so it is a binary search, not a scan.
    [[nodiscard]] uint32_t firstSliceEndingAtOrAfter(TrackId t, int64_t ns) const;
    /// First slice of track `t` whose start is > `ns`.
    [[nodiscard]] uint32_t firstSliceStartingAfter(TrackId t, int64_t ns) const;

    /// The launch call (runtime/driver) of a GPU slice, by correlation.
    [[nodiscard]] SliceId launchOf(SliceId gpuSlice) const;
    /// GPU work launched by a runtime/driver call (a graph launch may start several).
    [[nodiscard]] std::span<const CorrelationEntry> gpuWorkOf(SliceId launchSlice) const;
    /// Innermost CPU op / user annotation enclosing `slice` on its thread.
    [[nodiscard]] SliceId enclosingOp(SliceId slice) const;
    const std::vector<CorrelationEntry>& launchIndex() const { return m_launchByCorrelation; }
    const std::vector<CorrelationEntry>& gpuIndex() const { return m_gpuByCorrelation; }

    /// Earliest start and latest end over all slices, instants and counters (ns).
    [[nodiscard]] int64_t startNs() const { return m_startNs; }
    [[nodiscard]] int64_t endNs() const { return m_endNs; }

    /// On-demand access to an event's arguments and raw text.
    bool sliceArgs(SliceId s, std::vector<ArgValue>& out, std::string& error) const;
    bool sliceRawText(SliceId s, std::string& out, std::string& error) const;
    /// The args of many slices at once (EventSource::argsOfMany): `each(i, ok, args)` once per
    /// slices[i], in any order; every call says not ok when the trace keeps no event text.
    void slicesArgs(const std::vector<SliceId>& slices, const EventSource::ArgsVisitor& each) const;
    const EventSource* eventSource() const { return m_source.get(); }

    /// Resident bytes of the model (tables, strings, indexes, event source index).
    [[nodiscard]] size_t memoryBytes() const;
    /// Number of events the model holds (slices + instants + counter samples + flows*2 +
    /// memory samples), the denominator of bytes/event.
    [[nodiscard]] size_t eventCount() const;

private:
    friend class TraceBuilder;
    friend class TraceFinalizer;

    StringPool m_strings;
    std::vector<ProcessInfo> m_processes;
    std::vector<TrackInfo> m_tracks;
    std::vector<TrackId> m_displayOrder;
    SliceTable m_slices;
    // Sparse visible-range index: for every kEndIndexStride slices of a track, the
    // maximum end of the track's slices up to and including that block.
    std::vector<int64_t> m_blockMaxEnd;
    InstantTable m_instants;
    std::vector<Flow> m_flows;
    std::vector<CounterSeries> m_counterSeries;
    CounterSamples m_counterSamples;
    std::vector<MemorySample> m_memory;
    std::vector<CorrelationEntry> m_launchByCorrelation;
    std::vector<CorrelationEntry> m_gpuByCorrelation;
    TraceMetadata m_metadata;
    Diagnostics m_diagnostics;
    ImportStats m_stats;
    std::shared_ptr<const EventSource> m_source;
    std::shared_ptr<const AllocatorSnapshot> m_allocator;
    int64_t m_startNs = 0;
    int64_t m_endNs = 0;
};

} // namespace stallscope::model
