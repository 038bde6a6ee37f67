// Helpers of the allocator snapshot model (allocator_snapshot.h).
#include "stallscope/model/allocator_snapshot.h"

#include <iterator>

namespace stallscope::model {

namespace {

bool endsWith(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// A frame of the torch package itself (site-packages/torch/..., or a source checkout).
bool inTorch(std::string_view file) {
    for (std::string_view p : {"/torch/", "\\torch\\"})
        if (file.find(p) != std::string_view::npos) return true;
    return false;
}

} // namespace

std::optional<uint32_t> AllocatorSnapshot::userFrame(uint32_t stackId) const {
    std::optional<uint32_t> firstPython;
    for (uint32_t f : stack(stackId)) {
        const SnapshotFrame& fr = frames[f];
        if (!endsWith(fr.filename, ".py")) continue;
        if (!inTorch(fr.filename)) return f;
        if (!firstPython) firstPython = f;
    }
    return firstPython;
}

std::string AllocatorSnapshot::frameText(uint32_t frame) const {
    const SnapshotFrame& f = frames[frame];
    std::string_view file = f.filename;
    // The last two components: "cs336_basics/model.py".
    size_t cut = std::string_view::npos;
    int seps = 0;
    for (size_t i = file.size(); i-- > 0;)
        if (file[i] == '/' || file[i] == '\\')
            if (++seps == 2) {
                cut = i;
                break;
            }
    if (cut != std::string_view::npos) file = file.substr(cut + 1);
    if (f.filename == "??" || f.filename.empty()) return f.name;
    return f.name + " (" + std::string(file) + ":" + std::to_string(f.line) + ")";
}

size_t AllocatorSnapshot::memoryBytes() const {
    size_t b =
        sizeof(*this) + frames.capacity() * sizeof(SnapshotFrame) + stackFrames.capacity() * 4 +
        stackBegin.capacity() * 4 + segments.capacity() * sizeof(SnapshotSegment) +
        blocks.capacity() * sizeof(SnapshotBlock) + entries.capacity() * sizeof(SnapshotEntry) +
        annotations.capacity() * sizeof(SnapshotAnnotation);
    for (const SnapshotFrame& f : frames) b += f.name.capacity() + f.filename.capacity();
    return b;
}

std::string memoryCategoryName(int index) {
    static const char* const kNames[] = {"parameter",       "optimizer state", "input",
                                         "temporary",       "activation",      "gradient",
                                         "autograd detail", "unknown"};
    if (index >= 0 && index < int(std::size(kNames))) return kNames[index];
    return "category " + std::to_string(index);
}

std::string_view blockStateName(BlockState s) {
    switch (s) {
    case BlockState::ActiveAllocated: return "active_allocated";
    case BlockState::ActivePendingFree: return "active_pending_free";
    case BlockState::Inactive: return "inactive";
    case BlockState::Other: break;
    }
    return "other";
}

std::string_view snapshotActionName(SnapshotAction a) {
    switch (a) {
    case SnapshotAction::Alloc: return "alloc";
    case SnapshotAction::FreeRequested: return "free_requested";
    case SnapshotAction::FreeCompleted: return "free_completed";
    case SnapshotAction::SegmentAlloc: return "segment_alloc";
    case SnapshotAction::SegmentFree: return "segment_free";
    case SnapshotAction::SegmentMap: return "segment_map";
    case SnapshotAction::SegmentUnmap: return "segment_unmap";
    case SnapshotAction::Oom: return "oom";
    case SnapshotAction::Snapshot: return "snapshot";
    case SnapshotAction::Other: break;
    }
    return "other";
}

} // namespace stallscope::model
