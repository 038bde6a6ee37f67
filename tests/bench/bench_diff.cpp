// Compare benchmark (issue 30): imports BEFORE and AFTER, analyses each (the baseline: what
// opening both costs), then compares them (analysis::diffRuns: aligned tables, the replay's
// predictions, the differential flame graph), and prints the seconds of each part and the
// ratio (import + analysis + diff) / (import + analysis) as one JSON line. Does not gate.
//
//   bench_diff BEFORE AFTER
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/flame_graph.h"
#include "stallscope/analysis/operator_groups.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/base/huge_pages.h"
#include "stallscope/importers/importer.h"

#include <chrono>
#include <cstdio>

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
} // namespace

int main(int argc, char** argv) {
    using namespace stallscope;
    base::tuneMalloc(argv);
    if (argc != 3) {
        std::fprintf(stderr, "usage: bench_diff BEFORE AFTER\n");
        return 2;
    }
    auto t0 = Clock::now();
    auto b = importers::importFile(argv[1]);
    auto a = importers::importFile(argv[2]);
    if (!b || !a) {
        std::fprintf(stderr, "bench_diff: cannot import: %s\n",
                     (!b ? b.error() : a.error()).message.c_str());
        return 1;
    }
    const double importS = secondsSince(t0);
    t0 = Clock::now();
    const analysis::AnalysisResult rb = analysis::analyze(*b.value());
    const analysis::AnalysisResult ra = analysis::analyze(*a.value());
    const double analyzeS = secondsSince(t0);
    t0 = Clock::now();
    const analysis::RunDiff d = analysis::diffRuns(*b.value(), rb, *a.value(), ra, {});
    const double diffS = secondsSince(t0);
    // Its parts, once more on their own: the operators by shapes and dtypes (args read back
    // from the files), the GPU flame graphs, BEFORE's replays.
    t0 = Clock::now();
    analysis::groupOperators(*b.value(), rb, analysis::OperatorGrouping::InputShapesAndTypes);
    analysis::groupOperators(*a.value(), ra, analysis::OperatorGrouping::InputShapesAndTypes);
    const double operatorsS = secondsSince(t0);
    t0 = Clock::now();
    analysis::buildFlameGraph(*b.value(), analysis::FlameMode::GpuTime, rb.window.startNs,
                              rb.window.endNs);
    analysis::buildFlameGraph(*a.value(), analysis::FlameMode::GpuTime, ra.window.startNs,
                              ra.window.endNs);
    const double flameS = secondsSince(t0);
    t0 = Clock::now();
    for (const auto& p : d.predictions) analysis::replayWindowNs(*b.value(), {}, p.device, p.fixes);
    const double replayS = secondsSince(t0);
    const size_t events = b.value()->slices().size() + a.value()->slices().size();
    std::printf("{\"events\": %zu, \"import_s\": %.3f, \"analyze_s\": %.3f, \"diff_s\": %.3f, "
                "\"operator_rows\": %zu, \"kernel_rows\": %zu, \"predictions\": %zu, "
                "\"operators_s\": %.3f, \"flame_s\": %.3f, \"one_replay_per_prediction_s\": %.3f, "
                "\"ratio_diff_to_open_both\": %.3f}\n",
                events, importS, analyzeS, diffS, d.operators.size(), d.kernels.size(),
                d.predictions.size(), operatorsS, flameS, replayS,
                (importS + analyzeS + diffS) / (importS + analyzeS));
    return 0;
}
