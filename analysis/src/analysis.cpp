#include "stallscope/analysis/analysis.h"

#include "analysis_context.h"
#include "detector_registry.h"
#include "device_metrics.h"
#include "hta_compat.h"
#include "idle_attribution.h"
#include "stats_tables.h"

#include <algorithm>
#include <cmath>

namespace stallscope::analysis {

std::string_view idleCauseName(IdleCause c) {
    static constexpr std::array<std::string_view, kIdleCauseCount> kNames{
        "data_loading", "blocking_copy", "host_sync", "launch_overhead", "optimizer_cpu",
        "io_logging_checkpoint", "cpu_compute", "host_untraced", "gpu_dependency"};
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
        "work was queued but waited on the GPU side (events, other streams, collectives)"};
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

AnalysisResult analyze(const model::Trace& trace, const AnalysisOptions& options) {
    using namespace detail;
    AnalysisResult r;
    Context c(trace, options);
    r.window = c.window;
    r.steps = c.steps;

    // Step times over the steps inside the window.
    std::vector<int64_t> durations;
    for (const Step& st : c.steps)
        if (st.startNs >= c.window.startNs && st.endNs <= c.window.endNs) durations.push_back(st.endNs - st.startNs);
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

    const std::vector<Interval> tiles = stepTiles(c);
    const CpuActivity cpu = collectCpuActivity(c);
    for (const DeviceActivity& d : c.devices) {
        DeviceMetrics m = computeDeviceMetrics(c, d, cpu, tiles);
        std::vector<std::array<int64_t, kIdleCauseCount>> perStep;
        m.idle = attributeIdle(c, d, tiles, perStep);
        for (size_t i = 0; i < m.steps.size() && i < perStep.size(); ++i) m.steps[i].idleByCause = perStep[i];
        r.devices.push_back(std::move(m));
    }
    if (c.devices.empty()) {
        r.notes.push_back("no GPU work in the analysed window: GPU metrics are empty");
        if (!c.steps.empty()) r.hostOnly = hostOnlyBreakdown(c, tiles);
    }
    if (c.steps.empty()) r.notes.push_back("no ProfilerStep#N ranges: per-step figures are not available");
    r.stats = computeStats(c);
    r.hta = computeHta(c);

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
    // Fallbacks (host_bound) only where no more specific finding covers the same time.
    for (const Detector& d : detectors()) {
        if (d.entry.stage != DetectorStage::Fallback || noTiming) continue;
        std::vector<Finding> fallback;
        d.run(in, fallback);
        for (Finding& f : fallback) {
            bool covered = false;
            for (const Finding& g : findings)
                covered |= g.device == f.device &&
                           (g.kind == FindingKind::LightModel || g.kind == FindingKind::LaunchBound) &&
                           2.0 * double(g.savingNs) >= double(f.savingNs);
            if (!covered) findings.push_back(std::move(f));
        }
    }
    for (const Detector& d : detectors())
        if (d.entry.stage == DetectorStage::Residual && !noTiming) d.run(in, findings);
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        if (a.savingNs != b.savingNs) return a.savingNs > b.savingNs;
        return a.severity < b.severity;
    });
    findings.insert(findings.begin(), std::make_move_iterator(context.begin()),
                    std::make_move_iterator(context.end()));
    r.findings = std::move(findings);
    return r;
}

} // namespace stallscope::analysis
