// One-off work and the allocator: warm-up in the window (context), the allocator freeing and
// allocating in the steady state, and launch calls whose GPU side was not recorded.
#include "detectors.h"

#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

constexpr size_t idx(IdleCause c) { return static_cast<size_t>(c); }

/// "ProfilerStep#5", "ProfilerStep#5 and #6", "ProfilerStep#5..#8" (or the iterations).
std::string stepList(const Context& c, const std::vector<int64_t>& steps) {
    const std::string word = c.iterationName.empty() ? "ProfilerStep#" : "iteration #";
    if (steps.size() == 1) return word + std::to_string(steps.front());
    if (steps.size() == 2)
        return word + std::to_string(steps.front()) + " and #" + std::to_string(steps.back());
    return word + std::to_string(steps.front()) + "..#" + std::to_string(steps.back());
}

/// "`cudaFree` ×3 (6.54 s), `cudaLaunchKernel` ×2 (3.06 s, first launches)".
std::string callList(const std::vector<Warmup::Calls>& calls, size_t n) {
    std::string out;
    for (size_t i = 0; i < calls.size() && i < n; ++i) {
        const Warmup::Calls& k = calls[i];
        out += (out.empty() ? "" : ", ") + ("`" + k.name + "` ×" + std::to_string(k.count) + " (" +
                                            fmtDuration(k.ns) +
                                            (k.cause == IdleCause::Setup &&
                                                     names::containsNoCase(k.name, "launch")
                                                 ? ", first launches"
                                                 : "") +
                                            ")");
    }
    return out;
}

} // namespace

void detectWarmup(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!in.result.warmup) return;
    const Warmup& w = *in.result.warmup;
    const int64_t whole = std::max<int64_t>(1, w.wholeEndNs - w.wholeStartNs);
    const double share = double(w.lengthNs()) / double(whole);
    Finding f = makeFinding(c, FindingKind::Warmup, -1, 0);
    const Thresholds& t = c.options.thresholds;
    f.severity = share >= t.severityHigh     ? FindingSeverity::High
                 : share >= t.severityMedium ? FindingSeverity::Medium
                 : share >= t.severityNote   ? FindingSeverity::Low
                                             : FindingSeverity::Note;
    f.silencesTiming = w.wholeWindow;
    f.confidence = 0.8;
    f.ranges = {{w.startNs, w.endNs}};
    std::string what;
    if (w.wholeWindow)
        what = w.steps.empty() ? "The whole " + fmtDuration(whole) + " window holds"
                               : "Every step of the window (" + stepList(c, w.steps) + ", " +
                                     fmtDuration(whole) + ") holds";
    else
        what = (w.steps.empty() ? "The first " + fmtDuration(w.lengthNs()) + " of the window"
                                : stepList(c, w.steps) + " (" + fmtDuration(w.lengthNs()) + ")") +
               ", " + fmtPct(share) + " of the " + fmtDuration(whole) + " window, hold" +
               (w.steps.size() == 1 ? "s" : "");
    f.title = w.wholeWindow ? "The whole window is warm-up: one-off set-up, not the steady loop"
                            : "The window begins with warm-up (" + fmtPct(share) + " of it)";
    std::string parts;
    const auto part = [&](int64_t ns, const char* text) {
        if (ns <= 0) return;
        parts += (parts.empty() ? "" : ", ") + fmtDuration(ns) + " " + text;
    };
    part(w.oneOffNs[0], "while the host set up (created streams, events or handles, loaded modules, "
                        "used a kernel or call for the first time)");
    part(w.oneOffNs[1], "while it generated or tuned code (torch.compile, TorchScript fusion, NVRTC, "
                        "algorithm search)");
    part(w.oneOffNs[2], "inside memory allocation and free calls");
    f.explanation = what + " one-off work the steady loop does not repeat: the GPU idled " + parts + ".";
    if (!w.calls.empty()) f.explanation += " The one-off calls: " + callList(w.calls, 5) + ".";
    f.explanation +=
        w.wholeWindow
            ? " No steady part follows it in this trace, so no timing findings are given: they "
              "would describe the warm-up, not the loop."
            : " The findings below are about the steady part after it: " + c.window.description +
                  " (" + fmtDuration(c.window.length()) + ").";
    f.fix = "Profile after warm-up: let the first iterations run unprofiled (a torch.profiler "
            "schedule with wait and warmup steps), or start the profiler once the model has run "
            "a few times.";
    f.snippet = "sched = torch.profiler.schedule(wait=2, warmup=2, active=3)   # skip the warm-up\n"
                "with torch.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:\n"
                "    for step, batch in enumerate(loader):\n"
                "        run_one_iteration(batch)\n"
                "        prof.step()";
    for (const Step& st : c.steps)
        if (st.warmup && f.evidence.size() < 20) f.evidence.push_back(st.slice);
    out.push_back(std::move(f));
}

