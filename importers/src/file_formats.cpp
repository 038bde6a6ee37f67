// The file formats Stallscope recognises, in the order they are tried: those it reads, and
// those a user may bring that it does not read, each with what the file is and what to do.
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

#include "byte_stream.h"
#include "chrome_trace_importer.h"
#include "content_signatures.h"
#include "pickle_header.h"
#include "sqlite_schema.h"

#include "stallscope/base/utf8.h"

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

constexpr std::string_view kReads =
    "Chrome/Kineto JSON, plain or gzip, or a TensorBoard log folder";

// --- What is read ---------------------------------------------------------------------

/// gzip holding JSON, or gzip whose first bytes do not inflate (the reader says why).
bool isGzipJson(const ContentProbe& p) {
    return p.gzip() && (p.inflateFailed() || looksJson(p.content()));
}

bool isPlainJson(const ContentProbe& p) {
    return !p.gzip() && looksJson(p.content());
}

Result<std::shared_ptr<const model::Trace>> importChromeFile(const fs::path& path, bool gzip,
                                                             const ImportOptions& options) {
    auto file = std::make_unique<FileByteStream>(path.string());
    if (file->state() == StreamState::IoError)
        return Error{ErrorKind::Unreadable, file->message(), UINT64_MAX};
    ChromeInput in;
    in.path = path.string();
    if (gzip) {
        auto gz = std::make_unique<GzipByteStream>(std::move(file), options.keepEventSource);
        in.gzip = gz.get();
        in.stream = std::move(gz);
    } else {
        in.stream = std::move(file);
    }
    return importChromeTrace(std::move(in), options);
}

Result<std::shared_ptr<const model::Trace>> importGzip(const fs::path& path,
                                                       const ImportOptions& options) {
    return importChromeFile(path, true, options);
}

Result<std::shared_ptr<const model::Trace>> importJson(const fs::path& path,
                                                       const ImportOptions& options) {
    return importChromeFile(path, false, options);
}

// --- What is recognised, not read -----------------------------------------------------

/// XSpace: field 1 (planes), wire type 2 -> tag byte 0x0a, then a varint length and an
/// XPlane whose first field is id (0x08), name (0x12) or lines (0x1a).
bool isXSpace(const ContentProbe& p) {
    const std::string_view b = p.content();
    if (b.size() <= 2 || static_cast<unsigned char>(b[0]) != 0x0a) return false;
    size_t j = 1;
    while (j < b.size() && (static_cast<unsigned char>(b[j]) & 0x80)) ++j;
    ++j;
    return j < b.size() && (b[j] == 0x08 || b[j] == 0x12 || b[j] == 0x1a);
}

bool isPickle(const ContentProbe& p) {
    return readPickleHeader(p.content()).pickle;
}

std::string pickleDetail(const ContentProbe& p) {
    return " (protocol " + std::to_string(readPickleHeader(p.content()).protocol) + ")";
}

bool isStallscopeReport(const ContentProbe& p) {
    return looksHtml(p.content()) &&
           p.content().find("<meta name=\"generator\" content=\"Stallscope\">") !=
               std::string_view::npos;
}

bool isHtml(const ContentProbe& p) {
    return looksHtml(p.content());
}

bool isSqlite(const ContentProbe& p) {
    return looksSqlite(p.content());
}

/// A table name as one line of text: valid UTF-8, no line breaks, no open bidi override.
std::string shownName(std::string_view name) {
    std::string s = base::truncateUtf8(base::sanitizeUtf8(name), 64);
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return base::closeBidi(s);
}

std::string sqliteDetail(const ContentProbe& p) {
    const SqliteSchema& s = p.sqlite();
    if (!s.read) return " whose tables could not be read (" + s.problem + ")";
    if (s.tables.empty()) return " without tables";
    std::string out = " of unknown schema (tables: ";
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < s.tables.size() && i < kShown; ++i)
        out += (i ? ", " : "") + shownName(s.tables[i]);
    if (s.tables.size() > kShown) out += ", ... " + std::to_string(s.tables.size()) + " in all";
    return out + ")";
}

} // namespace

