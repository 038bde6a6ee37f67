// The CPU-dispatch root cause: the GPU waits while the host dispatches work (launch calls,
// CPU operators, the optimizer on the CPU, Python between operators). One finding with its
// evidence (launch-bound steps, kernels too small to fill the GPU, matrix-multiply work per
// step from the input shapes, the busiest operators) and its fixes ranked by the idle time
// each addresses.
#include "arg_values.h"
#include "detectors.h"

#include "stallscope/analysis/efficiency.h"
#include "stallscope/analysis/flop_model.h"
#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {
constexpr size_t idx(IdleCause c) {
    return static_cast<size_t>(c);
}

struct MatmulWork {
    double flops = 0; // of the operators read; perStep() extrapolates to all
    size_t ops = 0, read = 0, withShapes = 0;
    bool upperBound = false; // a convolution without its strides (counted at stride 1)
    [[nodiscard]] double perStep() const {
        return read > 0 && withShapes > 0 ? flops * double(ops) / double(read) : flops;
    }
};

/// Model FLOPs (the cost table's tensor math: docs/analysis.md "Efficiency") of the first
/// whole step in the window (or the window): operators no other operator of the table
/// encloses (aten::linear counts once, not again for its addmm).
MatmulWork matmulWork(const Context& c) {
    const SliceTable& s = c.trace.slices();
    const FlopModel& model = FlopModel::builtIn();
    Interval span{c.window.startNs, c.window.endNs};
    for (const Step& st : c.steps)
        if (st.startNs >= c.window.startNs && st.endNs <= c.window.endNs) {
            span = {st.startNs, st.endNs};
            break;
        }
    auto rule = [&](uint32_t i) {
        return s.kind[i] == EventKind::CpuOp ? model.find(c.name(i)) : nullptr;
    };
    MatmulWork w;
    size_t budget = 20'000; // argument reads (each reads the event's text again)
    std::vector<model::ArgValue> args;
    std::string error;
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(TrackId(ti), span.start);
             i < tr.sliceEnd && s.start[i] < span.end; ++i) {
            if (s.kind[i] != EventKind::CpuOp || s.start[i] < span.start) continue;
            const FlopModel::Rule* r = rule(i);
            if (!r || !tensorMath(r->formula)) continue;
            bool nested = false;
            for (SliceId p = s.parent[i]; p.valid() && !nested; p = s.parent[p.index()])
                nested = rule(p.index());
            if (nested) continue;
            ++w.ops;
            if (budget == 0) continue;
            --budget;
            ++w.read;
            args.clear();
            if (!c.trace.sliceArgs(SliceId(i), args, error)) continue;
            OperatorInputs in;
            for (const auto& a : args) {
                if (a.key == "Input Dims" || a.key == "Input dims") in.dims = parseDims(a.json);
                if (a.key == "Input type") in.types = parseStrings(a.json);
                if (a.key == "Concrete Inputs") in.concrete = parseStrings(a.json);
            }
            const OperatorCost cost = FlopModel::cost(*r, in);
            if (!cost.sized) continue;
            w.flops += cost.flops;
            ++w.withShapes;
            if (!cost.exact) w.upperBound = true;
        }
    }
    return w;
}

/// One subject's idle time charged to the host's dispatch, and the evidence its finding is
/// built from.
struct DispatchEvidence {
    int32_t device = -1;
    bool hostOnly = false;
    const DeviceActivity* dev = nullptr; // null: a CPU-only trace
    int64_t launch = 0, cpu = 0, optim = 0, untraced = 0, total = 0;
    // Evidence 1: launch-bound steps.
    size_t boundSteps = 0, regionsSeen = 0, kernelsBound = 0, shortBound = 0;
    double queueSum = 0;
    std::vector<SliceId> evidence;
    std::vector<int64_t> kernelDurs;
    double gemmNs = 0, gemmBlocks = 0, gemmBlockWeight = 0;
    // Already on CUDA/HIP Graphs.
    size_t fromGraphs = 0;
    bool usesGraphs = false;
    // Evidence 2: kernels too small to fill the GPU.
    int64_t medianKernel = -1;
    double blocksPerSm = -1;
    bool smallKernels = false;
    // Evidence 3: the model's matrix-multiply work per step.
    const MatmulWork* work = nullptr;
    bool shapesKnown = false, light = false;
    [[nodiscard]] bool bound() const { return boundSteps > 0; }
};

