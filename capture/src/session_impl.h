#pragma once
// CaptureSession's state, shared by session.cpp (receiving, snapshots) and
// session_finish.cpp (closing the JSON, writing the output).
//
// Locking: a source's string table and sequence numbers are guarded by its own mutex
// (decoding runs outside the session locks); `mutex` guards the log, the pending events,
// the statistics and the metadata; `builderMutex` guards the TraceBuilder. Receivers only
// take `builderMutex` with try_lock (or when the pending queue is full), so a snapshot
// that finalizes a copy of the builder never blocks the reader threads for long.
#include "session_events.h"

#include "stallscope/capture/session.h"
#include "stallscope/model/trace_builder.h"

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

namespace stallscope::capture {

namespace detail {

struct SourceState {
    std::mutex mutex;
    bool hello = false;
    pb::Hello info;
    std::deque<std::string> strings;  // stable addresses: pending events point into them
    bool anyBatch = false;
    uint64_t nextSequence = 0;
    uint64_t records = 0, dropped = 0;
    std::unordered_map<uint32_t, uint32_t> correlationMap;  // when renumbered
    std::string bye;                                        // "exit", "stopped", "crash"
    uint64_t byeRecords = 0;
};

struct FlowSide {
    uint32_t correlation;
    int64_t ts, pid, tid;
};

/// A Batch turned into event text and pending rows (outside the session locks).
struct DecodedBatch {
    std::string text;
    std::vector<PendingEvent> events;
    uint64_t bad = 0, missing = 0;
    std::vector<std::string> problems;
};

/// One metadata event (process_name, thread_name, ...): written into the file at finish
/// and applied to the builder the same way the importer applies it.
struct MetaEntry {
    enum class Kind { ProcessName, ProcessLabels, ProcessSortIndex, ThreadName, ThreadSortIndex } kind;
    int64_t pid = 0, tid = 0;
    std::string text;
    int64_t number = 0;
};

model::DeviceProperties deviceProperties(const pb::Device& d);

} // namespace detail

struct CaptureSession::Impl {
    using DeviceTable = std::map<int32_t, pb::Device>;
    static constexpr size_t kDrainAt = 4096;          // pending events before a receiver drains
    static constexpr size_t kMaxPending = 1u << 20;   // beyond it receivers wait (back-pressure)
    static constexpr size_t kMaxProblems = 20;

    std::filesystem::path logPath;
    int logFd = -1;
    int64_t baseNs = 0;
    std::shared_ptr<const model::EventSource> logSource;

    // Sources: a deque so that references stay valid while sources are added.
    mutable std::mutex sourcesMutex;
    std::deque<detail::SourceState> sources;

    mutable std::mutex mutex;
    bool finished = false, logFailed = false;
    uint64_t logBytes = 0, eventsWritten = 0;
    std::vector<detail::PendingEvent> pending;
    SessionStats stats;
    std::map<std::string, uint64_t> dropReasons;
    DeviceTable devices;
    std::shared_ptr<const DeviceTable> deviceTable = std::make_shared<const DeviceTable>();
    std::map<std::pair<int64_t, int64_t>, std::string> threadNames;
    std::map<int64_t, std::string> processNames;
    std::map<int32_t, bool> gpuDevicesSeen;
    std::vector<std::pair<std::string, std::string>> info;  // setInfo: key -> JSON
    std::vector<detail::FlowSide> launches, gpuWork;
    bool metadataDirty = true;
    std::atomic<int> correlationOwner{-1};  // the source whose correlation ids stay as sent
    std::atomic<uint32_t> nextCorrelation{0x80000000u};

    mutable std::mutex builderMutex;
    model::TraceBuilder builder;

    // session.cpp
    void problem(const std::string& what);  // caller holds `mutex`
    bool receiveBatch(uint32_t source, detail::SourceState& s, const pb::Batch& b);
    void decodeBatch(uint32_t source, detail::SourceState& s, const pb::Batch& b, const DeviceTable& devs,
                     detail::DecodedBatch& out);  // caller holds s.mutex
    void receiveHello(uint32_t source, detail::SourceState& s, const pb::Hello& h);
    void receiveDevice(const pb::Device& d);
    bool appendEvents(std::string& text, std::vector<detail::PendingEvent>& events);
    uint32_t mapCorrelation(uint32_t source, detail::SourceState& s, uint32_t correlation);
    void drainLocked();           // caller holds builderMutex
    /// Process and thread names, devices; with `streams` also the GPU streams' names and
    /// order (at finish, once every track exists). Caller holds builderMutex.
    std::vector<detail::MetaEntry> metadataLocked(bool streams, bool force);
    void applyMetadata(const std::vector<detail::MetaEntry>& entries);  // caller holds builderMutex
    // session_finish.cpp
    std::string closingText();    // caller holds builderMutex
    std::string statsJson();      // caller holds mutex
    std::shared_ptr<const model::Trace> finalTrace;
};

} // namespace stallscope::capture
