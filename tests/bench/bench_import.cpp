// Import benchmark: times importing one file (best of --repeat runs) and reports
// throughput, model size and peak RSS as one JSON line. Driven by run_import_bench.sh,
// which adds the same-run baselines (Python json.load) and prints the ratios.
#include "stallscope/importers/importer.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    unsigned threads = 0;
    int repeat = 1;
    size_t block = 0;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--block") && i + 1 < argc) block = std::strtoul(argv[++i], nullptr, 10);
        else path = argv[i];
    }
    if (!path) {
        std::fprintf(stderr, "usage: bench_import [--threads N] [--repeat R] [--block BYTES] FILE\n");
        return 2;
    }
    double best = 1e300, finalize = 0;
    std::shared_ptr<const stallscope::model::Trace> trace;
    for (int r = 0; r < repeat; ++r) {
        trace.reset();
        stallscope::importers::ImportOptions o;
        o.threads = threads;
        if (block) o.blockBytes = block;
        const auto t0 = std::chrono::steady_clock::now();
        auto res = stallscope::importers::importFile(path, o);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!res) {
            std::fprintf(stderr, "bench_import: %s\n", res.error().message.c_str());
            return 1;
        }
        trace = res.value();
        if (s < best) finalize = trace->importStats().finalizeSeconds;
        best = std::min(best, s);
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto& st = trace->importStats();
    const double textMb = static_cast<double>(st.textBytes) / 1e6;
    std::printf("{\"file\": \"%s\", \"threads\": %u, \"seconds\": %.4f, \"finalize_seconds\": %.4f, \"json_bytes\": %llu, "
                "\"input_bytes\": %llu, \"json_mb_per_s\": %.1f, \"entries\": %llu, \"model_events\": %zu, "
                "\"model_bytes\": %zu, \"bytes_per_entry\": %.2f, \"bytes_per_model_event\": %.2f, "
                "\"peak_rss_bytes\": %ld}\n",
                path, threads, best, finalize, static_cast<unsigned long long>(st.textBytes),
                static_cast<unsigned long long>(st.inputBytes), textMb / best,
                static_cast<unsigned long long>(st.entries), trace->eventCount(), trace->memoryBytes(),
                double(trace->memoryBytes()) / double(st.entries),
                double(trace->memoryBytes()) / double(trace->eventCount()), ru.ru_maxrss * 1024L);
    return 0;
}