// Evidence 1: launch-bound steps (most kernels shorter than their launch call, the
// launch queue nearly empty, the GPU busy < 60 % of the time not spent loading data).
// Also collects the kernels' durations and the GEMMs' blocks per SM (evidence 2).
void findLaunchBoundSteps(const Context& c, const CauseSubject& subj, const DeviceActivity& dev,
                          DispatchEvidence& e) {
    const SliceTable& s = c.trace.slices();
    const Thresholds& th = c.options.thresholds;
    std::vector<Interval> regions;
    for (const auto& st : subj.steps) regions.push_back({st.startNs, st.endNs});
    if (regions.empty()) regions.push_back({c.window.startNs, c.window.endNs});
    for (size_t r = 0; r < regions.size(); ++r) {
        const Interval reg = regions[r];
        const auto ks = kernelsIn(c, dev, reg.start, reg.end);
        for (const KernelView& k : ks) {
            e.kernelDurs.push_back(s.dur[k.slice]);
            if (!c.is(k.slice, kNcGemm)) continue;
            const double dur = double(s.dur[k.slice]);
            e.gemmNs += dur;
            const float b = SliceExtra::blocksPerSm(s.extra[k.slice]);
            if (b > 0) e.gemmBlocks += b * dur, e.gemmBlockWeight += dur;
        }
        if (int(ks.size()) < th.launchBoundMinKernels && reg.length() < th.launchBoundMinRegionNs)
            continue;
        ++e.regionsSeen;
        size_t shorter = 0;
        double queued = 0;
        for (const KernelView& k : ks) {
            if (!k.launch.valid()) continue;
            const int64_t ld = s.dur[k.launch.index()];
            if (s.dur[k.slice] < ld) ++shorter;
            queued +=
                double(std::max<int64_t>(0, s.start[k.slice] - (s.start[k.launch.index()] + ld)));
        }
        int64_t excluded = 0;
        if (r < subj.steps.size())
            excluded = subj.steps[r].idleByCause[idx(IdleCause::DataLoading)] +
                       subj.steps[r].idleByCause[idx(IdleCause::IoLoggingCheckpoint)];
        const int64_t activeNs = std::max<int64_t>(1, reg.length() - excluded);
        const double busy = double(lengthWithin(dev.busy, reg.start, reg.end)) / double(activeNs);
        const double meanQueue = queued / double(activeNs);
        if (ks.empty() || busy >= th.launchBoundMaxBusy || shorter * 2 < ks.size() ||
            meanQueue >= 0.5)
            continue;
        ++e.boundSteps;
        e.kernelsBound += ks.size();
        e.shortBound += shorter;
        e.queueSum += meanQueue;
        for (size_t i = 0; i < ks.size() && e.evidence.size() < 20;
             i += std::max<size_t>(1, ks.size() / 6)) {
            e.evidence.push_back(SliceId(ks[i].slice));
            if (ks[i].launch.valid()) e.evidence.push_back(ks[i].launch);
        }
    }
}

// Already on CUDA/HIP Graphs: most work comes from graph launches.
void findGraphLaunches(const Context& c, DispatchEvidence& e) {
    if (e.dev)
        for (SliceId l : e.dev->launch)
            e.fromGraphs += l.valid() && c.is(l.index(), kNcGraphLaunch);
    e.usesGraphs = e.dev && 2 * e.fromGraphs > e.dev->launch.size();
}

// Evidence 2: kernels too small to fill the GPU (the batch?).
void findSmallKernels(const Thresholds& th, DispatchEvidence& e) {
    if (e.kernelDurs.size() >= 20) {
        std::nth_element(e.kernelDurs.begin(), e.kernelDurs.begin() + long(e.kernelDurs.size() / 2),
                         e.kernelDurs.end());
        e.medianKernel = e.kernelDurs[e.kernelDurs.size() / 2];
    }
    e.blocksPerSm = e.gemmBlockWeight > 0 ? e.gemmBlocks / e.gemmBlockWeight : -1;
    e.smallKernels = e.medianKernel >= 0 && e.medianKernel < th.smallBatchMedianKernelNs &&
                     e.blocksPerSm >= 0 && e.blocksPerSm < th.smallBatchMaxBlocksPerSm;
}

