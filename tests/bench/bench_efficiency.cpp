// Efficiency benchmark (issue 31): imports a trace, analyses it (the baseline: what opening it
// costs, the efficiency included), then computes the efficiency again on its own (the cost
// table's operators read back with their shapes, costed, carried to their kernels) and prints
// the seconds of each part and the ratio efficiency / (import + analysis) as one JSON line.
// Does not gate.
//
//   bench_efficiency TRACE
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/efficiency.h"
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
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_efficiency TRACE\n");
        return 2;
    }
    auto t0 = Clock::now();
    auto t = importers::importFile(argv[1]);
    if (!t) {
        std::fprintf(stderr, "bench_efficiency: cannot import: %s\n", t.error().message.c_str());
        return 1;
    }
    const double importS = secondsSince(t0);
    t0 = Clock::now();
    const analysis::AnalysisResult r = analysis::analyze(*t.value());
    const double analyzeS = secondsSince(t0);
    t0 = Clock::now();
    const analysis::Efficiency e = analysis::computeEfficiency(*t.value(), r);
    const double efficiencyS = secondsSince(t0);
    std::printf("{\"bench\": \"efficiency\", \"events\": %zu, \"operator_rows\": %zu, "
                "\"costed_calls\": %llu, "
                "\"import_s\": %.3f, \"analyze_s\": %.3f, \"efficiency_s\": %.3f, "
                "\"efficiency_over_open\": %.3f}\n",
                t.value()->eventCount(), e.operators.size(),
                static_cast<unsigned long long>(e.costedCalls), importS, analyzeS, efficiencyS,
                efficiencyS / (importS + analyzeS));
    return 0;
}