void detectAllocatorChurn(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceMetrics& d : in.result.devices) {
        const int64_t ns = d.idle.causes[idx(IdleCause::Allocator)].ns;
        if (ns <= 0 || double(ns) < c.options.thresholds.allocatorMinShare * double(c.window.length()))
            continue;
        // The allocation calls in the window (any thread: the launching threads hold them).
        std::map<StringId, std::pair<size_t, int64_t>> byName;
        std::vector<SliceId> evidence = findSlices(c, [&](uint32_t i) { return c.is(i, kNcAlloc); }, 40);
        bool hip = false;
        for (SliceId id : findSlices(c, [&](uint32_t i) { return c.is(i, kNcAlloc); }, SIZE_MAX)) {
            auto& e = byName[s.name[id.index()]];
            ++e.first;
            e.second += s.dur[id.index()];
            hip |= c.name(id.index()).starts_with("hip");
        }
        std::vector<std::pair<std::string, std::pair<size_t, int64_t>>> calls;
        for (const auto& [id, e] : byName) calls.emplace_back(std::string(c.trace.str(id)), e);
        std::stable_sort(calls.begin(), calls.end(),
                         [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
        std::string list;
        for (size_t i = 0; i < calls.size() && i < 4; ++i)
            list += (list.empty() ? "" : ", ") + ("`" + calls[i].first + "` ×" +
                                                  std::to_string(calls[i].second.first) + " (" +
                                                  fmtDuration(calls[i].second.second) + ")");
        size_t steps = 0, withAlloc = 0;
        for (const StepMetrics& st : d.steps) {
            if (st.endNs <= st.startNs) continue;
            ++steps;
            withAlloc += st.idleByCause[idx(IdleCause::Allocator)] > 0;
        }
        // torch.cuda.empty_cache() in the loop (Python frames or the op name say it).
        const std::vector<SliceId> emptyCache = findSlices(
            c, [&](uint32_t i) { return c.name(i).find("empty_cache") != std::string_view::npos; },
            SIZE_MAX);

        Finding f = makeFinding(c, FindingKind::AllocatorChurn, d.device, ns);
        f.idleNs = ns;
        f.replayFix = Fix::KeepAllocations;
        f.ranges = longestRanges(d.idle.intervals[idx(IdleCause::Allocator)], 12);
        f.waitedFor = topWaitedFor(c, d.idle.waitedFor[idx(IdleCause::Allocator)], 5);
        f.evidence = evidence;
        f.title = "The GPU waits while memory is freed and allocated";
        f.explanation =
            "The GPU sat idle " + fmtDuration(ns) + " (" + fmtPct(f.savingShare) + " of " +
            shareBase(c) + ") while " + launchingThread(c) +
            " was inside memory allocation and free calls: " + list + "." +
            (steps > 0 ? " " + std::to_string(withAlloc) + " of " + std::to_string(steps) +
                             " steps wait on them."
                       : std::string()) +
            " PyTorch's caching allocator calls the driver's free when it gives cached memory back "
            "(torch.cuda.empty_cache(), or after an allocation failed and it frees its cache to "
            "retry) and its malloc when the cache has no block that fits; a free waits for the "
            "device, so the queue drains." +
            (emptyCache.empty() ? std::string()
                                : " `" + std::string(c.name(emptyCache.front().index())) +
                                      "` runs " + std::to_string(emptyCache.size()) +
                                      " time" + (emptyCache.size() == 1 ? "" : "s") +
                                      " in the window.");
        const std::string conf = hip ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
        std::string fix;
        int n = 0;
        if (!emptyCache.empty())
            fix += std::to_string(++n) + ". Remove torch.cuda.empty_cache() from the loop: the cache it "
                                         "empties is allocated again at once. ";
        fix += std::to_string(++n) + ". Let the allocator grow its segments instead of freeing and "
                                     "allocating again: " +
               conf + "=expandable_segments:True. ";
        fix += std::to_string(++n) + ". If memory is nearly full (allocations fail and retry), lower "
                                     "the peak: a smaller batch, activation checkpointing or mixed "
                                     "precision.";
        f.fix = fix;
        f.snippet = "# before the process starts (the environment of the job):\n"
                    "#   " + conf + "=expandable_segments:True python train.py\n" +
                    (emptyCache.empty() ? std::string()
                                        : "# and no torch.cuda.empty_cache() inside the loop\n");
        f.confidence = 0.8;
        out.push_back(std::move(f));
    }
}

void detectGpuNotRecorded(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!c.devices.empty()) return;
    const SliceTable& s = c.trace.slices();
    for (uint32_t i = 0; i < s.size(); ++i)
        if (s.kind[i] == EventKind::ProfilerRange) return; // CUPTI range profiler: counters
    const LaunchCallCount launches = launchCalls(c);
    if (launches.total == 0) return;
    Finding f = makeFinding(c, FindingKind::GpuNotRecorded, -1, c.window.length());
    f.ranges = {{c.window.startNs, c.window.endNs}};
    f.evidence = findSlices(c, [&](uint32_t i) { return c.is(i, kNcLaunch) && isLaunchSide(s.kind[i]); }, 20);
    std::string list;
    for (size_t i = 0; i < launches.byName.size() && i < 3; ++i)
        list += (list.empty() ? "" : ", ") + ("`" + launches.byName[i].first + "` ×" +
                                              std::to_string(launches.byName[i].second));
    f.title = "Launch calls were recorded, but no GPU activity";
    f.explanation =
        "The host made " + std::to_string(launches.total) + " launch call" +
        (launches.total == 1 ? "" : "s") + " (" + list +
        ") but the trace holds no kernel, copy or memset: the GPU side of the capture is missing, "
        "not the GPU's work. The profiler records GPU activity through CUPTI (roctracer on "
        "ROCm); it is missing when the activities leave out the GPU, when CUPTI could not start "
        "(another profiler holds it, or the driver refused: the job's log shows the profiler's "
        "warnings), or when a long capture outgrows the activity buffers. The GPU's idle time "
        "cannot be measured from this trace.";
    f.fix = "Record the GPU side: include ProfilerActivity.CUDA in the activities, make sure no "
            "other profiler (Nsight Systems, DCGM profiling) holds CUPTI while torch.profiler runs, "
            "and profile a few steps at a time.";
    f.snippet = "from torch.profiler import profile, schedule, ProfilerActivity\n"
                "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                "             schedule=schedule(wait=2, warmup=2, active=3)) as prof:\n"
                "    ...";
    f.confidence = 0.8;
    out.push_back(std::move(f));
}

} // namespace stallscope::analysis::detail
