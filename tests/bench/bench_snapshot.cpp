// bench_snapshot: opens an allocator snapshot as the CLI and GUI do (importPath: the
// restricted pickle reader, the model, the history replayed into memory samples) and, with
// --reader-only, runs the pickle reader alone. Prints one JSON line: seconds, MB/s of pickle,
// peak RSS, values built, memory samples. tests/bench/run_snapshot_bench.sh compares it with
// Python's pickle.load of the same file in the same run.
#include "byte_stream.h"
#include "pickle_reader.h"

#include "stallscope/importers/importer.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

using namespace stallscope;

int main(int argc, char** argv) {
    bool readerOnly = false;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--reader-only") == 0)
            readerOnly = true;
        else
            path = argv[i];
    }
    if (!path) {
        std::fprintf(stderr, "usage: bench_snapshot [--reader-only] SNAPSHOT.pickle\n");
        return 2;
    }
    const double bytes = double(std::filesystem::file_size(path));
    const auto t0 = std::chrono::steady_clock::now();
    size_t values = 0, samples = 0;
    if (readerOnly) {
        importers::FileByteStream in(path);
        auto doc = importers::pickle::readPickle(in);
        if (!doc) {
            std::fprintf(stderr, "%s\n", doc.error().message.c_str());
            return 1;
        }
        values = doc.value().valueCount();
    } else {
        auto r = importers::importPath(path);
        if (!r) {
            std::fprintf(stderr, "%s\n", r.error().message.c_str());
            return 1;
        }
        samples = r.value().traces.front().trace->memorySamples().size();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("{\"mode\": \"%s\", \"seconds\": %.3f, \"mb_per_s\": %.1f, \"peak_rss_mb\": %.1f, "
                "\"file_mb\": %.1f, \"values\": %zu, \"memory_samples\": %zu}\n",
                readerOnly ? "reader" : "import", s, bytes / 1e6 / s, double(ru.ru_maxrss) / 1024.0,
                bytes / 1e6, values, samples);
    return 0;
}
