#pragma once
// The what-if replay (docs/analysis.md "What-if replay"): the analysed window replayed as a
// dependency graph (host threads with their launches and waits, streams, cross-stream
// waits) with fixes applied, predicting the window each fix leaves. analyze() uses it for
// the findings' savings and the waterfall; this entry point is for tests and tools.
#include "stallscope/analysis/analysis.h"

namespace stallscope::analysis {

/// The window of `device` (-1: the step thread of a CPU-only trace) as the replay predicts
/// it with `fixes` applied, in ns. With no fix it reproduces the measured window exactly.
/// Returns -1 when the device has no work in the window (or, for -1, there are no steps).
int64_t replayWindowNs(const model::Trace& trace, const AnalysisOptions& options, int32_t device,
                       FixSet fixes);

} // namespace stallscope::analysis
