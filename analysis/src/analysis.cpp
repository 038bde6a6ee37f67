#include "stallscope/analysis/analysis.h"

#include "analysis_context.h"
#include "detector_registry.h"
#include "device_metrics.h"
#include "hta_compat.h"
#include "idle_attribution.h"
#include "replay.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/base/text_format.h"
#include "stats_tables.h"
#include "warmup.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <tuple>

namespace stallscope::analysis {

std::string_view idleCauseName(IdleCause c) {
    static constexpr std::array<std::string_view, kIdleCauseCount> kNames{
        "data_loading",    "blocking_copy", "host_sync",
        "launch_overhead", "optimizer_cpu", "io_logging_checkpoint",
        "cpu_compute",     "host_untraced", "gpu_dependency",
        "allocator",       "setup",         "jit"};
    return kNames[static_cast<size_t>(c)];
}

std::string_view idleCauseDescription(IdleCause c) {
    static constexpr std::array<std::string_view, kIdleCauseCount> kText{
        "the launch thread was loading or preparing input data",
        "the launch thread was inside a synchronous or pageable-memory copy",
        "the launch thread was waiting for the GPU (synchronize, .item()) or had just done so",
        "the launch thread was launching kernels or dispatching operators",
        "the launch thread ran the optimizer on the CPU",
        "the launch thread was saving, serialising, writing or printing",
        "the launch thread ran other CPU operators",
        "the launch thread shows no traced event (Python, the GIL, other threads)",
        "work was queued but waited on the GPU side (events, other streams, collectives)",
        "the launch thread was inside memory allocation or free calls (cudaMalloc, cudaFree, "
        "hipFree, ...)",
        "the launch thread did one-off set-up: created streams, events or handles, loaded "
        "modules, or used a kernel or call for the first time",
        "the launch thread generated or tuned code: torch.compile, TorchScript fusion, NVRTC, "
        "cuDNN/MIOpen algorithm search"};
    return kText[static_cast<size_t>(c)];
}

std::string_view findingKindName(FindingKind k) {
    return k < FindingKind::Count ? detectorEntry(k).name : std::string_view("unknown");
}

bool findingKindFromName(std::string_view name, FindingKind& out) {
    for (const DetectorEntry& e : detectorCatalogue())
        if (e.name == name) {
            out = e.kind;
            return true;
        }
    return false;
}

std::string_view severityName(FindingSeverity s) {
    switch (s) {
    case FindingSeverity::High: return "high";
    case FindingSeverity::Medium: return "medium";
    case FindingSeverity::Low: return "low";
    case FindingSeverity::Note: return "note";
    }
    return "note";
}

namespace {

/// Above this many slices analyze() computes the statistics tables on a thread of their own.
constexpr size_t kParallelTablesSlices = 100'000;

/// Each idle nanosecond to at most one finding: a device-to-host copy's wait is host_sync's
/// (it charges it), so blocking_h2d_copy keeps only the rest of the blocking-copy idle.
void partitionIdle(std::vector<Finding>& findings) {
    for (Finding& b : findings) {
        if (b.kind != FindingKind::BlockingH2dCopy) continue;
        for (const Finding& h : findings)
            if (h.kind == FindingKind::HostSync && h.device == b.device)
                b.idleNs = std::max<int64_t>(0, b.idleNs - h.idleNs);
    }
}

/// A finding's claims in reading order: by where their text first appears in the title, the
/// explanation and the fix, then by text, measure and parameters. The order they were made in
/// is not used: a detector that builds a sentence from several claims in one expression makes
/// them in an order the C++ standard leaves to the compiler (gcc and clang differ).
void orderClaims(Finding& f) {
    const std::string text = f.title + "\n" + f.explanation + "\n" + f.fix;
    auto at = [&](const Claim& c) { return std::min(text.find(c.text), text.size()); };
    std::stable_sort(f.claims.begin(), f.claims.end(), [&](const Claim& a, const Claim& b) {
        const size_t pa = at(a), pb = at(b);
        if (pa != pb) return pa < pb;
        return std::tie(a.text, a.measure, a.params, a.value) <
               std::tie(b.text, b.measure, b.params, b.value);
    });
}

/// The findings in the order the front ends say they are ("most severe first"): context
/// that silences the timing findings first (what the trace is), then by severity; within a
/// severity, context about the trace before timing, then the largest saving, then the most
/// idle time charged. A finding that rests on names alone (confidence 0.5 or less) is never
/// high.
void orderFindings(std::vector<Finding>& context, std::vector<Finding>& timing) {
    for (auto* v : {&context, &timing})
        for (Finding& f : *v) {
            if (f.confidence <= 0.5 && f.severity == FindingSeverity::High)
                f.severity = FindingSeverity::Medium;
            orderClaims(f);
        }
    std::vector<Finding> all;
    for (Finding& f : context)
        if (f.silencesTiming) all.push_back(std::move(f));
    const size_t first = all.size();
    for (Finding& f : context)
        if (!f.silencesTiming) all.push_back(std::move(f));
    const size_t contextEnd = all.size();
    for (Finding& f : timing) all.push_back(std::move(f));
    std::vector<bool> isContext(all.size());
    for (size_t i = 0; i < all.size(); ++i) isContext[i] = i < contextEnd;
    std::vector<size_t> order(all.size() - first);
    for (size_t i = 0; i < order.size(); ++i) order[i] = first + i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        const Finding& a = all[x];
        const Finding& b = all[y];
        if (a.severity != b.severity) return a.severity < b.severity;
        if (isContext[x] != isContext[y]) return bool(isContext[x]);
        if (a.savingNs != b.savingNs) return a.savingNs > b.savingNs;
        return a.idleNs > b.idleNs;
    });
    std::vector<Finding> sorted;
    sorted.reserve(all.size());
    for (size_t i = 0; i < first; ++i) sorted.push_back(std::move(all[i]));
    for (size_t i : order) sorted.push_back(std::move(all[i]));
    timing = std::move(sorted);
}

