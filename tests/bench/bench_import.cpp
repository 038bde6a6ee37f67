// Import benchmark: times importing one file (best of --repeat runs) and reports
// throughput, model size and peak RSS as one JSON line. Driven by run_import_bench.sh,
// which adds the same-run baselines (Python json.load, the parse-only limit) and prints the
// ratios.
//
// --parse-only: the limit an importer built on simdjson could reach on one core: every event
// of traceEvents walked with simdjson's on-demand API, touching the fields the model keeps
// (ph, name, cat, ts, dur, pid, tid, id) and nothing else, the file read in 8 MiB chunks into
// one reused buffer as the importer reads it (a plain Kineto-layout file: the limit is the
// parser's, not the decompressor's). Beside it, for comparison, the walk of the whole text
// already in memory with the parser's buffers warm (memory_seconds; reading is load_seconds).
#include "stallscope/base/huge_pages.h"
#include "stallscope/importers/importer.h"

#include <simdjson.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Walks every event of `arr`, touching the fields the model keeps. False on a parse error.
bool walkEvents(simdjson::ondemand::array& arr, uint64_t& events, uint64_t& sink) {
    using namespace simdjson;
    for (auto el : arr) {
        ondemand::object obj;
        if (el.get_object().get(obj)) return false;
        for (auto field : obj) {
            std::string_view key;
            if (field.unescaped_key().get(key)) return false;
            auto v = field.value();
            if (key == "ph" || key == "name" || key == "cat") {
                std::string_view sv;
                if (!v.get_string().get(sv)) sink += sv.size();
            } else if (key == "ts" || key == "dur" || key == "pid" || key == "tid" || key == "id") {
                double d = 0;
                if (!v.get_double().get(d))
                    sink += static_cast<uint64_t>(d);
                else {
                    std::string_view sv; // pid/tid as strings in some eras
                    if (!v.get_string().get(sv)) sink += sv.size();
                }
            }
        }
        ++events;
    }
    return true;
}

/// The parse-only limit as the importer meets it: the file read in 8 MiB chunks into one
/// reused buffer, each chunk's complete events (cut after the last line "  }," that closes
/// an event, Kineto's layout) parsed as one array, the rest carried to the next chunk.
/// Returns seconds, or a negative value when the file is not in that layout.
double parseStreamed(const char* path, uint64_t& events, uint64_t& bytes) {
    using namespace simdjson;
    const auto t0 = std::chrono::steady_clock::now();
    std::FILE* f = std::fopen(path, "rb");
    if (!f) return -1;
    constexpr size_t kChunk = size_t(8) << 20;
    std::vector<char> buf(1 + 2 * kChunk + 1 + SIMDJSON_PADDING);
    ondemand::parser parser(2 * kChunk + 2);
    size_t have = 0; // text after buf[0] = '['
    bool started = false, eof = false;
    uint64_t sink = 0;
    events = 0;
    bytes = 0;
    while (!eof) {
        if (have + kChunk > 2 * kChunk) break; // an event longer than a chunk: not this layout
        const size_t got = std::fread(buf.data() + 1 + have, 1, kChunk, f);
        bytes += got;
        eof = got < kChunk;
        have += got;
        std::string_view text(buf.data() + 1, have);
        if (!started) {
            const size_t key = text.find("\"traceEvents\"");
            const size_t open = key == std::string_view::npos ? key : text.find('[', key);
            if (open == std::string_view::npos) continue;
            std::memmove(buf.data() + 1, buf.data() + 2 + open, have - open - 1);
            have -= open + 1;
            text = std::string_view(buf.data() + 1, have);
            started = true;
        }
        size_t cut = eof ? text.rfind("\n  }") : text.rfind("\n  },");
        if (cut == std::string_view::npos) continue;
        cut += 4; // just after the '}'
        buf[0] = '[';
        const char saved = buf[1 + cut];
        buf[1 + cut] = ']';
        ondemand::document doc;
        ondemand::array arr;
        if (parser.iterate(buf.data(), cut + 2, buf.size()).get(doc) || doc.get_array().get(arr) ||
            !walkEvents(arr, events, sink)) {
            std::fclose(f);
            return -1;
        }
        buf[1 + cut] = saved;
        const size_t rest = have - std::min(have, cut + 1); // after the comma
        std::memmove(buf.data() + 1, buf.data() + 1 + (have - rest), rest);
        have = rest;
    }
    std::fclose(f);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sink == 42) std::fprintf(stderr, " ");
    return started && eof ? s : -1;
}

