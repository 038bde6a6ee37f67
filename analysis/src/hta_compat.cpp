#include "hta_compat.h"
#include "huge_pages.h"

#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <map>
#include <set>

namespace stallscope::analysis::detail {

using namespace model;

namespace {
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
} // namespace

std::string_view htaKernelType(std::string_view n) {
    // HTA applies Python re.match (anchored at the start) in this order.
    if (startsWith(n, "nccl") || startsWith(n, "hip") || startsWith(n, "hccl") || contains(n, "ncclKernel"))
        return "communication";
    if (startsWith(n, "Memcpy") || startsWith(n, "hipMemcpy") || startsWith(n, "Memset") ||
        startsWith(n, "hipMemset") || startsWith(n, "dma"))
        return "memory";
    const size_t cuda = n.find("cuda");
    const bool cudaLaunch = startsWith(n, "cuda") && n.find("LaunchKernel", cuda) != std::string_view::npos;
    const bool notCompute = startsWith(n, "nccl") || contains(n, "Memcpy") || contains(n, "Memset") ||
                            contains(n, "dma") || contains(n, "Sync") || startsWith(n, "Stream Wait Event") ||
                            cudaLaunch || startsWith(n, "runFunction") || startsWith(n, "hip") ||
                            startsWith(n, "hccl");
    return notCompute ? "other" : "computation";
}

HtaBreakdown computeHta(const Context& c) {
    const Trace& t = c.trace;
    const SliceTable& s = t.slices();
    HtaBreakdown out;
    auto stream = [&](uint32_t i) { // a Stream Sync row counts as its stream
        const TrackInfo& tr = t.track(s.track[i]);
        return (tr.syncOf.valid() ? t.track(tr.syncOf) : tr).key.number;
    };
    const StringId traceCategory = t.strings().find("Trace");
    auto included = [&](uint32_t i) {
        // HTA reads X events with a duration whose category is not "Trace".
        return !(s.flags[i] & kSliceFromBeginEnd) && s.category[i] != traceCategory;
    };
    auto isGpuEvent = [&](uint32_t i) {
        const EventKind k = s.kind[i];
        const bool hasCorr = s.correlation[i] != SliceTable::kNoCorrelation;
        if (isGpuWork(k)) return hasCorr && stream(i) >= 0;
        if (k == EventKind::CudaSync) {
            const std::string_view n = t.str(s.name[i]);
            return n == "Event Sync" || n == "Context Sync" || (hasCorr && stream(i) >= 0);
        }
        return false;
    };
    auto onDevice = [&](uint32_t i) {
        if (c.options.device < 0) return true;
        return t.process(t.track(s.track[i]).process).gpuDevice == c.options.device;
    };

    // HTA's window: with >= 2 distinct ProfilerStep#N names, drop everything from the last
    // step's start on, and the GPU work launched from there.
    std::set<int64_t> stepNumbers;
    int64_t lastStepStart = INT64_MIN;
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (!c.is(i, kNcProfilerStep) || !included(i)) continue;
        const int64_t n = names::profilerStepNumber(t.str(s.name[i]));
        stepNumbers.insert(n);
        lastStepStart = std::max(lastStepStart, s.start[i]);
    }
    const bool cut = stepNumbers.size() >= 2;
    // A GPU event is kept when a kept CPU event (the runtime/driver call) has its correlation.
    auto launchedBeforeCut = [&](uint32_t i) {
        for (const CorrelationEntry& e : c.launchesWith(s.correlation[i]))
            if (included(e.slice.index()) && s.start[e.slice.index()] < lastStepStart) return true;
        return false;
    };
    std::vector<uint32_t> gpu;
    for (uint32_t i = 0; i < s.size(); ++i) {
        if (!isGpuEvent(i) || !included(i) || !onDevice(i)) continue; // tests without effects
        if (cut && !launchedBeforeCut(i)) continue;
        gpu.push_back(i);
    }
    if (gpu.empty()) return out;

    // Temporal breakdown over events with a stream (HTA: stream != -1).
    Intervals busy, compute;
    reserveHuge(busy, gpu.size()); // compute at most as long; pages never written cost nothing
    reserveHuge(compute, gpu.size());
    std::vector<int8_t> isCompute(t.strings().size(), -1); // by name: -1 not known yet
    for (uint32_t i : gpu) {
        if (stream(i) < 0) continue;
        const Interval iv{s.start[i], s.start[i] + s.dur[i]};
        busy.push_back(iv);
        int8_t& k = isCompute[s.name[i].index()];
        if (k < 0) k = htaKernelType(t.str(s.name[i])) == "computation" ? 1 : 0;
        if (k) compute.push_back(iv);
    }
    busy = mergeIntervals(std::move(busy));
    compute = mergeIntervals(std::move(compute));
    if (busy.empty()) return out;
    out.valid = true;
    out.spanNs = busy.back().end - busy.front().start;
    out.idleNs = out.spanNs - totalLength(busy);
    out.computeNs = totalLength(compute);
    out.nonComputeNs = out.spanNs - out.computeNs - out.idleNs;

    // Idle breakdown per stream over kernels, copies and memsets.
    std::map<int64_t, std::vector<uint32_t>> byStream;
    for (uint32_t i : gpu)
        if (isGpuWork(s.kind[i])) byStream[stream(i)].push_back(i);
    for (auto& [st, events] : byStream) {
        // One track's events come in start order; the same stream number on several
        // processes does not.
        auto byStart = [&](uint32_t a, uint32_t b) { return s.start[a] < s.start[b]; };
        if (!std::is_sorted(events.begin(), events.end(), byStart))
            std::stable_sort(events.begin(), events.end(), byStart);
        HtaStreamIdle r;
        r.stream = st;
        for (size_t k = 1; k < events.size(); ++k) {
            const uint32_t prev = events[k - 1], next = events[k];
            const int64_t prevEnd = s.start[prev] + s.dur[prev];
            const int64_t gap = s.start[next] - prevEnd;
            const SliceId l = c.launchOf(next);
            if (l.valid() && s.start[l.index()] > prevEnd) r.hostWaitNs += gap;
            else if (gap < c.options.htaKernelWaitNs) r.kernelWaitNs += gap;
            else r.otherNs += gap;
        }
        out.idleByStream.push_back(r);
    }
    return out;
}

} // namespace stallscope::analysis::detail
