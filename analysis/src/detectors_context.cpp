// Context detectors: what kind of trace this is, said before any finding about its timing.
#include "detectors.h"

#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

/// A CUDA/HIP graph capture: between a stream's BeginCapture and EndCapture calls, launches
/// are recorded into a graph, not run. When most launches of the window lie in such
/// regions, the GPU's idle time says nothing about the model: one context finding, and
/// analyze() gives no timing findings. Counted over the whole trace (what kind of trace it
/// is), not the window: without ProfilerStep the window is the span of GPU activity, which
/// a capture's launches mostly lie outside of.
void detectGraphCapture(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!c.anyNamed(kNcCaptureBegin)) return;
    const Trace& t = c.trace;
    const SliceTable& s = t.slices();
    struct Region {
        int64_t start, end;
        uint32_t begin; // the BeginCapture call
    };
    std::vector<Region> regions, rs; // all of them; this thread's
    size_t launches = 0, captured = 0, ran = 0;
    std::vector<SliceId> evidence;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        // Regions on this thread: each BeginCapture to the next EndCapture (to the trace's
        // end when the capture does not end in the trace).
        rs.clear();
        int64_t open = INT64_MIN;
        uint32_t openSlice = 0;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (c.is(i, kNcCaptureBegin) && open == INT64_MIN)
                open = s.start[i], openSlice = i;
            else if (c.is(i, kNcCaptureEnd) && open != INT64_MIN) {
                rs.push_back({open, s.end(i), openSlice});
                open = INT64_MIN;
            }
        }
        if (open != INT64_MIN) rs.push_back({open, t.endNs(), openSlice});
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!c.is(i, kNcLaunch)) continue;
            ++launches;
            ran += !t.gpuWorkOf(SliceId(i)).empty();
            const bool inside = std::any_of(rs.begin(), rs.end(), [&](const Region& r) {
                return s.start[i] >= r.start && s.start[i] < r.end;
            });
            captured += inside;
            if (inside && evidence.size() < 12) evidence.push_back(SliceId(i));
        }
        regions.insert(regions.end(), rs.begin(), rs.end());
    }
    if (captured == 0 || 2 * captured < launches) return;
    Finding f = makeFinding(c, FindingKind::GraphCapture, -1, 0);
    f.severity = FindingSeverity::Note;
    f.silencesTiming = true;
    f.confidence = 0.9;
    Intervals ranges;
    std::vector<SliceId> begins;
    for (const Region& r : regions) {
        ranges.push_back({r.start, r.end});
        if (begins.size() < 4) begins.push_back(SliceId(r.begin));
    }
    f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
    f.evidence = begins;
    f.evidence.insert(f.evidence.end(), evidence.begin(), evidence.end());
    f.title = "This trace records a CUDA/HIP graph capture, not the model running";
    const auto cap = [](const char* stat) { return ClaimParams().str("stat", stat); };
    f.explanation =
        said(f, std::to_string(captured), "capture", cap("captured"), double(captured)) +
        " of the " +
        said(f, std::to_string(launches), "capture", cap("launches"), double(launches)) +
        " launch calls in the trace happen between a stream's BeginCapture and EndCapture "
        "calls: "
        "they are recorded into a graph, not run (" +
        said(f, std::to_string(ran), "capture", cap("ran"), double(ran)) +
        " launches ran work on the GPU). The GPU's idle time in this trace measures the capture, "
        "not the model, so no timing findings are given.";
    f.fix = "Profile the replay instead: warm up (the capture happens then), then profile a few "
            "iterations that "
            "replay the graphs, e.g. with a torch.profiler schedule that skips the first "
            "iterations. In vLLM or "
            "SGLang, start the profiler after the server has captured its graphs.";
    f.snippet = "sched = torch.profiler.schedule(wait=5, warmup=2, active=3)   # past the capture\n"
                "with torch.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:\n"
                "    for step in range(10):\n"
                "        run_one_iteration()\n"
                "        prof.step()";
    out.push_back(std::move(f));
}

namespace {

/// Outermost slices in the window of name class `nc`, on every thread.
std::vector<SliceId> outermost(const Context& c, NameClass nc) {
    const SliceTable& s = c.trace.slices();
    return findSlices(
        c,
        [&](uint32_t i) {
            if (!c.is(i, nc)) return false;
            for (SliceId p = s.parent[i]; p.valid(); p = s.parent[p.index()])
                if (c.is(p.index(), nc)) return false;
            return true;
        },
        SIZE_MAX);
}

/// "Torch-Compiled Region: 3/1" -> {3, 1}; {-1, -1} when the name has no ids (older
/// PyTorch writes just "Torch-Compiled Region").
std::pair<int, int> regionIds(std::string_view n) {
    const size_t colon = n.find(": ");
    if (colon == std::string_view::npos) return {-1, -1};
    const std::string_view ids = n.substr(colon + 2);
    const size_t slash = ids.find('/');
    if (slash == std::string_view::npos) return {-1, -1};
    auto num = [](std::string_view v) {
        int x = 0;
        if (v.empty()) return -1;
        for (char ch : v) {
            if (ch < '0' || ch > '9' || x > 1'000'000) return -1;
            x = x * 10 + (ch - '0');
        }
        return x;
    };
    return {num(ids.substr(0, slash)), num(ids.substr(slash + 1))};
}

} // namespace

