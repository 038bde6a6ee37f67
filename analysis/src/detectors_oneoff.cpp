// One-off work and the allocator: warm-up in the window (context), the allocator freeing and
// allocating in the steady state, and launch calls whose GPU side was not recorded.
#include "detectors.h"

#include "stallscope/analysis/name_rules.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

constexpr size_t idx(IdleCause c) {
    return static_cast<size_t>(c);
}

/// "ProfilerStep#5", "ProfilerStep#5 and #6", "ProfilerStep#5..#8" (or the iterations).
std::string stepList(const Context& c, const std::vector<int64_t>& steps) {
    const std::string word = c.iterationName.empty() ? "ProfilerStep#" : "iteration #";
    if (steps.size() == 1) return word + std::to_string(steps.front());
    if (steps.size() == 2)
        return word + std::to_string(steps.front()) + " and #" + std::to_string(steps.back());
    return word + std::to_string(steps.front()) + "..#" + std::to_string(steps.back());
}

/// "`cudaFree` ×3 (6.54 s), `cudaLaunchKernel` ×2 (3.06 s, first launches)", each claimed as
/// the calls of that name starting inside [from, to) (first uses only for the set-up ones).
std::string callList(Finding& f, const std::vector<Warmup::Calls>& calls, size_t n, int64_t from,
                     int64_t to) {
    std::string out;
    for (size_t i = 0; i < calls.size() && i < n; ++i) {
        const Warmup::Calls& k = calls[i];
        const bool firstUse =
            k.cause == IdleCause::Setup && names::containsNoCase(k.name, "launch");
        ClaimParams p = ClaimParams().names({k.name}).num("from_ns", from).num("to_ns", to);
        if (firstUse) p.num("first_use", 1);
        out += (out.empty() ? "" : ", ") +
               said(f, "`" + k.name + "` ×" + base::formatCount(k.count), "calls",
                    ClaimParams(p).str("stat", "count"), double(k.count)) +
               " (" + saidNs(f, k.ns, "calls", ClaimParams(p).str("stat", "ns")) +
               (firstUse ? ", first launches" : "") + ")";
    }
    return out;
}

