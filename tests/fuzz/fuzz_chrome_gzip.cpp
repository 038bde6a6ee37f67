// Fuzz target: the Chrome/Kineto JSON importer on gzip input, in memory and from files.
// The first byte picks the mode, the rest is the payload:
//   bits 0-1  0 compress the payload, import the gzip bytes from memory
//             1 the payload is gzip bytes (a gzip header is put in front when it has none)
//             2 compress the payload into a file (.json.gz), importFile: the file stream,
//               the gzip index and the args read back through it
//             3 the payload as a plain file (.json), importFile: the file stream and its
//               event source
//   bits 2-5  the compression level (mod 10)
//   bit 6     compress as several gzip members (cut points from the payload's hash)
//   bit 7     cut the compressed bytes short (modes 0 and 2)
// Promises: a trace or an error value, never a crash; the model's invariants; and where the
// text arrives whole (modes 0, 2, 3 without the cut), the same model as the plain text
// imported from memory, or the same kind of error.
#include "fuzz_support.h"

#include "stallscope/importers/importer.h"

using namespace stallscope;

namespace {

constexpr const char* kTarget = "chrome_gzip";

std::string compress(std::string_view text, int level, bool members, uint64_t hash) {
    if (!members || text.size() < 2) return fuzz::gzipText(text, level);
    const size_t parts = 2 + hash % 3;
    std::string out;
    size_t at = 0;
    for (size_t i = 1; i <= parts; ++i) {
        const size_t end = i == parts ? text.size() : std::max(at, static_cast<size_t>((hash >> (8 * i)) % text.size()));
        out += fuzz::gzipText(text.substr(at, end - at), level);
        at = end;
    }
    return out;
}

bool looksGzip(std::string_view b) {
    return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

void checkResult(const importers::Result<std::shared_ptr<const model::Trace>>& r) {
    if (!r) {
        STALLSCOPE_FUZZ_CHECK(!r.error().message.empty(), "an error without a message");
        return;
    }
    STALLSCOPE_FUZZ_CHECK(r.value() != nullptr, "ok without a trace");
    fuzz::checkModel(kTarget, *r.value());
}

/// The plain text imported from memory and `r` agree (both traces, or both errors of a kind).
void checkSame(const importers::Result<std::shared_ptr<const model::Trace>>& plain,
               const importers::Result<std::shared_ptr<const model::Trace>>& r, const char* mode) {
    if (!plain) {
        STALLSCOPE_FUZZ_CHECK(!r, std::string(mode) + " imported what the plain text could not: " +
                                      plain.error().message);
        // importFile sniffs the content first (UnknownFormat for what is not '{', '[' or gzip;
        // importBuffer takes any text as JSON); otherwise the same kind of error.
        STALLSCOPE_FUZZ_CHECK(plain.error().kind == r.error().kind || r.error().kind == importers::ErrorKind::UnknownFormat,
                              std::string(mode) + ": error kinds differ: " + plain.error().message + " | " +
                                  r.error().message);
        return;
    }
    STALLSCOPE_FUZZ_CHECK(r, std::string(mode) + " failed where the plain text imports: " + r.error().message);
    const std::string diff = fuzz::compareTraces(*plain.value(), *r.value());
    STALLSCOPE_FUZZ_CHECK(diff.empty(), std::string(mode) + " gives another model than the plain text: " + diff);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const unsigned flags = data[0];
    const std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
    const unsigned mode = flags & 3u;
    const int level = static_cast<int>((flags >> 2) & 15u) % 10;
    const bool members = flags & 64u;
    const bool cut = flags & 128u;
    const uint64_t hash = fuzz::inputHash(payload);

    importers::ImportOptions options;
    options.threads = 1;

    if (mode == 1) {
        std::string bytes = payload;
        if (!looksGzip(bytes)) bytes.insert(0, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));
        checkResult(importers::importBuffer(bytes, options));
        return 0;
    }
    if (payload.empty()) return 0;
    // The plain text from memory: the reference the whole-text modes must equal (a payload
    // with the gzip magic is gzip in memory and text once compressed or in a plain file).
    const bool comparable = !looksGzip(payload);
    auto plain = importers::importBuffer(payload, options);
    if (mode == 3) {
        const auto path = fuzz::scratchDir() / "input.json";
        fuzz::writeFile(path, payload);
        auto r = importers::importFile(path, options);
        checkResult(r);
        if (r) fuzz::readBackEvents(kTarget, *r.value(), 16);
        if (comparable) checkSame(plain, r, "the plain file");
        return 0;
    }
    std::string gz = compress(payload, level, members, hash);
    if (cut) gz.resize(hash % gz.size());
    if (gz.empty()) return 0;
    if (mode == 0) {
        auto r = importers::importBuffer(gz, options);
        checkResult(r);
        if (!cut && comparable) checkSame(plain, r, "gzip in memory");
        return 0;
    }
    const auto path = fuzz::scratchDir() / "input.json.gz";
    fuzz::writeFile(path, gz);
    auto r = importers::importFile(path, options);
    checkResult(r);
    if (r) fuzz::readBackEvents(kTarget, *r.value(), 16);
    if (!cut && comparable) checkSame(plain, r, "the gzip file");
    return 0;
}
