#pragma once
// Charges every idle nanosecond of a device inside the window to exactly one cause
// (docs/analysis.md "Idle-cause attribution").
#include "analysis_context.h"

namespace stallscope::analysis::detail {

/// Step accounting tiles: step i runs from its start to the next step's start, the last
/// one to the window end; tiles are clipped to the window.
std::vector<Interval> stepTiles(const Context& c);

/// `d` may be a host-only stand-in (no work, device < 0, mainLaunchThread set): then the
/// whole window is one gap charged along that thread, without the leading-gap rule.
IdleBreakdown attributeIdle(const Context& c, const DeviceActivity& d, const std::vector<Interval>& tiles,
                            std::vector<std::array<int64_t, kIdleCauseCount>>& perStep);

/// The CPU-only reading (AnalysisResult::hostOnly): the window attributed along the thread
/// that runs the steps. Needs steps.
HostOnlyBreakdown hostOnlyBreakdown(const Context& c, const std::vector<Interval>& tiles);

} // namespace stallscope::analysis::detail
