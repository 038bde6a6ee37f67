#include "stallscope/analysis/regression.h"

#include "stallscope/base/text_format.h"

#include <algorithm>
#include <cstdio>

namespace stallscope::analysis {

int64_t comparedStepTimeNs(const AnalysisResult& a) {
    return a.stepTimes.count ? a.stepTimes.meanNs : a.window.length();
}

double meanGpuIdleShare(const AnalysisResult& a) {
    if (a.devices.empty()) return 0;
    double s = 0;
    for (const auto& d : a.devices)
        s += double(d.idleNs) / double(std::max<int64_t>(1, d.windowNs));
    return s / double(a.devices.size());
}

RegressionCheck checkRegression(const AnalysisResult& before, const AnalysisResult& after,
                                double maxPct) {
    using base::formatDuration;
    RegressionCheck r;
    const int64_t sb = comparedStepTimeNs(before), sa = comparedStepTimeNs(after);
    r.stepTimeChangePct = sb > 0 ? 100.0 * double(sa - sb) / double(sb) : 0;
    r.idleShareChangePts = 100.0 * (meanGpuIdleShare(after) - meanGpuIdleShare(before));
    char line[256];
    if (r.stepTimeChangePct > maxPct) {
        std::snprintf(line, sizeof line, "step time regressed %+.1f%% (%s -> %s), more than %.1f%%",
                      r.stepTimeChangePct, formatDuration(sb).c_str(), formatDuration(sa).c_str(),
                      maxPct);
        r.regressed = true;
        r.reason = line;
    } else if (r.idleShareChangePts > maxPct) {
        std::snprintf(line, sizeof line,
                      "GPU idle share regressed %+.1f points (%.1f%% -> %.1f%%), more than %.1f "
                      "points",
                      r.idleShareChangePts, meanGpuIdleShare(before) * 100,
                      meanGpuIdleShare(after) * 100, maxPct);
        r.regressed = true;
        r.reason = line;
    }
    return r;
}

} // namespace stallscope::analysis
