#pragma once
// Leading warm-up in the window (docs/analysis.md "Warm-up"), found from the idle time the
// attribution charged to one-off work.
#include "analysis_context.h"

#include <optional>

namespace stallscope::analysis::detail {

/// A warm-up step's one-off idle time is at least this share of the step.
constexpr double kWarmupStepShare = 0.25;
/// Without steps: a leading stretch counts when one-off idle covers at least this share of it
/// and at least kWarmupMinShare of the window.
constexpr double kWarmupStretchCover = 0.5;
constexpr double kWarmupMinShare = 0.05;
/// Without steps, a steady part shorter than this share of the window is none: the window
/// is warm-up. (With steps, any step after the warm-up is a steady part.)
constexpr double kWarmupMinSteadyShare = 0.10;

/// The warm-up of the window `c` resolved, from `r`'s devices (their idle attribution); null
/// when there is none. Only for the default (Steps) window.
std::optional<Warmup> findWarmup(const Context& c, const AnalysisResult& r);

} // namespace stallscope::analysis::detail