/// The savings from the replay: per device, the findings' fixes applied one after the other
/// (greedy: the fix that saves the most next); each finding saves what its fix adds. The
/// savings of a device thus add up to the replay of all its fixes.
/// Findings without a fix save 0 and keep their severity (low_utilization: the idle time it
/// is charged; memory_pressure: a risk; gpu_not_used: the whole window).
void runWaterfalls(const detail::Context& c, AnalysisResult& r, std::vector<Finding>& findings) {
    r.waterfalls.clear();
    std::vector<int32_t> subjects;
    for (const DeviceMetrics& d : r.devices) subjects.push_back(d.device);
    if (r.hostOnly) subjects.push_back(-1);
    for (int32_t device : subjects) {
        std::vector<Finding*> fs;
        for (Finding& f : findings)
            if (f.device == device && f.replayFix != Fix::Count) fs.push_back(&f);
        if (fs.empty()) continue;
        std::stable_sort(fs.begin(), fs.end(), [](const Finding* a, const Finding* b) {
            return a->savingNs > b->savingNs;
        });
        const detail::DeviceActivity* dev = nullptr;
        for (const auto& d : c.devices)
            if (d.device == device) dev = &d;
        double commKeep = 1;
        for (const DeviceMetrics& d : r.devices)
            if (d.device == device && d.commNs > 0)
                commKeep = double(d.commOverlapNs) / double(d.commNs);
        FixSet wanted = 0;
        for (const Finding* f : fs) wanted |= fixBit(f->replayFix);
        const detail::Replay replay(c, dev, commKeep, wanted);
        detail::Replay::Scratch mine, theirs; // memory reused run after run, per thread
        const int64_t base = replay.run(0, mine);
        if (base <= 0) continue;
        Waterfall wf;
        wf.device = device;
        wf.measuredNs = c.window.length();
        wf.replayedNs = base;
        // Greedy: each bar applies the remaining fix that saves the most on top of the ones
        // before it (ties: the detector's estimate, larger first).
        FixSet applied = 0;
        int64_t before = base;
        while (!fs.empty()) {
            // The candidates are independent runs: on a large trace, on two threads.
            std::vector<int64_t> after(fs.size());
            std::future<void> other;
            const size_t split = replay.items() > 200'000 && fs.size() > 1 ? fs.size() / 2 : 0;
            if (split)
                other = std::async(std::launch::async, [&] {
                    for (size_t i = 0; i < split; ++i)
                        after[i] = replay.run(applied | fixBit(fs[i]->replayFix), theirs);
                });
            for (size_t i = split; i < fs.size(); ++i)
                after[i] = replay.run(applied | fixBit(fs[i]->replayFix), mine);
            if (other.valid()) other.get();
            size_t best = 0;
            int64_t bestAfter = INT64_MAX;
            for (size_t i = 0; i < fs.size(); ++i)
                if (std::min(before, after[i]) < bestAfter)
                    best = i, bestAfter = std::min(before, after[i]);
            Finding* f = fs[best];
            fs.erase(fs.begin() + long(best));
            applied |= fixBit(f->replayFix);
            detail::setSaving(c, *f, before - bestAfter);
            wf.bars.push_back({f->id, f->replayFix, wf.measuredNs - (base - bestAfter)});
            before = bestAfter;
        }
        r.waterfalls.push_back(std::move(wf));
    }
}