/// The claim parameters of the idle time of `causes` on device `dv`.
ClaimParams idleOf(int32_t dv, const std::vector<IdleCause>& causes) {
    return ClaimParams().device(dv).causes(causes);
}

/// The explanation's opening: the idle time by kind of host work, and the busiest operators.
std::string hostIdleText(const Context& c, Finding& f, const DispatchEvidence& e) {
    using K = IdleCause;
    const int32_t dv = e.device;
    const int64_t total = e.total, launch = e.launch, cpu = e.cpu, optim = e.optim,
                  untraced = e.untraced;
    const int64_t traced = launch + cpu + optim;
    const std::vector<IdleCause> all{K::LaunchOverhead, K::CpuCompute, K::OptimizerCpu,
                                     K::HostUntraced};
    std::string text = (e.hostOnly ? "The thread running the steps spent " : "The GPU was idle ") +
                       saidNs(f, total, "idle_ns", idleOf(dv, all)) + " (" +
                       saidShare(f, double(total) / double(c.window.length()), "idle_ns",
                                 idleOf(dv, all), "window_ns", {}) +
                       " of " + shareBase(c) + ") " +
                       (e.hostOnly ? "on its own work: " : "waiting for the host's own work: ") +
                       "launch calls and the dispatch between them " +
                       saidNs(f, launch, "idle_ns", idleOf(dv, {K::LaunchOverhead})) +
                       ", CPU operators " + saidNs(f, cpu, "idle_ns", idleOf(dv, {K::CpuCompute})) +
                       ", optimizer on the CPU " +
                       saidNs(f, optim, "idle_ns", idleOf(dv, {K::OptimizerCpu})) +
                       ", untraced (Python, the GIL) " +
                       saidNs(f, untraced, "idle_ns", idleOf(dv, {K::HostUntraced})) + ".";
    if (!f.waitedFor.empty())
        text += " Busiest on the host: " +
                describeWaitedFor(f, f.waitedFor, dv,
                                  {K::LaunchOverhead, K::CpuCompute, K::OptimizerCpu}, traced) +
                ".";
    return text;
}

/// Evidence 1 and 2 in words: the launch-bound steps, the small kernels.
void appendKernelText(Finding& f, const DispatchEvidence& e, bool anySteps, std::string& text) {
    const int32_t dv = e.device;
    const bool bound = e.bound();
    const auto lb = [&](const char* stat) { return ClaimParams().device(dv).str("stat", stat); };
    if (bound && anySteps)
        text += " " +
                said(f, std::to_string(e.boundSteps), "launch_bound", lb("steps"),
                     double(e.boundSteps)) +
                " of " +
                said(f, std::to_string(e.regionsSeen), "launch_bound", lb("regions"),
                     double(e.regionsSeen)) +
                " steps are launch-bound: ";
    else if (bound)
        text += " The window is launch-bound: ";
    if (bound) {
        const double shortShare =
            double(e.shortBound) / double(std::max<size_t>(1, e.kernelsBound));
        char b[32];
        std::snprintf(b, sizeof b, "%.2f", e.queueSum / double(e.boundSteps));
        text += said(f, fmtPct(shortShare), "launch_bound", lb("short_share"), shortShare) +
                (anySteps ? " of their" : " of its") +
                " kernels ran shorter than the call that launched them and the launch "
                "queue held " +
                said(f, b, "launch_bound", lb("mean_queue"), e.queueSum / double(e.boundSteps)) +
                " items on average.";
    }
    if (e.smallKernels) {
        char b[96];
        std::snprintf(b, sizeof b, "%.2f", e.blocksPerSm);
        text += " Kernels are small: median " +
                saidNs(f, e.medianKernel, "kernel_median_ns", ClaimParams().device(dv)) +
                ", matrix multiplies at " +
                said(f, b, "matmul_blocks_per_sm", ClaimParams().device(dv), e.blocksPerSm) +
                " blocks per SM (the batch does not fill the GPU).";
    }
}