// One row per line of file_formats.def, each defined beside its reader.
#define STALLSCOPE_FILE_FORMAT(Name) extern const FileFormat kFormat##Name;
#include "stallscope/importers/file_formats.def"
#undef STALLSCOPE_FILE_FORMAT

// The rows of the formats that came before file_formats.def; a new format defines its row
// beside its reader.
const FileFormat kFormatGzip{InputFormat::Gzip, "gzip", isGzipJson, importGzip};
const FileFormat kFormatChromeJson{InputFormat::ChromeJson, "Chrome/Kineto JSON", isPlainJson,
                                   importJson};
const FileFormat kFormatXPlaneProtobuf{InputFormat::XPlaneProtobuf,
                                       "XPlane protobuf",
                                       isXSpace,
                                       nullptr,
                                       "an XPlane protobuf (TensorBoard profile plugin)",
                                       "this version of Stallscope reads Chrome/Kineto JSON only"};
const FileFormat kFormatPythonPickle{
    InputFormat::PythonPickle,
    "Python pickle",
    isPickle,
    nullptr,
    "a Python pickle",
    "it is not a trace: Stallscope never unpickles files; it reads Chrome/Kineto JSON "
    "traces (torch.profiler's export_chrome_trace or tensorboard_trace_handler)",
    pickleDetail};
const FileFormat kFormatStallscopeReport{
    InputFormat::StallscopeReport,
    "Stallscope HTML report",
    isStallscopeReport,
    nullptr,
    "a Stallscope HTML report",
    "open it in a web browser, or give Stallscope the trace it was made from"};
const FileFormat kFormatHtml{
    InputFormat::Html,
    "HTML",
    isHtml,
    nullptr,
    "an HTML page",
    "it is not a trace — open it in a web browser; Stallscope reads the Chrome/Kineto "
    "JSON trace (plain or gzip) a page was made from"};
const FileFormat kFormatSqlite{
    InputFormat::Sqlite,
    "SQLite",
    isSqlite,
    nullptr,
    "an SQLite database",
    "it is not a trace Stallscope can read (expected Chrome/Kineto JSON, plain or gzip, "
    "or a TensorBoard log folder)",
    sqliteDetail};

const std::vector<FileFormat>& fileFormats() {
    static const std::vector<FileFormat> table = {
#define STALLSCOPE_FILE_FORMAT(Name) kFormat##Name,
#include "stallscope/importers/file_formats.def"
#undef STALLSCOPE_FILE_FORMAT
    };
    return table;
}

const FileFormat* recogniseContent(const ContentProbe& probe) {
    for (const FileFormat& f : fileFormats())
        if (f.recognise(probe)) return &f;
    return nullptr;
}

Result<std::string> kinetoTextOf(const fs::path& path, const ImportOptions& options) {
    auto probe = ContentProbe::ofFile(path);
    if (!probe) return probe.error();
    const FileFormat* f = recogniseContent(probe.value());
    if (!f || !f->kineto)
        return Error{ErrorKind::Unsupported,
                     path.string() + ": not a format read through its Kineto form"};
    return f->kineto(path, options);
}

std::string unsupportedMessage(const FileFormat& f, const ContentProbe& probe) {
    std::string out = probe.gzip() ? "this is a gzip-compressed file holding " : "this is ";
    out += f.what;
    if (f.detail) out += f.detail(probe);
    out += "; ";
    out += f.advice;
    return out;
}

std::string unknownFormatMessage(const ContentProbe& probe) {
    if (probe.gzip())
        return "this is gzip-compressed data that is not a trace Stallscope can read (expected "
               "Chrome/Kineto JSON inside)";
    return "byte 0: not a trace Stallscope can read (expected " + std::string(kReads) + ")";
}

} // namespace stallscope::importers
