// Analysis benchmark: imports a trace once (or builds the synthetic training trace of
// synthetic_trace.h with --synthetic N), then times analyze() (all metrics, idle attribution,
// detectors, statistics, HTA breakdowns) as the best of --repeat runs and reports seconds per
// million events as one JSON line.
//
//   bench_analyze [--repeat R] FILE
//   bench_analyze [--repeat R] --synthetic N      (about N events; adds "synthetic": true)
//   --dump OUT: also write the last run's analysis (the JSON of analysis_json.h, every row,
//   and each device's idle gaps) to OUT, to compare the results of two builds.
#include "stallscope/base/huge_pages.h"
#include "synthetic_trace.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/analysis_json.h"
#include "stallscope/importers/importer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void dump(const char* out, const stallscope::model::Trace& trace,
          const stallscope::analysis::AnalysisResult& r) {
    using namespace stallscope;
    base::JsonWriter w;
    analysis::JsonOptions o;
    o.maxTableRows = SIZE_MAX;
    o.maxEvidence = SIZE_MAX;
    analysis::writeAnalysisJson(w, trace, r, "", 0, o);
    std::ofstream f(out, std::ios::binary);
    f << w.str() << "\n";
    for (const auto& d : r.devices) {
        f << "device " << d.device << " gaps " << d.idle.gaps.size() << "\n";
        for (const auto& g : d.idle.gaps)
            f << g.startNs << ' ' << g.endNs << ' ' << int(g.dominant) << ' ' << g.endingWork.value
              << ' ' << g.launch.value << "\n";
        for (size_t k = 0; k < d.idle.waitedFor.size(); ++k)
            for (const auto& [name, ns] : d.idle.waitedFor[k])
                f << "waited " << k << ' ' << name.value << ' ' << ns << "\n";
    }
}

} // namespace

int main(int argc, char** argv) {
    stallscope::base::tuneMalloc(argv); // docs/decisions.md, "Import at the speed of the parser"
    int repeat = 3;
    const char* path = nullptr;
    size_t synthetic = 0;
    const char* dumpTo = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--dump") && i + 1 < argc)
            dumpTo = argv[++i];
        else if (!std::strcmp(argv[i], "--synthetic") && i + 1 < argc)
            synthetic = std::strtoull(argv[++i], nullptr, 10);
        else path = argv[i];
    }
    if (!path && !synthetic) {
        std::fprintf(stderr,
                     "usage: bench_analyze [--repeat R] [--dump OUT] FILE | --synthetic N\n");
        return 2;
    }
    const auto t0 = Clock::now();
    std::shared_ptr<const stallscope::model::Trace> tracePtr;
    std::string label;
    if (synthetic) {
        tracePtr = stallscope::bench::makeSyntheticTrace(synthetic).trace;
        label = "synthetic " + std::to_string(synthetic);
    } else {
        auto r = stallscope::importers::importFile(path);
        if (!r) {
            std::fprintf(stderr, "bench_analyze: %s\n", r.error().message.c_str());
            return 1;
        }
        tracePtr = r.value();
        label = path;
    }
    const double importS = secondsSince(t0);
    const auto& trace = *tracePtr;
    double best = 1e300;
    size_t findings = 0;
    for (int i = 0; i < repeat; ++i) {
        const auto a0 = Clock::now();
        const auto result = stallscope::analysis::analyze(trace);
        best = std::min(best, secondsSince(a0));
        findings = result.findings.size();
        if (dumpTo && i + 1 == repeat) dump(dumpTo, trace, result);
    }
    // A synthetic trace has no import statistics: its events are its slices.
    const double events =
        synthetic ? double(trace.slices().size()) : double(trace.importStats().entries);
    std::printf("{\"file\": \"%s\", \"events\": %.0f, \"import_seconds\": %.3f, "
                "\"analysis_seconds\": %.4f, "
                "\"analysis_seconds_per_million_events\": %.4f, \"findings\": %zu, \"json_bytes\": "
                "%llu%s}\n",
                label.c_str(), events, importS, best, best / (events / 1e6), findings,
                static_cast<unsigned long long>(trace.importStats().textBytes),
                synthetic ? ", \"synthetic\": true" : "");
    return 0;
}
