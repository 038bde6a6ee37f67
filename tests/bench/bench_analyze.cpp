// Analysis benchmark: imports a trace once, then times analyze() (all metrics, idle
// attribution, detectors, statistics, HTA breakdowns) as the best of --repeat runs and
// reports seconds per million events as one JSON line.
#include "stallscope/analysis/analysis.h"
#include "stallscope/importers/importer.h"

#include <chrono>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    int repeat = 3;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
        else path = argv[i];
    }
    if (!path) {
        std::fprintf(stderr, "usage: bench_analyze [--repeat R] FILE\n");
        return 2;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = stallscope::importers::importFile(path);
    if (!r) {
        std::fprintf(stderr, "bench_analyze: %s\n", r.error().message.c_str());
        return 1;
    }
    const double importS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& trace = *r.value();
    double best = 1e300;
    size_t findings = 0;
    for (int i = 0; i < repeat; ++i) {
        const auto a0 = std::chrono::steady_clock::now();
        const auto result = stallscope::analysis::analyze(trace);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count());
        findings = result.findings.size();
    }
    const double events = double(trace.importStats().entries);
    std::printf("{\"file\": \"%s\", \"events\": %.0f, \"import_seconds\": %.3f, \"analysis_seconds\": %.4f, "
                "\"analysis_seconds_per_million_events\": %.4f, \"findings\": %zu, \"json_bytes\": %llu}\n",
                path, events, importS, best, best / (events / 1e6), findings,
                static_cast<unsigned long long>(trace.importStats().textBytes));
    return 0;
}