/// torch.compile compiling inside the window: its phases (dynamo_timed ranges, Dynamo's and
/// Inductor's compile-time frames, Inductor's autotuning: the call catalogue's "compile"
/// family) are seconds of host time the GPU waits through once, not a property of the step.
/// Compiling inside a leading warm-up is the warm-up finding's (it names the calls); this one
/// is about compiling later, in the steady part (a guard failed: a new shape, dtype or value).
/// When compiling fills half of the window, the window's timing is the compiler's and
/// analyze() gives no timing findings. A compiled frame running a compile id above 0 had been
/// compiled again, in the window or before it: named, with what the trace can tell.
void detectCompilation(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!c.anyNamed(static_cast<NameClass>(kNcCompile | kNcCompiledRegion))) return;
    const SliceTable& s = c.trace.slices();
    const Warmup* warm = in.result.warmup ? &*in.result.warmup : nullptr;
    const auto inWarmup = [&](SliceId id) {
        return warm && s.start[id.index()] >= warm->startNs && s.start[id.index()] < warm->endNs;
    };
    std::vector<SliceId> phases = outermost(c, kNcCompile);
    std::erase_if(phases, inWarmup);
    Intervals spans;
    for (SliceId id : phases)
        spans.push_back({std::max(s.start[id.index()], c.window.startNs),
                         std::min(s.end(id.index()), c.window.endNs)});
    spans = mergeIntervals(std::move(spans));
    int64_t compileNs = 0;
    for (const Interval& iv : spans) compileNs += iv.length();
    std::map<int, int> recompiled; // frame -> highest compile id seen
    for (SliceId id : findSlices(
             c, [&](uint32_t i) { return c.is(i, kNcCompiledRegion); }, SIZE_MAX)) {
        if (inWarmup(id)) continue;
        const auto [frame, compile] = regionIds(c.name(id.index()));
        if (frame >= 0 && compile >= 1) recompiled[frame] = std::max(recompiled[frame], compile);
    }
    const double share = double(compileNs) / double(std::max<int64_t>(1, c.window.length()));
    const bool compiling = share >= c.options.thresholds.compilationMinShare;
    if (!compiling && recompiled.empty()) return;
    Finding f = makeFinding(c, FindingKind::Compilation, -1, 0);
    f.severity = !compiling                                   ? FindingSeverity::Low
                 : share >= c.options.thresholds.severityHigh ? FindingSeverity::High
                                                              : FindingSeverity::Medium;
    f.silencesTiming = share >= 0.5;
    f.confidence = 0.9;
    f.ranges = longestRanges(spans, 12);
    f.evidence.assign(phases.begin(),
                      phases.begin() + static_cast<long>(std::min<size_t>(phases.size(), 20)));
    std::string recompiles;
    for (const auto& [frame, n] : recompiled)
        recompiles += (recompiles.empty() ? "" : ", ") +
                      said(f, "frame " + std::to_string(frame) + " ×" + std::to_string(n),
                           "recompiled", ClaimParams().num("frame", frame), n);
    const auto shareClaim = [&] { return saidShare(f, share, "compile_ns", {}, "window_ns", {}); };
    f.title = compiling
                  ? "torch.compile compiles inside the profiled window (" + shareClaim() + " of it)"
                  : "torch.compile frames run recompiled versions";
    f.explanation =
        (compiling
             ? "Compilation (TorchDynamo tracing, AOTAutograd, Inductor code generation and "
               "autotuning) took " +
                   saidNs(f, compileNs, "compile_ns", {}) + " of the " +
                   saidNs(f, c.window.length(), "window_ns", {}) +
                   " window. That is a one-off cost, not a property of the step: " +
                   (f.silencesTiming
                        ? "the window is mostly the compiler, so no timing findings are given."
                        : "the other findings' figures include it.")
             : std::string()) +
        (recompiled.empty()
             ? std::string()
             : std::string(compiling ? " " : "") + "Compiled frames run compile ids above 0 (" +
                   recompiles +
                   ": Torch-Compiled Region N/M runs frame N's compile M), so they were compiled "
                   "again after a guard failed (a new shape, dtype or Python value)" +
                   (compiling ? "."
                              : "; this window holds no compile phase, so that happened "
                                "before it, and the cached versions run without compiling."));
    f.fix =
        "Profile after warm-up: let the first iterations compile, then record a few steps (a "
        "torch.profiler schedule with wait/warmup). For recompilations, TORCH_LOGS=\"recompiles\" "
        "names the failing guard; mark dynamic dimensions (torch._dynamo.mark_dynamic) or compile "
        "with dynamic=True.";
    f.snippet =
        "model = torch.compile(model)\n"
        "sched = torch.profiler.schedule(wait=3, warmup=2, active=3)   # steps 0-2 compile\n"
        "with torch.profiler.profile(schedule=sched, on_trace_ready=handler) as prof:\n"
        "    for step, batch in enumerate(loader):\n"
        "        train_step(batch); prof.step()";
    out.push_back(std::move(f));
}