void replaySavings(const detail::Context& c, AnalysisResult& r, std::vector<Finding>& findings) {
    runWaterfalls(c, r, findings);
    // host_sync fires on what the waits cost: when neither the replay, the idle it is
    // charged nor the GPU idle inside its longest wait (evidence, longest first) reaches the
    // note threshold (a short wait, or one beside a busy GPU), it is not a finding.
    const double note =
        c.options.thresholds.severityNote * double(std::max<int64_t>(1, c.window.length()));
    const model::SliceTable& s = c.trace.slices();
    const size_t before = findings.size();
    std::erase_if(findings, [&](const Finding& f) {
        // A busy-GPU finding needs the GPU to set the pace: when the replay saves (next to)
        // nothing by making its kernels shorter, the time goes elsewhere and it does not hold.
        if (f.kind == FindingKind::FusionCandidates) return f.savingShare < 0.005;
        if (f.kind != FindingKind::HostSync || double(f.savingNs) >= note ||
            double(f.idleNs) >= note)
            return false;
        if (f.evidence.empty()) return true;
        const uint32_t w = f.evidence.front().index();
        for (const auto& d : c.devices)
            if (d.device == f.device)
                return double(s.dur[w] - lengthWithin(d.busy, s.start[w], s.end(w))) < note;
        return true;
    });
    if (findings.size() != before) runWaterfalls(c, r, findings); // without the dropped fixes
    // Findings with no fix to replay save nothing.
    for (Finding& f : findings)
        if (f.replayFix == Fix::Count) {
            // What they are about stays as severe as it was; there is just no fix to time.
            const FindingSeverity keep = f.severity;
            detail::setSaving(c, f, 0);
            f.severity = keep;
        }
}

} // namespace

Interval stepSpan(const std::vector<Step>& steps, size_t i, int64_t windowEndNs) {
    const Step& st = steps[i];
    return {st.startNs, i + 1 < steps.size() ? std::max(st.startNs, steps[i + 1].startNs)
                                             : std::max(st.endNs, windowEndNs)};
}

std::string savingText(const Finding& f, std::string_view of) {
    if (f.replayFix != Fix::Count)
        return "saves " + base::formatDuration(f.savingNs) + " (" +
               base::formatPercent(f.savingShare) + " of " + std::string(of) + ") with " +
               std::string(fixDescription(f.replayFix)) + ", by the replay";
    if (f.idleNs > 0)
        return "no fix to replay; " + base::formatDuration(f.idleNs) +
               " of idle time charged to it";
    if (f.kind == FindingKind::GemmPadding || f.kind == FindingKind::UnfusedAttention)
        return "not replayed: what the fix saves depends on kernels the trace does not have";
    return "no time to save: " +
           std::string(f.kind == FindingKind::MemoryPressure ? "a risk" : "context");
}

