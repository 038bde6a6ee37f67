// Other profilers' files (issue 32): each file is imported as a user opens it (read in its
// own format, written as Kineto events, read by the Chrome/Kineto importer), then its Kineto
// form is written to a file and imported as plain Kineto JSON: the baseline, the same events
// through the ordinary path, in the same run. Prints one JSON line per file: the best of 3
// runs of each, the translation alone, and `import_over_kineto` = import / baseline (what
// reading the other format costs on top). Does not gate.
//
//   bench_foreign FILE...
#include "stallscope/base/huge_pages.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/importer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

namespace {
using Clock = std::chrono::steady_clock;

/// The best of `runs` timings of `f` (seconds); false when it fails.
bool best(int runs, const std::function<bool()>& f, double& seconds) {
    seconds = 1e30;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        if (!f()) return false;
        seconds = std::min(seconds, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return true;
}
} // namespace

int main(int argc, char** argv) {
    using namespace stallscope;
    base::tuneMalloc(argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_foreign FILE...\n");
        return 2;
    }
    const auto json = std::filesystem::temp_directory_path() / "stallscope-bench-foreign.json";
    int failed = 0;
    for (int a = 1; a < argc; ++a) {
        const std::filesystem::path path = argv[a];
        size_t events = 0, modelBytes = 0;
        double importS = 0, translateS = 0, kinetoS = 0;
        std::string text;
        const bool ok =
            best(
                3,
                [&] {
                    auto t = importers::importFile(path);
                    if (!t) std::fprintf(stderr, "%s: %s\n", argv[a], t.error().message.c_str());
                    if (t) events = t.value()->eventCount(), modelBytes = t.value()->memoryBytes();
                    return bool(t);
                },
                importS) &&
            best(
                3,
                [&] {
                    auto k = importers::kinetoTextOf(path);
                    if (k) text = std::move(k.value());
                    return bool(k);
                },
                translateS);
        if (!ok) {
            ++failed;
            continue;
        }
        std::ofstream(json, std::ios::binary) << text;
        if (!best(
                3, [&] { return bool(importers::importFile(json)); }, kinetoS)) {
            ++failed;
            continue;
        }
        std::printf("{\"bench\": \"foreign\", \"file\": \"%s\", \"input_bytes\": %llu, "
                    "\"kineto_bytes\": %zu, \"events\": %zu, \"model_bytes_per_event\": %.1f, "
                    "\"import_s\": %.4f, \"translate_s\": %.4f, \"kineto_import_s\": %.4f, "
                    "\"import_over_kineto\": %.2f}\n",
                    path.filename().c_str(),
                    static_cast<unsigned long long>(std::filesystem::file_size(path)), text.size(),
                    events, events ? double(modelBytes) / double(events) : 0.0, importS, translateS,
                    kinetoS, kinetoS > 0 ? importS / kinetoS : 0.0);
    }
    std::filesystem::remove(json);
    return failed ? 1 : 0;
}
