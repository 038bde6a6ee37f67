#pragma once
// Flame graphs (call trees merged by name path) of a time range: CPU time of the thread
// stacks, or GPU time charged to the CPU stack that launched each kernel/copy/memset.
//
// Node names are StringIds of the trace. Two nodes have no name of their own and use the
// invalid StringId: the root (index 0, "all") and, in GPU mode, the root's child that holds
// the GPU work without a launch call ("(no launch call)"). flameNodeName() spells all three.
#include "stallscope/model/event_kind.h"
#include "stallscope/model/trace.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace stallscope::analysis {

enum class FlameMode { CpuTime, GpuTime };

struct FlameNode {
    model::StringId name;          // invalid for the root and "(no launch call)"
    int32_t parent = -1;           // -1 for the root; always < the node's own index
    int32_t depth = 0;             // 0 for the root
    int64_t totalNs = 0;           // inclusive
    int64_t selfNs = 0;            // total - sum(children totals), >= 0
    uint64_t count = 0;            // slices merged into the node
    std::vector<int32_t> children; // by total descending, then by name
    model::EventKind kind = model::EventKind::Other; // kind of the first merged slice
    bool steps = false;            // ProfilerStep#N of every N, merged ("ProfilerStep#*")
};

struct FlameGraph {
    FlameMode mode = FlameMode::CpuTime;
    std::vector<FlameNode> nodes;   // nodes[0] is the root ("all")
    int64_t totalNs = 0;            // == nodes[0].totalNs
    int64_t startNs = 0, endNs = 0; // the range the graph was built for
    int32_t device = -1;            // GPU mode: the device, -1 = all
    int32_t maxDepth = 0;           // deepest node
    [[nodiscard]] bool empty() const { return totalNs <= 0; }
};

/// Builds the flame graph of the slices *starting* in [startNs, endNs) (full durations).
///
/// CpuTime: slices of CPU-thread tracks; a slice adds its duration to the node of its name
/// path from the top of its thread's stack, identical paths merged across threads. Ancestors
/// that start before the range still give the path (as context) and receive the time of
/// their descendants in the range, so the root total is the sum of the durations of the
/// range's outermost slices (the depth-0 ones when no slice straddles the range start).
///
/// GpuTime: each kernel/memcpy/memset on the GPU rows of `device` (all when -1) adds its
/// duration along the path: CPU ancestors of its launch call (outermost first), the launch
/// call itself (cudaLaunchKernel...), then a leaf named after the kernel/copy. Work without
/// a launch call goes under "(no launch call)". The root total is the GPU work time.
///
/// ProfilerStep#N frames of different N are one frame, "ProfilerStep#*", so the operators
/// of every step add up (as in the TensorBoard plugin's operator view).
///
/// One pass over the range's slices with a flat hash map keyed by (parent node, name).
FlameGraph buildFlameGraph(const model::Trace& trace, FlameMode mode, int64_t startNs,
                           int64_t endNs, int32_t device = -1);

/// The display name of a node: the slice name, "all" for the root, "(no launch call)",
/// "ProfilerStep#*" for merged steps.
std::string_view flameNodeName(const model::Trace& trace, const FlameGraph& graph, int32_t node);

/// The first frame that is not a wrapper: from the root down, while a frame has one child
/// holding at least `share` of its time (Python wrappers, `_call_impl`, the training loop),
/// that child; the frame where the time first splits (or a leaf). 0 when the root splits.
int32_t firstBranchingNode(const FlameGraph& graph, double share = 0.99);

/// True when `node` is a GPU work leaf (kernel, memcpy or memset).
bool isGpuLeaf(const FlameGraph& graph, int32_t node);

} // namespace stallscope::analysis
