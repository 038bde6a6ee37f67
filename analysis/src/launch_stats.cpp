// Launch statistics (analysis.h LaunchStats): Holistic Trace Analysis'
// get_cuda_kernel_launch_stats (hta/analyzers/cuda_kernel_analysis.py: short GPU kernels,
// runtime-call outliers over runtime_cutoff = 50 us, launch-delay outliers over
// launch_delay_cutoff = 100 us) and its time blocked on a full launch queue
// (get_time_spent_blocked_on_full_queue, CUDA_MAX_LAUNCH_QUEUE_PER_STREAM = 1024). The launch
// delay is HTA's documented one, the GPU start minus the end of the launch call (its code adds
// the call's duration instead of subtracting it).
#include "device_metrics.h"

#include "stallscope/base/text_format.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis {

std::vector<std::string> launchStatsLines(const LaunchStats& l) {
    using base::formatCount, base::formatDuration;
    if (l.items == 0) return {};
    std::string a = "launches: " + formatCount(l.items) + " with their call; " +
                    base::formatPercent(double(l.shorterThanLaunch) / double(l.items)) +
                    " ran shorter than it; call median " + formatDuration(l.callP50Ns) + " (p95 " +
                    formatDuration(l.callP95Ns) + "), " + formatCount(l.slowCalls) + " over 50 us";
    std::string b = "launch delay (start after the call) median " + formatDuration(l.delayP50Ns) +
                    " (p95 " + formatDuration(l.delayP95Ns) + "), " + formatCount(l.delayOutliers) +
                    " over 100 us; deepest queue " + std::to_string(l.maxQueue);
    if (l.fullQueueNs > 0) b += ", full (1024) for " + formatDuration(l.fullQueueNs);
    return {a, b};
}

} // namespace stallscope::analysis

namespace stallscope::analysis::detail {

using namespace model;

namespace {

constexpr int64_t kSlowCallNs = 50'000;
constexpr int64_t kDelayOutlierNs = 100'000;
constexpr int64_t kFullQueue = 1024;

int64_t percentile(std::vector<int64_t>& v, double q) {
    if (v.empty()) return 0;
    const size_t k = std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5));
    std::nth_element(v.begin(), v.begin() + long(k), v.end());
    return v[k];
}

} // namespace

LaunchStats computeLaunchStats(const Context& c, const DeviceActivity& d, int64_t lo, int64_t hi) {
    const SliceTable& s = c.trace.slices();
    LaunchStats out;
    std::vector<int64_t> calls, delays;
    // Per stream, +1 when a launch call returns, -1 when its work starts (work that starts
    // before its call returns was never waiting).
    std::map<uint32_t, std::vector<std::pair<int64_t, int>>> queueEdges;
    for (size_t i = 0; i < d.work.size(); ++i) {
        const uint32_t w = d.work[i];
        const SliceId l = d.launch[i];
        if (!l.valid() || s.start[w] < lo || s.start[w] >= hi) continue;
        const int64_t call = s.dur[l.index()], returned = s.end(l.index());
        const int64_t delay = std::max<int64_t>(0, s.start[w] - returned);
        ++out.items;
        if (s.dur[w] < call) ++out.shorterThanLaunch;
        if (call > kSlowCallNs) ++out.slowCalls;
        if (delay > kDelayOutlierNs) ++out.delayOutliers;
        calls.push_back(call);
        delays.push_back(delay);
        if (s.start[w] > returned) {
            auto& e = queueEdges[s.track[w].index()];
            e.emplace_back(returned, +1);
            e.emplace_back(s.start[w], -1);
        }
    }
    out.callP50Ns = percentile(calls, 0.5);
    out.callP95Ns = percentile(calls, 0.95);
    out.delayP50Ns = percentile(delays, 0.5);
    out.delayP95Ns = percentile(delays, 0.95);
    for (auto& [stream, edges] : queueEdges) {
        std::sort(edges.begin(), edges.end()); // at one instant, starts (-1) before returns
        int64_t depth = 0, fullSince = 0;
        for (const auto& [t, step] : edges) {
            const bool wasFull = depth >= kFullQueue;
            depth += step;
            out.maxQueue = std::max(out.maxQueue, uint32_t(std::max<int64_t>(0, depth)));
            if (!wasFull && depth >= kFullQueue) fullSince = t;
            if (wasFull && depth < kFullQueue) out.fullQueueNs += t - fullSince;
        }
    }
    return out;
}

} // namespace stallscope::analysis::detail
