#pragma once
// What a GPU stream waited on, as Kineto (2025 and later) records it: a cuda_sync "Stream Wait
// Event" on the waiting stream whose args name the stream the event was recorded on
// (`wait_on_stream`) and the cudaEventRecord call that recorded it
// (`wait_on_cuda_event_record_corr_id`). The event completes when the work launched on that
// stream before the record call has run, so every later launch on the waiting stream runs
// after that work: the wait is attributed to it exactly (docs/analysis.md "Idle causes").
#include "stallscope/model/ids.h"

#include <cstdint>
#include <vector>

namespace stallscope::analysis::detail {

class Context;

struct StreamWait {
    uint32_t sync = 0;      // the cuda_sync slice
    model::TrackId waiting; // the stream that waited (a Stream Sync row's stream)
    int64_t atNs = 0;       // the wait's start (the host's cudaStreamWaitEvent)
    int64_t onStream = -1;  // wait_on_stream
    model::SliceId record;  // the cudaEventRecord call (invalid: not in the trace)
    model::SliceId awaited; // the last work launched on onStream before the record
};

/// The trace's resolved stream waits, by (waiting stream, start); empty for traces without
/// them (one string lookup).
std::vector<StreamWait> findStreamWaits(const Context& c);

/// Of the waits on `work`'s stream issued before its launch call (at most the last 8), the one
/// whose awaited work ended last inside (lo, hi], or null.
const StreamWait* waitEndingIn(const Context& c, uint32_t work, model::SliceId launch, int64_t lo,
                               int64_t hi);

} // namespace stallscope::analysis::detail
