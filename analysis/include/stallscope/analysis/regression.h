#pragma once
// The regression gate of `analyze --baseline` and the measures a before -> after comparison
// states: facts about two analyses, not about how a report shows them.
#include "stallscope/analysis/analysis.h"

#include <cstdint>
#include <string>

namespace stallscope::analysis {

/// The time a comparison compares: the mean step, or the window when there are no steps.
int64_t comparedStepTimeNs(const AnalysisResult& a);
/// The GPU idle share of the window, averaged over the devices (0 without devices).
double meanGpuIdleShare(const AnalysisResult& a);

/// Step time (comparedStepTimeNs) may grow by at most `maxPct` percent, and the GPU idle share
/// (meanGpuIdleShare) by at most `maxPct` percentage points.
struct RegressionCheck {
    bool regressed = false;
    std::string reason; // one line when regressed
    double stepTimeChangePct = 0;
    double idleShareChangePts = 0;
};
RegressionCheck checkRegression(const AnalysisResult& before, const AnalysisResult& after,
                                double maxPct);

} // namespace stallscope::analysis
