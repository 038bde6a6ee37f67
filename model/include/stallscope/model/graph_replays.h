#pragma once
// CUDA/HIP graph replays: the GPU work one graph launch call (cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch; linked by correlation) started, one entry per stream it ran on, with
// Kineto's `graph id` (2025 and later; the Nsight importer writes it from graphId) read from
// the args of its first item. The timeline draws each as a range around its kernels and the
// findings say "inside graph N" of work in one (docs/analysis.md "CUDA graph replays").
#include "stallscope/model/ids.h"

#include <cstdint>
#include <vector>

namespace stallscope::model {

class Trace;

struct GraphReplay {
    SliceId launch;       // the graph launch call
    TrackId stream;       // the GPU stream (one entry per stream the replay used)
    int64_t graphId = -1; // -1: the trace does not say
    int64_t startNs = 0, endNs = 0;
    uint32_t items = 0; // GPU work items of this launch on this stream
    SliceId first;      // the first of them
};

/// The trace's graph replays, by (stream, start). The graph ids are read from at most one
/// event per replay, and not at all when the first 16 replays read have none.
std::vector<GraphReplay> graphReplays(const Trace& t);

/// The replay in `replays` (graphReplays' order) holding GPU slice `work` on its stream, or
/// null.
const GraphReplay* replayHolding(const std::vector<GraphReplay>& replays, const Trace& t,
                                 SliceId work);

} // namespace stallscope::model