/// The file's text and a parser with its buffers allocated: the walks below time the parse
/// alone (on this VM the first touch of a gigabyte of fresh pages costs more system time than
/// the parse, and an importer that streams blocks does not pay it).
struct ParseOnly {
    simdjson::padded_string text;
    simdjson::ondemand::parser parser;
};

/// One walk of the text (see above). Returns seconds, or a negative value on a parse error.
double parseOnly(ParseOnly& p, uint64_t& events) {
    using namespace simdjson;
    const auto t0 = std::chrono::steady_clock::now();
    ondemand::document doc;
    if (p.parser.iterate(p.text).get(doc)) return -1;
    ondemand::array arr;
    if (doc["traceEvents"].get_array().get(arr)) return -1;
    uint64_t sink = 0;
    events = 0;
    if (!walkEvents(arr, events, sink)) return -1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sink == 42) std::fprintf(stderr, " "); // keep the walk
    return s;
}

} // namespace

int main(int argc, char** argv) {
    stallscope::base::tuneMalloc(argv); // docs/decisions.md, "Import at the speed of the parser"
    unsigned threads = 0;
    int repeat = 1;
    size_t block = 0;
    bool parseOnlyPass = false;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--parse-only")) {
            parseOnlyPass = true;
            continue;
        }
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--block") && i + 1 < argc) block = std::strtoul(argv[++i], nullptr, 10);
        else path = argv[i];
    }
    if (!path) {
        std::fprintf(
            stderr,
            "usage: bench_import [--threads N] [--repeat R] [--block BYTES] [--parse-only] FILE\n");
        return 2;
    }
    if (parseOnlyPass) {
        auto fail = [&](const char* what) {
            std::fprintf(stderr, "bench_import: --parse-only: %s %s\n", what, path);
            return 1;
        };
        // The limit: streamed as the importer reads (best of --repeat).
        double streamed = 1e300;
        uint64_t streamedEvents = 0, bytes = 0;
        for (int r = 0; r < repeat; ++r) {
            const double s = parseStreamed(path, streamedEvents, bytes);
            if (s < 0) return fail("not Kineto's layout (events closed by a line '  },'):");
            streamed = std::min(streamed, s);
        }
        // For comparison: the text already in memory and the parser warm (one untimed walk
        // first: it faults in the parser's index pages).
        ParseOnly p;
        const auto t0 = std::chrono::steady_clock::now();
        if (simdjson::padded_string::load(path).get(p.text) || p.parser.allocate(p.text.size()))
            return fail("cannot read");
        const double load =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double memory = 1e300;
        uint64_t events = 0;
        for (int r = 0; r <= repeat; ++r) {
            const double s = parseOnly(p, events);
            if (s < 0) return fail("could not parse (plain JSON with traceEvents)");
            if (r) memory = std::min(memory, s);
        }
        if (events != streamedEvents) return fail("streamed and in-memory walks disagree on");
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        std::printf("{\"file\": \"%s\", \"parse_only\": true, \"seconds\": %.4f, "
                    "\"json_bytes\": %llu, \"json_mb_per_s\": %.1f, \"entries\": %llu, "
                    "\"memory_seconds\": %.4f, \"memory_mb_per_s\": %.1f, \"load_seconds\": %.4f, "
                    "\"peak_rss_bytes\": %ld}\n",
                    path, streamed, static_cast<unsigned long long>(bytes),
                    double(bytes) / 1e6 / streamed, static_cast<unsigned long long>(events), memory,
                    double(bytes) / 1e6 / memory, load, ru.ru_maxrss * 1024L);
        return 0;
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