namespace {

/// What the steady pass of analyze() takes over from the whole window's: the warm-up found
/// there and, per device, the warm-up steps' figures (measured over the whole window).
struct WarmupCarry {
    Warmup warmup;
    std::map<int32_t, std::vector<StepMetrics>> steps; // by device
};

AnalysisResult analyzeWith(const model::Trace& trace, const AnalysisOptions& options,
                           const WarmupCarry* carry);

/// The steady part of a window with a warm-up: analysed again from its end, the warm-up
/// steps' figures and the warm-up itself carried over.
AnalysisResult analyzeSteady(const model::Trace& trace, const AnalysisOptions& options,
                             Warmup warmup, const AnalysisResult& whole) {
    WarmupCarry carry;
    carry.warmup = std::move(warmup);
    for (const DeviceMetrics& d : whole.devices)
        for (const StepMetrics& st : d.steps)
            if (st.startNs < carry.warmup.endNs) {
                StepMetrics m = st;
                m.warmup = true;
                carry.steps[d.device].push_back(m);
            }
    AnalysisOptions steady = options;
    steady.window.fromNs = carry.warmup.endNs;
    return analyzeWith(trace, steady, &carry);
}

/// The warm-up steps' figures in front of each device's steady ones (after the detectors,
/// which read the steady steps only).
void spliceWarmupSteps(AnalysisResult& r, const WarmupCarry& carry) {
    for (DeviceMetrics& d : r.devices) {
        const auto it = carry.steps.find(d.device);
        std::erase_if(d.steps, [&](const StepMetrics& st) {
            return st.startNs < carry.warmup.endNs || st.endNs <= st.startNs;
        });
        if (it != carry.steps.end())
            d.steps.insert(d.steps.begin(), it->second.begin(), it->second.end());
    }
}

AnalysisResult analyzeWith(const model::Trace& trace, const AnalysisOptions& options,
                           const WarmupCarry* carry) {
    using namespace detail;
    AnalysisResult r;
    const auto cancelled = [&] {
        if (!options.cancel || !options.cancel->load(std::memory_order_relaxed)) return false;
        r.notes.push_back("cancelled");
        return true;
    };
    if (cancelled()) return r;
    Context c(trace, options);
    r.window = c.window;
    r.steps = c.steps;
    if (cancelled()) return r;

    // Step times (stepSpan: start to the next step's start) over the steps inside the window.
    std::vector<int64_t> durations;
    for (size_t i = 0; i < c.steps.size(); ++i) {
        const Interval span = stepSpan(c.steps, i, c.window.endNs);
        if (span.start >= c.window.startNs && span.end <= c.window.endNs)
            durations.push_back(span.end - span.start);
    }
    if (!durations.empty()) {
        StepTimeStats& s = r.stepTimes;
        s.count = durations.size();
        s.minNs = *std::min_element(durations.begin(), durations.end());
        s.maxNs = *std::max_element(durations.begin(), durations.end());
        double sum = 0, sq = 0;
        for (int64_t d : durations) sum += double(d);
        const double mean = sum / double(durations.size());
        for (int64_t d : durations) sq += (double(d) - mean) * (double(d) - mean);
        s.meanNs = static_cast<int64_t>(mean);
        s.cv = mean > 0 ? std::sqrt(sq / double(durations.size())) / mean : 0;
    }

    // The statistics tables and HTA's breakdowns read only the context: on a large trace
    // they run on a second thread beside the device metrics and the idle attribution.
    auto tables = [&c] {
        return std::pair<StatsTables, HtaBreakdown>(computeStats(c), computeHta(c));
    };
    std::future<std::pair<StatsTables, HtaBreakdown>> tablesLater;
    if (trace.slices().size() > kParallelTablesSlices)
        tablesLater = std::async(std::launch::async, tables);

    const std::vector<Interval> tiles = stepTiles(c);
    const CpuActivity cpu = collectCpuActivity(c);
    for (const DeviceActivity& d : c.devices) {
        if (cancelled()) return r; // a table thread still running is waited for by its future
        DeviceMetrics m = computeDeviceMetrics(c, d, cpu, tiles);
        std::vector<std::array<int64_t, kIdleCauseCount>> perStep;
        m.idle = attributeIdle(c, d, tiles, perStep);
        for (size_t i = 0; i < m.steps.size() && i < perStep.size(); ++i) m.steps[i].idleByCause = perStep[i];
        r.devices.push_back(std::move(m));
    }
    for (const DeviceActivity& d : c.devices)
        if (!d.mainLaunchThread.valid())
            r.notes.push_back("GPU " + std::to_string(d.device) +
                              ": no launch call is linked to its work (a GPU-only capture): what "
                              "the host did while it idled cannot be told");
    if (c.devices.empty() && trace.slices().size() == 0 && !trace.memorySamples().empty()) {
        r.notes.push_back(std::string(trace.allocatorSnapshot() ? "a CUDA allocator snapshot"
                                                                : "a memory timeline") +
                          ": it holds GPU memory, not GPU activity: its figures and advice are "
                          "in the Memory tab and `stallscope-cli memory`");
    } else if (c.devices.empty()) {
        r.notes.push_back("no GPU work in the analysed window: GPU metrics are empty");
        if (!c.steps.empty()) r.hostOnly = hostOnlyBreakdown(c, tiles);
    }
    if (c.steps.empty()) r.notes.push_back("no ProfilerStep#N ranges: per-step figures are not available");
    if (cancelled()) return r;
    // Leading warm-up: context, not the step. With a steady part after it, that part is
    // what the findings are about (analysed again from the warm-up's end); without one, the
    // warm-up is all there is and its context finding says so.
    if (!carry) {
        if (std::optional<Warmup> w = findWarmup(c, r)) {
            if (!w->wholeWindow) {
                if (tablesLater.valid()) tablesLater.wait(); // it reads this pass's context
                return analyzeSteady(trace, options, std::move(*w), r);
            }
            r.warmup = std::move(w);
        }
    } else {
        r.warmup = carry->warmup;
        for (Step& st : r.steps) st.warmup = st.startNs < carry->warmup.endNs;
    }
    std::tie(r.stats, r.hta) = tablesLater.valid() ? tablesLater.get() : tables();
    if (cancelled()) return r;
    r.efficiency = computeEfficiency(trace, r, options.cancel);
    if (cancelled()) return r;

    const DetectorInput in{c, r};
    // Context first: a graph capture's timing says nothing about the model, so it gets no
    // timing findings.
    std::vector<Finding> context;
    for (const Detector& d : detectors())
        if (d.entry.stage == DetectorStage::Context) d.run(in, context);
    const bool noTiming = std::any_of(context.begin(), context.end(),
                                      [](const Finding& f) { return f.silencesTiming; });
    std::vector<Finding> findings;
    for (const Detector& d : detectors())
        if (d.entry.stage == DetectorStage::Cause && !noTiming) d.run(in, findings);
    partitionIdle(findings);
    for (const Detector& d : detectors())
        if (d.entry.stage == DetectorStage::Residual && !noTiming) d.run(in, findings);
    if (cancelled()) return r;
    replaySavings(c, r, findings);
    for (Finding& f : context) { // about the trace: no time to save, as severe as they were
        const FindingSeverity keep = f.severity;
        detail::setSaving(c, f, 0);
        f.severity = keep;
    }
    orderFindings(context, findings);
    r.findings = std::move(findings);
    if (carry) spliceWarmupSteps(r, *carry);
    return r;
}

} // namespace

std::string_view shareBase(const AnalysisResult& r) {
    const bool steps = std::any_of(r.steps.begin(), r.steps.end(), [&](const Step& st) {
        return st.startNs >= r.window.startNs && st.startNs < r.window.endNs;
    });
    return steps && (r.window.kind == WindowKind::Steps || r.window.kind == WindowKind::Step)
               ? "step time"
               : "the window";
}

AnalysisResult analyze(const model::Trace& trace, const AnalysisOptions& options) {
    return analyzeWith(trace, options, nullptr);
}

} // namespace stallscope::analysis
