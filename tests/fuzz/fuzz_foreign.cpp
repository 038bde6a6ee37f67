// Fuzz target: the importers of other profilers' files (Nsight Systems SQLite exports, RPD
// databases, rocprofv3 JSON; docs/formats.md), on mutated small files cut from the real ones
// (make_seeds.py OUT/foreign). The payload is written to a file and opened as a user's file.
// Promises:
//  * a file recognised as one of the three either imports, with a model that passes the
//    model checks and whose events' args read back, or is refused with one line;
//  * nothing is written beside the file (the database is opened read-only and immutable).
#include "fuzz_support.h"

#include "stallscope/importers/content_probe.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/importer.h"
#include "stallscope/importers/input_format.h"

#include <filesystem>

using namespace stallscope;
using importers::InputFormat;

namespace {
constexpr const char* kTarget = "foreign";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string payload(reinterpret_cast<const char*>(data), size);
    const auto dir = fuzz::scratchDir() / "foreign";
    std::filesystem::create_directories(dir);
    const auto path = dir / "input.bin";
    fuzz::writeFile(path, payload);
    auto probe = importers::ContentProbe::ofFile(path);
    if (!probe) return 0;
    const importers::FileFormat* f = importers::recogniseContent(probe.value());
    if (!f || (f->format != InputFormat::NsightSqlite && f->format != InputFormat::RpdSqlite &&
               f->format != InputFormat::RocprofJson))
        return 0;
    auto r = importers::importFile(path);
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
    STALLSCOPE_FUZZ_CHECK(files == 1, "a file was written beside the input");
    if (!r) {
        const std::string& m = r.error().message;
        STALLSCOPE_FUZZ_CHECK(!m.empty() && m.find('\n') == std::string::npos,
                              "not one line: " + m);
        return 0;
    }
    fuzz::checkModel(kTarget, *r.value());
    fuzz::readBackEvents(kTarget, *r.value(), 64);
    return 0;
}