/// Evidence 3 in words: the matrix-multiply work per step, or why it cannot be told.
void appendMatmulText(Finding& f, const DispatchEvidence& e, bool anySteps, std::string& text) {
    const MatmulWork* work = e.work;
    const std::string per = anySteps ? " per step" : " in the window";
    const auto mf = [&](const char* stat) { return ClaimParams().str("stat", stat); };
    if (e.shapesKnown)
        text +=
            " Matrix multiplies, convolutions and attention do " +
            said(f, formatFlops(work->perStep()), "matmul_flops", mf("flops"), work->perStep()) +
            per + " (input shapes of " +
            said(f, std::to_string(work->withShapes), "matmul_flops", mf("with_shapes"),
                 double(work->withShapes)) +
            " operators" +
            (work->read < work->ops ? " read of " +
                                          said(f, std::to_string(work->ops), "matmul_flops",
                                               mf("ops"), double(work->ops)) +
                                          ", the rest extrapolated"
             : work->withShapes < work->ops
                 ? " of " + said(f, std::to_string(work->ops), "matmul_flops", mf("ops"),
                                 double(work->ops))
                 : std::string()) +
            (work->upperBound ? "; convolutions whose strides the trace does not record at " +
                                    saidConstant(f, "stride 1", "the FLOP count's assumption") +
                                    ", an upper bound)"
                              : std::string(")")) +
            (e.light ? ": the model is light, the GPU finishes it faster than the host can "
                       "issue it."
                     : ": the model is not light, the host side is what is slow.");
    else if (!e.hostOnly && work->ops == 0)
        text += " Whether the model itself is light cannot be told: the " +
                std::string(anySteps ? "step" : "window") +
                " has no matrix-multiply, convolution or attention operator to size it by.";
    else if (!e.hostOnly)
        text += " Whether the model itself is light cannot be told: its " +
                said(f, std::to_string(work->ops), "matmul_flops", mf("ops"), double(work->ops)) +
                " matrix-multiply, convolution and attention operator" +
                (work->ops == 1 ? "" : "s") + " carry no input shapes (record_shapes=True).";
}

/// The explanation's close: work already on graphs, time with no traced event.
void appendGraphsAndUntracedText(Finding& f, const DispatchEvidence& e, std::string& text) {
    const int32_t dv = e.device;
    if (e.usesGraphs)
        text += " The work already runs as CUDA/HIP Graphs (" +
                said(f, std::to_string(e.fromGraphs), "graph_items",
                     ClaimParams().device(dv).str("stat", "from_graphs"), double(e.fromGraphs)) +
                " of " +
                said(f, std::to_string(e.dev->launch.size()), "graph_items",
                     ClaimParams().device(dv).str("stat", "items"), double(e.dev->launch.size())) +
                " items from graph launches): the time left is the host's own, around the graphs.";
    if (e.untraced > e.total - e.untraced) // not untraced * 2: durations reach 2^62
        text += " Most of this time shows no traced event: profile with with_stack=True to see "
                "the Python behind it.";
}

/// A fix with the idle time it addresses (the time of `causes`).
struct RankedFix {
    int64_t weight;
    std::string text, snippet;
    std::vector<IdleCause> causes;
};

