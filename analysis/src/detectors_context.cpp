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
    const Trace& t = c.trace;
    const SliceTable& s = t.slices();
    struct Region {
        int64_t start, end;
        uint32_t begin; // the BeginCapture call
    };
    std::map<uint32_t, std::vector<Region>> regions; // per CPU track
    size_t launches = 0, captured = 0, ran = 0;
    std::vector<SliceId> evidence;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        // Regions on this thread: each BeginCapture to the next EndCapture (to the trace's
        // end when the capture does not end in the trace).
        std::vector<Region>& rs = regions[ti];
        int64_t open = INT64_MIN;
        uint32_t openSlice = 0;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            const std::string_view n = t.str(s.name[i]);
            if (names::isCaptureBegin(n) && open == INT64_MIN)
                open = s.start[i], openSlice = i;
            else if (names::isCaptureEnd(n) && open != INT64_MIN) {
                rs.push_back({open, s.end(i), openSlice});
                open = INT64_MIN;
            }
        }
        if (open != INT64_MIN) rs.push_back({open, t.endNs(), openSlice});
        if (rs.empty()) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!c.is(i, kNcLaunch)) continue;
            ++launches;
            const bool inside = std::any_of(rs.begin(), rs.end(), [&](const Region& r) {
                return s.start[i] >= r.start && s.start[i] < r.end;
            });
            captured += inside;
            ran += !t.gpuWorkOf(SliceId(i)).empty();
            if (inside && evidence.size() < 12) evidence.push_back(SliceId(i));
        }
    }
    // Launches on threads without a capture region count too (they ran, or not).
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        if (t.tracks()[ti].kind == TrackKind::GpuStream || !regions[ti].empty()) continue;
        const TrackInfo& tr = t.tracks()[ti];
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
            if (c.is(i, kNcLaunch)) ++launches, ran += !t.gpuWorkOf(SliceId(i)).empty();
    }
    if (captured == 0 || 2 * captured < launches) return;
    Finding f = makeFinding(c, FindingKind::GraphCapture, -1, 0);
    f.severity = FindingSeverity::Note;
    f.confidence = 0.9;
    Intervals ranges;
    std::vector<SliceId> begins;
    for (const auto& [ti, rs] : regions)
        for (const Region& r : rs) {
            ranges.push_back({r.start, r.end});
            if (begins.size() < 4) begins.push_back(SliceId(r.begin));
        }
    f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
    f.evidence = begins;
    f.evidence.insert(f.evidence.end(), evidence.begin(), evidence.end());
    f.title = "This trace records a CUDA/HIP graph capture, not the model running";
    f.explanation =
        std::to_string(captured) + " of the " + std::to_string(launches) +
        " kernel launches in the trace happen between a stream's BeginCapture and EndCapture "
        "calls: "
        "they are recorded into a graph, not run (" +
        std::to_string(ran) +
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

} // namespace stallscope::analysis::detail
