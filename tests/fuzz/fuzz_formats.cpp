// Fuzz target: telling formats apart by content (importers/file_formats.h): the table's
// recognisers, the pickle header walk, the JSON shape tests, an SQLite database's table
// names (read-only, from a file and from memory) and the lines said about what is not read.
// The first byte picks the mode, the rest is the payload:
//   bit 0     0 the payload as it is, 1 gzip of the payload
//   bits 1-4  the compression level (mod 10)
// Promises:
//  * the same row from the bytes held in memory (importBuffer's probe) and from a file of
//    them (importFile's); for SQLite content the same family (a database that cannot be
//    read may fail in different words from memory and from a file);
//  * gzip of a payload is the payload's format (Chrome/Kineto JSON: the gzip row);
//  * a recognised format that is not read is refused by importFile and importBuffer with
//    UnknownFormat and one line starting "this is "; the same line from both but for SQLite;
//  * the pickle header stays in its bounds (protocol 2..5, at most 8 strings of <= 256 bytes).
#include "fuzz_support.h"

#include "pickle_header.h"

#include "stallscope/importers/content_probe.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/importer.h"
#include "stallscope/importers/input_format.h"

using namespace stallscope;
using importers::InputFormat;

namespace {

constexpr const char* kTarget = "formats";

/// Rows that are one format for this target's promises.
InputFormat family(const importers::FileFormat* f) {
    if (!f) return InputFormat::Unknown;
    switch (f->format) {
    case InputFormat::Gzip: return InputFormat::ChromeJson;
    case InputFormat::NsightSqlite:
    case InputFormat::RpdSqlite: return InputFormat::Sqlite;
    default: return f->format;
    }
}

const char* name(const importers::FileFormat* f) {
    return f ? importers::inputFormatName(f->format) : "unknown";
}

void checkRefused(const importers::Result<std::shared_ptr<const model::Trace>>& r,
                  const char* route) {
    STALLSCOPE_FUZZ_CHECK(!r, std::string(route) + " read a format that is not read");
    STALLSCOPE_FUZZ_CHECK(r.error().kind == importers::ErrorKind::UnknownFormat,
                          std::string(route) + ": " + r.error().message);
    const std::string& m = r.error().message;
    STALLSCOPE_FUZZ_CHECK(m.starts_with("this is "), std::string(route) + ": " + m);
    STALLSCOPE_FUZZ_CHECK(m.find('\n') == std::string::npos && m.find('\r') == std::string::npos,
                          std::string(route) + ": a line break in " + m);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const unsigned flags = data[0];
    std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string plain = payload;
    if (flags & 1u) payload = fuzz::gzipText(payload, static_cast<int>((flags >> 1) & 15u) % 10);

    const auto path = fuzz::scratchDir() / "input.bin";
    fuzz::writeFile(path, payload);
    auto fromFile = importers::ContentProbe::ofFile(path);
    STALLSCOPE_FUZZ_CHECK(fromFile, "the probe cannot read the file: " + fromFile.error().message);
    const auto fromMemory =
        importers::ContentProbe::ofMemory(std::make_shared<const std::string>(payload));
    STALLSCOPE_FUZZ_CHECK(fromFile.value().content() == fromMemory.content(),
                          "the content read differs");
    STALLSCOPE_FUZZ_CHECK(fromMemory.content().size() <= importers::ContentProbe::kHeadBytes,
                          "too much content");
    const importers::FileFormat* f = importers::recogniseContent(fromFile.value());
    const importers::FileFormat* m = importers::recogniseContent(fromMemory);
    const bool sqlite = family(f) == InputFormat::Sqlite;
    STALLSCOPE_FUZZ_CHECK(sqlite ? family(m) == InputFormat::Sqlite : f == m,
                          std::string("file: ") + name(f) + ", memory: " + name(m));

    // gzip of the payload is the payload's format.
    if ((flags & 1u) && !plain.empty() && !fromFile.value().inflateFailed() &&
        (plain.size() < 2 || static_cast<unsigned char>(plain[0]) != 0x1f ||
         static_cast<unsigned char>(plain[1]) != 0x8b)) {
        const auto probe =
            importers::ContentProbe::ofMemory(std::make_shared<const std::string>(plain));
        const importers::FileFormat* p = importers::recogniseContent(probe);
        STALLSCOPE_FUZZ_CHECK(family(p) == family(m),
                              std::string("gzip: ") + name(m) + ", plain: " + name(p));
    }

    const importers::PickleHeader h = importers::readPickleHeader(fromMemory.content());
    if (h.pickle) {
        STALLSCOPE_FUZZ_CHECK(h.protocol >= 2 && h.protocol <= 5, "pickle protocol out of range");
        STALLSCOPE_FUZZ_CHECK(h.strings.size() <= importers::PickleHeader::kMaxStrings,
                              "too many strings");
        for (const std::string& s : h.strings)
            STALLSCOPE_FUZZ_CHECK(s.size() <= importers::PickleHeader::kMaxStringBytes,
                                  "a string too long");
    } else {
        STALLSCOPE_FUZZ_CHECK(h.strings.empty() && h.top == 0, "strings of what is no pickle");
    }

    // What is recognised and not read: refused with its line, from a file and from memory.
    if (f && !f->import && m && !m->import) {
        auto a = importers::importFile(path);
        auto b = importers::importBuffer(payload);
        checkRefused(a, "importFile");
        checkRefused(b, "importBuffer");
        if (!sqlite)
            STALLSCOPE_FUZZ_CHECK(a.error().message == b.error().message,
                                  "the lines differ: " + a.error().message + " | " +
                                      b.error().message);
    }
    return 0;
}
