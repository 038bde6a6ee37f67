#pragma once
// What the fuzz targets share: the oracle's abort, a per-process scratch folder, gzip, the
// model's invariants and a comparison of two traces by what the model holds.
#include "stallscope/model/trace.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace stallscope::fuzz {

/// The oracle: prints `what` and aborts, so a broken promise is a crash libFuzzer reports
/// (and a failing replay test).
[[noreturn]] void fail(const char* target, const std::string& what);

#define STALLSCOPE_FUZZ_CHECK(cond, what)                                     \
    do {                                                                      \
        if (!(cond)) ::stallscope::fuzz::fail(kTarget, std::string(what));    \
    } while (0)

/// A folder of this process's own under /dev/shm (else the temporary folder), emptied
/// when the process exits; folders left behind by processes that died are removed first.
const std::filesystem::path& scratchDir();

/// Writes `bytes` to `path` (replacing it); aborts when the scratch folder is unusable.
void writeFile(const std::filesystem::path& path, std::string_view bytes);

/// gzip (RFC 1952) of `text` at `level` (0..9).
std::string gzipText(std::string_view text, int level);

/// A cheap deterministic hash of the input, for choices that must not eat input bytes
/// (block sizes, modes of targets whose seeds are plain JSON).
uint64_t inputHash(std::string_view bytes);

/// Whether `text` is JSON (RFC 8259; bytes >= 0x80 taken as they are, a UTF-8 byte-order
/// mark allowed first): Valid, a Prefix of some valid JSON text (input cut short), or
/// Invalid. An independent validator (no simdjson), iterative.
enum class JsonShape { Valid, Prefix, Invalid };
JsonShape jsonShape(std::string_view text);

/// Checks the model's structural promises (trace.h): per-track slices contiguous and sorted
/// by (start asc, dur desc), parents and depths consistent, every id in range, indexes
/// sorted, the span covering everything. Aborts with the broken promise.
void checkModel(const char* kTarget, const model::Trace& t);

/// Reads back the args and raw text of up to `maxSlices` slices spread over the table (the
/// event source's on-demand path): either succeeds with an object's text, or fails with a
/// message. Returns how many raw texts were read.
size_t readBackEvents(const char* kTarget, const model::Trace& t, size_t maxSlices);

/// What two imports of the same text must agree on: counts of every table, each slice's
/// row (process, thread, start, dur, name, category, kind, correlation, extra), instants,
/// flows, counters, process and thread names, devices, diagnostics by kind, entries by phase.
struct CompareOptions {
    bool srcOffsets = true;          // the events' byte offsets (same text only)
    bool diagnostics = true;         // counts per diagnostic kind
    bool importCounts = true;        // entries, by phase, by category, text bytes
    bool span = true;                // startNs, endNs
    bool skipPid = false;            // leave out the rows of the integer pid `pid`
    int64_t pid = 0;
};
/// Empty when equal, else the first difference in words.
std::string compareTraces(const model::Trace& a, const model::Trace& b, const CompareOptions& o = {});

} // namespace stallscope::fuzz