/// Graph breaks: a step running several distinct compiled frames (Torch-Compiled Region
/// N/., N the frame) means Dynamo split the model where it could not trace, running Python
/// between the graphs. Several frames can also be separately compiled functions (a compiled
/// model and a compiled optimizer step): the text says so.
void detectGraphBreaks(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!c.anyNamed(kNcCompiledRegion)) return;
    const SliceTable& s = c.trace.slices();
    // Per step: the distinct compiled frames it runs. Without steps, the iterations are the
    // runs of the lowest frame id present (each iteration enters the model through it): a
    // frame sequence "0/0 1/0 2/0 3/0" repeating is one iteration of four frames.
    std::map<int64_t, std::map<int, int>> framesPerStep; // step -> frame -> regions
    std::vector<SliceId> evidence;
    std::vector<std::pair<int64_t, int>> regions; // start, frame (no steps)
    for (SliceId id : findSlices(
             c, [&](uint32_t i) { return c.is(i, kNcCompiledRegion); }, SIZE_MAX)) {
        const int frame = regionIds(c.name(id.index())).first;
        if (frame < 0) continue;
        if (evidence.size() < 20) evidence.push_back(id);
        if (c.steps.empty()) {
            regions.emplace_back(s.start[id.index()], frame);
            continue;
        }
        const Step* st = c.stepAt(s.start[id.index()]);
        if (st) ++framesPerStep[st->number][frame];
    }
    if (c.steps.empty() && !regions.empty()) {
        std::sort(regions.begin(), regions.end());
        int lowest = INT32_MAX;
        for (const auto& [t, frame] : regions) lowest = std::min(lowest, frame);
        int64_t iteration = -1;
        for (const auto& [t, frame] : regions) {
            if (frame == lowest) ++iteration;
            ++framesPerStep[std::max<int64_t>(iteration, 0)][frame];
        }
        if (iteration < 1) return; // the loop must repeat to tell breaks from one-offs
    }
    size_t maxFrames = 0, stepsWithBreaks = 0;
    for (const auto& [step, frames] : framesPerStep) {
        maxFrames = std::max(maxFrames, frames.size());
        stepsWithBreaks += frames.size() >= 2;
    }
    if (maxFrames < 2 || 2 * stepsWithBreaks < framesPerStep.size()) return;
    Finding f = makeFinding(c, FindingKind::GraphBreaks, -1, 0);
    f.severity = maxFrames >= 3 ? FindingSeverity::Medium : FindingSeverity::Low;
    f.confidence = maxFrames >= 3 ? 0.7 : 0.5;
    f.evidence = evidence;
    for (SliceId e : evidence) f.ranges.push_back({s.start[e.index()], s.end(e.index())});
    f.ranges = longestRanges(mergeIntervals(std::move(f.ranges)), 12);
    const std::string unit = c.steps.empty() ? "iteration" : "step";
    const auto gf = [](const char* stat) { return ClaimParams().str("stat", stat); };
    f.title = "The compiled model runs as " +
              said(f, std::to_string(maxFrames), "graph_frames", gf("max"), double(maxFrames)) +
              " graphs per " + unit + " (graph breaks?)";
    f.explanation =
        said(f, std::to_string(stepsWithBreaks), "graph_frames", gf("with_breaks"),
             double(stepsWithBreaks)) +
        " of " +
        said(f, std::to_string(framesPerStep.size()), "graph_frames", gf("units"),
             double(framesPerStep.size())) +
        " " + unit + "s" +
        (c.steps.empty() ? " (the runs of the lowest compiled frame, no ProfilerStep)" : "") +
        " run up to " +
        said(f, std::to_string(maxFrames), "graph_frames", gf("max"), double(maxFrames)) +
        " distinct compiled frames (Torch-Compiled Region N/.). Where Dynamo cannot "
        "trace (data-dependent "
        "control flow, .item(), unsupported calls, print) it breaks the graph: Python "
        "runs between the "
        "pieces and each piece is optimised alone. Separately compiled functions (a "
        "compiled model and a "
        "compiled optimizer step) also show as several frames; the trace cannot tell "
        "the two apart, and "
        "what the breaks cost is not measured.";
    f.fix = "List the breaks with torch._dynamo.explain(model)(inputs) (or "
            "TORCH_LOGS=\"graph_breaks\"), remove them, "
            "and compile with fullgraph=True to make any new break an error.";
    f.snippet = "explanation = torch._dynamo.explain(model)(example_inputs)\n"
                "print(explanation.graph_break_count, explanation.break_reasons)\n"
                "model = torch.compile(model, fullgraph=True)   # a break is now an error";
    out.push_back(std::move(f));
}

} // namespace stallscope::analysis::detail