/// The fixes that fit the evidence, in the order they are ranked on a tie.
std::vector<RankedFix> dispatchFixes(const Context& c, Finding& f, const DispatchEvidence& e) {
    using K = IdleCause;
    const bool bound = e.bound();
    const int64_t launch = e.launch, cpu = e.cpu, optim = e.optim, untraced = e.untraced;
    std::vector<RankedFix> fixes;
    // "the step" only where the window is made of steps (a trace without ProfilerSteps, e.g.
    // an Nsight or rocprof export, may hold no training loop).
    const bool steps = shareBase(c) == "step time";
    if (!e.usesGraphs && launch + (bound ? cpu : 0) > 0)
        fixes.push_back(
            {launch + (bound ? cpu : 0),
             std::string(steps ? "capture the step" : "capture the repeated launches") +
                 " in CUDA Graphs (torch.compile mode=\"reduce-overhead\", or "
                 "torch.cuda.graphs) so launches cost " +
                 saidConstant(f, "~1 us", "a graph replay's cost per kernel") +
                 " per kernel; fuse small ops with torch.compile",
             "model = torch.compile(model, mode=\"reduce-overhead\")  # fusion + CUDA Graphs",
             bound ? std::vector<IdleCause>{K::LaunchOverhead, K::CpuCompute}
                   : std::vector<IdleCause>{K::LaunchOverhead}});
    if (e.smallKernels || e.light)
        fixes.push_back(
            {launch + cpu,
             hasBackward(c)
                 ? "raise the batch size (or sequence packing) so each kernel does more work"
                 : "batch more inputs (requests) per call so each kernel does more work",
             "loader = DataLoader(dataset, batch_size=4 * batch_size, ...)  # more work per "
             "launch",
             {K::LaunchOverhead, K::CpuCompute}});
    if (optim > 0) {
        const std::string cls = optimizerClass(c);
        const bool fusedKnown = cls == "Adam" || cls == "AdamW" || cls == "SGD" || cls == "Adagrad";
        const bool alreadyFused = cls.find("Fused") != std::string::npos;
        if (!alreadyFused)
            fixes.push_back(
                {optim,
                 cls.empty() ? "use a fused or foreach optimizer (one kernel for all parameters)"
                 : fusedKnown
                     ? "make " + cls + " fused (fused=True: one kernel for all parameters; " +
                           saidConstant(f, "PyTorch 2.0", "the release fused Adam/AdamW came in") +
                           " for Adam/AdamW, later for SGD and Adagrad; foreach=True where "
                           "fused "
                           "is missing)"
                     : "make " + cls +
                           " a foreach optimizer (foreach=True: a few kernels for "
                           "all parameters)",
                 cls.empty()  ? "optimizer = torch.optim.AdamW(params, lr=lr, fused=True)  # or "
                                "foreach=True"
                 : fusedKnown ? "optimizer = torch.optim." + cls + "(params, lr=lr, fused=True)"
                              : "optimizer = torch.optim." + cls + "(params, lr=lr, foreach=True)",
                 {K::OptimizerCpu}});
    }
    if (cpu + untraced > 0)
        fixes.push_back(
            {cpu + untraced,
             std::string(steps ? "move CPU work out of the step"
                               : "move CPU work off the thread that launches the GPU work") +
                 " (or onto the GPU) and cut Python overhead with torch.compile; profile with "
                 "with_stack=True to see untraced Python",
             "prof = torch.profiler.profile(with_stack=True)  # names the Python behind "
             "untraced time",
             {K::CpuCompute, K::HostUntraced}});
    return fixes;
}

// The fixes, ranked by the idle time each addresses.
void setFixes(const Context& c, Finding& f, const DispatchEvidence& e) {
    std::vector<RankedFix> fixes = dispatchFixes(c, f, e);
    std::stable_sort(fixes.begin(), fixes.end(),
                     [](const RankedFix& a, const RankedFix& b) { return a.weight > b.weight; });
    std::string fix, snippet;
    for (size_t i = 0; i < fixes.size(); ++i) {
        fix += (i ? " " : "") + std::to_string(i + 1) + ". " + fixes[i].text + " (" +
               saidNs(f, fixes[i].weight, "idle_ns", idleOf(e.device, fixes[i].causes)) +
               " of this idle time)" + (i + 1 < fixes.size() ? ";" : ".");
        if (i < 2) snippet += (snippet.empty() ? "" : "\n") + fixes[i].snippet;
    }
    f.fix = std::move(fix);
    f.snippet = std::move(snippet);
}

