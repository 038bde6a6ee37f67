#pragma once
// Memory in traces recorded with profile_memory=True (the TensorBoard plugin's Memory view):
// per device the allocated and reserved peaks (when, in which step), what was live at the
// allocated peak by the operator and the Python frame that allocated it, a per-operator table
// (allocations, bytes, self and total increase), the allocation events, the headroom against
// the device's memory and what scales with the batch. Read from the `[memory]` events alone
// (model::MemorySample): an allocation belongs to the innermost operator whose range on its
// thread holds it; a free matches the live block at its address.
#include "stallscope/analysis/analysis.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stallscope::analysis {

/// One `[memory]` event of a device, with what the replay learnt about it.
struct MemoryEventRow {
    int64_t ts = 0;
    int64_t bytes = 0;           // > 0 allocation, < 0 free
    int64_t totalAllocated = -1; // as the event says (-1: not said)
    int64_t totalReserved = -1;
    uint64_t addr = 0;
    model::SliceId op;    // the innermost operator holding it (invalid: none)
    model::SliceId frame; // the innermost Python frame of the program's code holding it
                          // (not a "<built-in ...>" wrapper; invalid: none)
    int64_t freedAt = -1; // allocations: when the block was freed (-1: not in the trace)
    uint32_t stack = 0;   // allocator snapshots: the event's stack (model::AllocatorSnapshot)
    uint8_t category = 0; // memory timelines: model::memoryCategoryName index + 1 (0: none)
};

/// An allocator snapshot's segments of one device when it was taken (model::AllocatorSnapshot).
struct AllocatorState {
    int64_t reserved = 0, allocated = 0, active = 0, requested = 0; // sums over segments
    uint64_t segments = 0, largeSegments = 0, expandableSegments = 0;
    uint64_t blocksAllocated = 0, blocksPendingFree = 0, blocksInactive = 0;
    int64_t inactiveBytes = 0;   // free blocks inside segments (cached)
    int64_t largestInactive = 0; // the largest one: the largest allocation that fits unsplit
    // Segments with no active block: the cache torch.cuda.empty_cache() would return ...
    uint64_t emptySegments = 0;
    int64_t emptySegmentBytes = 0;
    // ... and free blocks in segments that also hold allocations: fragmentation.
    int64_t fragmentBytes = 0;
    int64_t largestFragment = 0;           // the largest of those
    std::optional<bool> expandableSetting; // allocator_settings expandable_segments
};

/// An out-of-memory event of an allocator snapshot's history.
struct MemoryOom {
    int64_t ts = 0;
    int64_t requested = 0;   // the allocation that failed
    int64_t deviceFree = -1; // what the device had free then (-1: not said)
    uint32_t stack = 0;
};

/// Bytes live at the peak that one operator or frame allocated.
struct MemoryLiveGroup {
    std::string name;
    int64_t bytes = 0;
    uint64_t blocks = 0;
    model::SliceId example; // the largest block's operator or frame range
};

/// The TensorBoard plugin's memory statistics per operator name: its own allocations and
/// frees (the innermost operator's) and the increase inside it at any depth.
struct MemoryOperatorRow {
    std::string name;
    uint64_t calls = 0; // ranges of this name holding at least one event (at any depth)
    uint64_t allocations = 0, frees = 0;
    int64_t allocatedBytes = 0, freedBytes = 0; // freedBytes >= 0
    int64_t selfIncrease = 0;                   // allocatedBytes - freedBytes
    int64_t totalIncrease = 0; // every event inside a range of this name, at any depth
};

/// What to do about the memory, each only when its premise holds in the trace.
struct MemoryAdvice {
    std::string id;   // "near_capacity", "cache_held", "batch_headroom"
    std::string text; // what the trace shows (figures recomputable from the events)
    std::string fix;  // the PyTorch change
};

struct DeviceMemory {
    int16_t deviceType = 1; // 1 CUDA (the GPU), 0 the host
    int32_t device = -1;    // GPU id; -1 for the host
    std::string label;      // "GPU 0", "host"
    uint64_t events = 0, allocations = 0, frees = 0;
    int64_t allocatedBytes = 0, freedBytes = 0; // sums of the events' sizes (freedBytes >= 0)
    // Peaks of the events' totals inside the window (-1 when the events do not say).
    int64_t peakAllocated = -1, peakAllocatedAt = 0;
    int64_t peakReserved = -1, peakReservedAt = 0;
    int64_t allocatedAtPeakReserved = -1; // Total Allocated when reserved peaked
    int64_t peakStep = -1;                // the step holding the allocated peak (-1: none)
    int64_t capacity = 0;                 // deviceProperties totalGlobalMem (0: not said)
    // Live at the allocated peak: blocks whose allocation the trace shows, grouped; the rest
    // of the peak was allocated before the trace began (not attributable).
    std::vector<MemoryLiveGroup> liveByOperator, liveByFrame; // by bytes, descending
    // Memory timelines: what each tensor category held at the peak (blocks: the category's
    // tensors then), by bytes, descending.
    std::vector<MemoryLiveGroup> liveByCategory;
    int64_t liveAttributed = 0, liveBeforeTrace = 0;
    std::vector<MemoryOperatorRow> operators; // by total increase, descending
    // What scales with the batch: in each step with a backward pass, the bytes allocated
    // before its first backward operator and freed after it (activations kept for backward);
    // the largest such step. -1 when no step has a backward pass.
    int64_t activationBytes = -1;
    int64_t activationStep = -1;
    std::vector<MemoryEventRow> rows; // every event of the device, in time order
    // The largest blocks live at the allocated peak that the events allocated: rows, largest
    // first (at most kLargestAtPeak).
    std::vector<size_t> largestAtPeak;
    static constexpr size_t kLargestAtPeak = 20;
    std::optional<AllocatorState> allocator; // allocator snapshots only
    std::vector<MemoryOom> ooms;
    std::vector<MemoryAdvice> advice;
};

struct MemoryAnalysis {
    std::vector<DeviceMemory> devices; // GPUs by id, then the host
    std::vector<std::string> notes;    // what the events could not tell
    [[nodiscard]] bool empty() const { return devices.empty(); }
};

/// Thresholds of the advice (docs/analysis.md "Memory").
struct MemoryThresholds {
    double nearCapacity = 0.90;   // peak reserved / device memory: near the limit
    double cacheHeldShare = 0.25; // (reserved - allocated) / reserved at the reserved peak
    int64_t cacheHeldMinBytes = int64_t(1) << 30; // ... and at least this much held
    double headroomMinGrowth = 1.5; // the batch could grow at least this much to be said
};

/// The memory of `r`'s window in `t` (peaks inside the window; the replay of frees and
/// what was live runs from the trace's first event).
MemoryAnalysis analyzeMemory(const model::Trace& t, const AnalysisResult& r,
                             const MemoryThresholds& thresholds = {});

} // namespace stallscope::analysis
