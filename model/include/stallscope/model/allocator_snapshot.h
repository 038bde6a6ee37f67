#pragma once
// A PyTorch CUDA caching-allocator snapshot (torch.cuda.memory._dump_snapshot), as read by
// importers/src/memory_snapshot_importer.cpp: the allocator's state when the snapshot was
// taken (segments and their blocks) and the history it kept (device_traces), each with the
// stack that made it. ../shared/spec/formats.md and docs/analysis.md "Allocator snapshots".
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace stallscope::model {

struct SnapshotFrame {
    std::string name;     // function ("forward", "torch::unwind::unwind()")
    std::string filename; // "??" for native frames without a file
    int64_t line = 0;
};

enum class BlockState : uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Other };

struct SnapshotBlock {
    uint64_t address = 0;
    int64_t size = 0;
    int64_t requestedSize = 0;
    BlockState state = BlockState::Other;
    uint32_t stack = 0; // AllocatorSnapshot::stack id (0: no frames)
};

struct SnapshotSegment {
    int32_t device = 0;
    uint64_t address = 0;
    int64_t totalSize = 0, allocatedSize = 0, activeSize = 0, requestedSize = 0;
    int64_t stream = 0;
    bool large = true; // segment_type "large" (else "small": the 2 MiB pool)
    bool expandable = false;
    uint32_t blockBegin = 0, blockEnd = 0; // [begin, end) in AllocatorSnapshot::blocks
    uint32_t stack = 0;
};

enum class SnapshotAction : uint8_t {
    Alloc,
    FreeRequested,
    FreeCompleted, // also the older layouts' "free"
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Oom,
    Snapshot,
    Other
};

struct SnapshotEntry {
    int32_t device = 0;
    SnapshotAction action = SnapshotAction::Other;
    uint64_t addr = 0;
    int64_t size = 0;
    int64_t stream = 0;
    int64_t timeUs = -1;     // -1: the entry has no time_us (older layouts)
    int64_t deviceFree = -1; // oom: the bytes the device had free
    uint32_t stack = 0;
};

struct SnapshotAnnotation {
    int32_t device = 0;
    std::string stage; // "START", "END"
    std::string name;
    int64_t timeUs = -1;
};

struct AllocatorSnapshot {
    std::vector<SnapshotFrame> frames; // each distinct frame once
    // Stack i is frames[stackFrames[stackBegin[i]] ... stackFrames[stackBegin[i + 1] - 1]],
    // innermost first; stack 0 is the empty one.
    std::vector<uint32_t> stackFrames;
    std::vector<uint32_t> stackBegin{0, 0};
    std::vector<SnapshotSegment> segments;
    std::vector<SnapshotBlock> blocks;
    std::vector<SnapshotEntry> entries; // device_traces, device by device, each in order
    std::vector<SnapshotAnnotation> annotations;
    std::optional<bool> expandableSegments; // allocator_settings (nullopt: not said)
    std::string allocConf;                  // PYTORCH_CUDA_ALLOC_CONF as recorded
    bool segmentsOnly = false; // torch.cuda.memory_snapshot(): a list of segments, no history

    [[nodiscard]] size_t stackCount() const { return stackBegin.size() - 1; }
    [[nodiscard]] std::span<const uint32_t> stack(uint32_t id) const {
        if (id + 1 >= stackBegin.size()) return {};
        return std::span<const uint32_t>(stackFrames)
            .subspan(stackBegin[id], stackBegin[id + 1] - stackBegin[id]);
    }
    /// The innermost frame of the program's code in a stack: the first Python frame (a
    /// ".py" file) outside the torch package, else the first Python frame; nullopt when the
    /// stack has none.
    [[nodiscard]] std::optional<uint32_t> userFrame(uint32_t stackId) const;
    /// "name (file:line)" of a frame, the file shortened to its last two components.
    [[nodiscard]] std::string frameText(uint32_t frame) const;
    [[nodiscard]] size_t memoryBytes() const;
};

/// The tensor categories of torch.profiler's memory timeline, by their index in the raw
/// export (torch/profiler/_memory_profiler.py, the order of _CATEGORY_TO_COLORS):
/// "parameter", "optimizer state", "input", "temporary", "activation", "gradient",
/// "autograd detail", "unknown"; "category N" beyond them.
std::string memoryCategoryName(int index);

std::string_view blockStateName(BlockState s);
std::string_view snapshotActionName(SnapshotAction a);

} // namespace stallscope::model