/// The finding of one subject, from its evidence (whose evidence slices it takes).
Finding dispatchFinding(const Context& c, const CauseSubject& subj, DispatchEvidence& e) {
    Finding f = makeFinding(c, FindingKind::CpuDispatch, subj.device, e.total);
    f.idleNs = e.total;
    // Graphs already replay this work: no CUDA Graphs fix to time.
    f.replayFix = e.usesGraphs ? Fix::Count : Fix::CudaGraphs;
    Intervals ranges;
    for (IdleCause k : {IdleCause::LaunchOverhead, IdleCause::CpuCompute, IdleCause::OptimizerCpu,
                        IdleCause::HostUntraced})
        ranges.insert(ranges.end(), subj.idle.intervals[idx(k)].begin(),
                      subj.idle.intervals[idx(k)].end());
    f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
    std::map<StringId, int64_t> merged;
    for (IdleCause k : {IdleCause::LaunchOverhead, IdleCause::CpuCompute, IdleCause::OptimizerCpu})
        for (const auto& [id, t] : subj.idle.waitedFor[idx(k)]) merged[id] += t;
    f.waitedFor = topWaitedFor(c, merged, 6);
    for (const auto& g : subj.idle.gaps)
        if (g.endingWork.valid() && e.evidence.size() < 30) e.evidence.push_back(g.endingWork);
    f.evidence = std::move(e.evidence);

    const bool bound = e.bound(), light = e.light;
    const int64_t traced = model::satAdd(model::satAdd(e.launch, e.cpu), e.optim);
    const bool untracedOnly =
        model::satMul(traced, 10) < e.total; // what the host did is not in the trace
    const bool anySteps = shareBase(c) == "step time";
    f.title = untracedOnly ? "The GPU waits for the host, and the trace does not show what it did"
              : light      ? "The GPU waits for the CPU: the model is too light to fill it"
              : bound      ? "The GPU waits for the CPU: kernel launches set the pace"
                           : "The GPU waits for the CPU to dispatch work";
    std::string text = hostIdleText(c, f, e);
    appendKernelText(f, e, anySteps, text);
    appendMatmulText(f, e, anySteps, text);
    appendGraphsAndUntracedText(f, e, text);
    f.explanation = std::move(text);

    setFixes(c, f, e);
    f.confidence = bound || light ? 0.7 : e.untraced > e.total - e.untraced ? 0.5 : 0.6;
    return f;
}

} // namespace

void detectCpuDispatch(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const Thresholds& th = c.options.thresholds;
    std::optional<MatmulWork> work; // read once, for the first device that needs it
    for (const CauseSubject& subj : causeSubjects(in.result)) {
        const auto ns = [&](IdleCause k) { return subj.idle.causes[idx(k)].ns; };
        const int64_t launch = ns(IdleCause::LaunchOverhead), cpu = ns(IdleCause::CpuCompute),
                      optim = ns(IdleCause::OptimizerCpu), untraced = ns(IdleCause::HostUntraced);
        const int64_t total = launch + cpu + optim + untraced;
        // CPU-only traces: what the host does is the step itself; data loading and logging
        // have their findings there, the rest is the model's own CPU time.
        if (subj.hostOnly || total <= 0 ||
            double(total) < th.cpuDispatchMinShare * double(c.window.length()))
            continue;
        const DeviceActivity* dev = nullptr;
        for (const DeviceActivity& d : c.devices)
            if (d.device == subj.device) dev = &d;
        // GPU activity without one launch call linked to it (a GPU-only capture): what the
        // host did is not in the trace, so no dispatch can be named.
        if (dev && !dev->mainLaunchThread.valid()) continue;

        DispatchEvidence e;
        e.device = subj.device;
        e.hostOnly = subj.hostOnly;
        e.dev = dev;
        e.launch = launch, e.cpu = cpu, e.optim = optim, e.untraced = untraced, e.total = total;
        if (dev) findLaunchBoundSteps(c, subj, *dev, e);
        findGraphLaunches(c, e);
        findSmallKernels(th, e);
        // Evidence 3: the model's matrix-multiply work per step, from the input shapes.
        if (!work) work = matmulWork(c);
        e.work = &*work;
        e.shapesKnown = work->withShapes > 0;
        e.light = e.shapesKnown && work->perStep() < th.lightModelMaxGflopPerStep * 1e9;
        out.push_back(dispatchFinding(c, subj, e));
    }
}

} // namespace stallscope::analysis::detail
