#pragma once
// What one parse block produces: the block's events with block-local string and row
// ids, so blocks parse in parallel and merge into the TraceBuilder in file order.
#include "stallscope/model/diagnostics.h"
#include "stallscope/model/string_pool.h"
#include "stallscope/model/trace.h"
#include "stallscope/model/trace_builder.h"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace stallscope::importers {

/// pid/tid as written, with a block-local string id when it is a string.
struct LocalKey {
    int64_t number = 0;
    uint32_t text = UINT32_MAX;
    bool operator==(const LocalKey&) const = default;
};

enum class MetaKind : uint8_t {
    ProcessName,
    ProcessLabels,
    ProcessSortIndex,
    ThreadName,
    ThreadSortIndex,
};

struct MetaRecord {
    MetaKind kind;
    uint32_t process = 0;       // local process index
    uint32_t track = 0;         // local track index (thread metadata)
    uint32_t text = UINT32_MAX; // local string id (names, labels)
    int64_t number = 0;         // sort index
};

struct CounterRecord {
    uint32_t process;  // local process index
    uint32_t name;     // local string ids
    uint32_t key;
    int64_t ts;
    double value;
};

struct MemoryRecord {
    model::MemorySample sample;  // `process` holds the local process index
};

struct EventBatch {
    model::StringPool strings;

    std::vector<LocalKey> processes;                    // local process index -> pid
    std::vector<std::pair<uint32_t, LocalKey>> tracks;  // local track -> (process, tid)

    // Slices with block-local ids in track/name/category.
    model::SliceTable slices;
    model::InstantTable instants;
    std::vector<model::FlowEndpoint> flows;      // track/category local
    std::vector<model::BeginEnd> beginEnds;      // track/name/category local
    std::vector<CounterRecord> counters;
    std::vector<model::MemorySample> memory;     // process local
    std::vector<MetaRecord> metadata;

    // Statistics of what was written.
    uint64_t entries = 0;
    std::array<uint64_t, 128> phaseByChar{};     // single-character ASCII phases
    std::vector<std::pair<uint32_t, uint64_t>> otherPhases;  // multi-char / non-ASCII, local ids
    std::vector<uint64_t> categoryCount;         // by local string id

    model::Diagnostics diagnostics;

    /// Empties the batch but keeps its allocations for the next block.
    void clear() {
        strings.clear();
        processes.clear();
        tracks.clear();
        slices.clear();
        instants.clear();
        flows.clear();
        beginEnds.clear();
        counters.clear();
        memory.clear();
        metadata.clear();
        entries = 0;
        phaseByChar.fill(0);
        otherPhases.clear();
        categoryCount.clear();
        diagnostics = model::Diagnostics();
    }
};

} // namespace stallscope::importers