/// "ProfilerStep#5 and #6", claimed as the warm-up's steps (the audit finds them itself).
std::string saidSteps(Finding& f, const Context& c, const std::vector<int64_t>& steps) {
    std::vector<std::string> numbers;
    for (int64_t n : steps) numbers.push_back(std::to_string(n));
    return said(f, stepList(c, steps), "warmup_steps", ClaimParams().strs("numbers", numbers),
                double(steps.size()));
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
    const ClaimParams span = ClaimParams().num("from_ns", w.startNs).num("to_ns", w.endNs);
    const auto wholeNs = [&] { return saidNs(f, whole, "whole_window_ns", {}); };
    const auto sharePct = [&] {
        return saidShare(f, share, "span_ns", span, "whole_window_ns", {});
    };
    std::string what;
    if (w.wholeWindow)
        what = w.steps.empty() ? "The whole " + wholeNs() + " window holds"
                               : "Every step of the window (" + saidSteps(f, c, w.steps) + ", " +
                                     wholeNs() + ") holds";
    else
        what = (w.steps.empty()
                    ? "The first " + saidNs(f, w.lengthNs(), "span_ns", span) + " of the window"
                    : saidSteps(f, c, w.steps) + " (" + saidNs(f, w.lengthNs(), "span_ns", span) +
                          ")") +
               ", " + sharePct() + " of the " + wholeNs() + " window, hold" +
               (w.steps.size() == 1 ? "s" : "");
    f.title = w.wholeWindow ? "The whole window is warm-up: one-off set-up, not the steady loop"
                            : "The window begins with warm-up (" + sharePct() + " of it)";
    std::string parts;
    const auto part = [&](int64_t ns, IdleCause cause, const char* text) {
        if (ns <= 0) return;
        // The idle attribution over the whole window, inside the warm-up.
        const ClaimParams p =
            ClaimParams(span).causes({cause}).str("over", "whole").device(w.device);
        parts += (parts.empty() ? "" : ", ") + saidNs(f, ns, "idle_ns", p) + " " + text;
    };
    part(w.oneOffNs[0], IdleCause::Setup,
         "while the host set up (created streams, events or handles, loaded modules, used a "
         "kernel or call for the first time)");
    part(w.oneOffNs[1], IdleCause::Jit,
         "while it generated or tuned code (torch.compile, TorchScript fusion, NVRTC, algorithm "
         "search)");
    part(w.oneOffNs[2], IdleCause::Allocator, "inside memory allocation and free calls");
    f.explanation =
        what + " one-off work the steady loop does not repeat: the GPU idled " + parts + ".";
    if (!w.calls.empty())
        f.explanation += " The one-off calls: " + callList(f, w.calls, 5, w.startNs, w.endNs) + ".";
    f.explanation +=
        w.wholeWindow
            ? " No steady part follows it in this trace, so no timing findings are given: they "
              "would describe the warm-up, not the loop."
            : " The findings below are about the steady part after it: " +
                  said(f, c.window.description, "window", {}, 0) + " (" +
                  saidNs(f, c.window.length(), "window_ns", {}) + ").";
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
        if (ns <= 0 ||
            double(ns) < c.options.thresholds.allocatorMinShare * double(c.window.length()))
            continue;
        // The allocation calls in the window (any thread: the launching threads hold them).
        std::map<StringId, std::pair<size_t, int64_t>> byName;
        std::vector<SliceId> evidence = findSlices(
            c, [&](uint32_t i) { return c.is(i, kNcAlloc); }, 40);
        bool hip = false;
        for (SliceId id : findSlices(
                 c, [&](uint32_t i) { return c.is(i, kNcAlloc); }, SIZE_MAX)) {
            auto& e = byName[s.name[id.index()]];
            ++e.first;
            e.second += s.dur[id.index()];
            hip |= c.name(id.index()).starts_with("hip");
        }
        std::vector<std::pair<std::string, std::pair<size_t, int64_t>>> calls;
        for (const auto& [id, e] : byName) calls.emplace_back(std::string(c.trace.str(id)), e);
        std::stable_sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) {
            return a.second.second > b.second.second;
        });
        Finding f = makeFinding(c, FindingKind::AllocatorChurn, d.device, ns);
        std::string list;
        for (size_t i = 0; i < calls.size() && i < 4; ++i) {
            const ClaimParams p = ClaimParams().names({calls[i].first});
            list +=
                (list.empty() ? "" : ", ") +
                said(f, "`" + calls[i].first + "` ×" + base::formatCount(calls[i].second.first),
                     "calls", ClaimParams(p).str("stat", "count"), double(calls[i].second.first)) +
                " (" +
                saidNs(f, calls[i].second.second, "calls", ClaimParams(p).str("stat", "ns")) + ")";
        }
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

        f.idleNs = ns;
        f.replayFix = Fix::KeepAllocations;
        f.ranges = longestRanges(d.idle.intervals[idx(IdleCause::Allocator)], 12);
        f.waitedFor = topWaitedFor(c, d.idle.waitedFor[idx(IdleCause::Allocator)], 5);
        f.evidence = evidence;
        f.title = "The GPU waits while memory is freed and allocated";
        const ClaimParams idle = ClaimParams().device(d.device).causes({IdleCause::Allocator});
        f.explanation =
            "The GPU sat idle " + saidNs(f, ns, "idle_ns", idle) + " (" +
            saidShare(f, double(ns) / double(c.window.length()), "idle_ns", idle, "window_ns", {}) +
            " of " + shareBase(c) + ") while " + launchingThread(c) +
            " was inside memory allocation and free calls: " + list + "." +
            (steps > 0 ? " " +
                             said(f, std::to_string(withAlloc), "steps",
                                  ClaimParams()
                                      .str("stat", "with_idle")
                                      .device(d.device)
                                      .str("cause", idleCauseName(IdleCause::Allocator)),
                                  double(withAlloc)) +
                             " of " +
                             said(f, std::to_string(steps), "steps",
                                  ClaimParams().str("stat", "count"), double(steps)) +
                             " steps wait on them."
                       : std::string()) +
            " PyTorch's caching allocator calls the driver's free when it gives cached memory back "
            "(torch.cuda.empty_cache(), or after an allocation failed and it frees its cache to "
            "retry) and its malloc when the cache has no block that fits; a free waits for the "
            "device, so the queue drains." +
            (emptyCache.empty()
                 ? std::string()
                 : " " +
                       said(f,
                            "`" + std::string(c.name(emptyCache.front().index())) + "` runs " +
                                base::formatCount(emptyCache.size()),
                            "calls",
                            ClaimParams()
                                .names({std::string(c.name(emptyCache.front().index()))})
                                .str("stat", "count"),
                            double(emptyCache.size())) +
                       " time" + (emptyCache.size() == 1 ? "" : "s") + " in the window.");
        const std::string conf = hip ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
        std::string fix;
        int n = 0;
        if (!emptyCache.empty())
            fix += std::to_string(++n) +
                   ". Remove torch.cuda.empty_cache() from the loop: the cache it "
                   "empties is allocated again at once. ";
        fix += std::to_string(++n) +
               ". Let the allocator grow its segments instead of freeing and "
               "allocating again: " +
               conf + "=expandable_segments:True. ";
        fix += std::to_string(++n) +
               ". If memory is nearly full (allocations fail and retry), lower "
               "the peak: a smaller batch, activation checkpointing or mixed "
               "precision.";
        f.fix = fix;
        f.snippet = "# before the process starts (the environment of the job):\n"
                    "#   " +
                    conf + "=expandable_segments:True python train.py\n" +
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
    f.evidence = findSlices(
        c, [&](uint32_t i) { return c.is(i, kNcLaunch) && isLaunchSide(s.kind[i]); }, 20);
    std::string list;
    for (size_t i = 0; i < launches.byName.size() && i < 3; ++i)
        list += (list.empty() ? "" : ", ") +
                said(f,
                     "`" + launches.byName[i].first + "` ×" +
                         base::formatCount(launches.byName[i].second),
                     "launch_calls",
                     ClaimParams().str("name", launches.byName[i].first).str("stat", "count"),
                     double(launches.byName[i].second));
    f.title = "Launch calls were recorded, but no GPU activity";
    f.explanation =
        "The host made " +
        said(f, base::formatCount(launches.total), "launch_calls",
             ClaimParams().str("stat", "count"), double(launches.total)) +
        " launch call" + (launches.total == 1 ? "" : "s") + " (" + list +
        ") but the trace holds no kernel, copy or memset: the GPU side of the capture is missing, "
        "not the GPU's work. The profiler records GPU activity through CUPTI (roctracer on "
        "ROCm); it is missing when the activities leave out the GPU, when CUPTI could not start "
        "(another profiler holds it, or the driver refused: the job's log shows the profiler's "
        "warnings), or when a long capture outgrows the activity buffers. The GPU's idle time "
        "cannot be measured from this trace.";
    f.fix =
        "Record the GPU side: include ProfilerActivity.CUDA in the activities, make sure no "
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
