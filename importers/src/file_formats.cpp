// The file formats Stallscope recognises, in the order they are tried.
#include "stallscope/importers/file_formats.h"

#include "byte_stream.h"
#include "chrome_trace_importer.h"

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

bool isGzip(std::string_view b) {
    return looksGzip(b.data(), b.size());
}

/// '{' or '[' after blanks and a UTF-8 byte order mark; blanks only too (the JSON reader
/// then says what is wrong).
bool isJson(std::string_view b) {
    size_t i = 0;
    if (b.size() >= 3 && b.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < b.size() && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) ++i;
    return i == b.size() || b[i] == '{' || b[i] == '[';
}

/// XSpace: field 1 (planes), wire type 2 -> tag byte 0x0a, then a varint length and an
/// XPlane whose first field is id (0x08), name (0x12) or lines (0x1a).
bool isXSpace(std::string_view b) {
    if (b.size() <= 2 || static_cast<unsigned char>(b[0]) != 0x0a) return false;
    size_t j = 1;
    while (j < b.size() && (static_cast<unsigned char>(b[j]) & 0x80)) ++j;
    ++j;
    return j < b.size() && (b[j] == 0x08 || b[j] == 0x12 || b[j] == 0x1a);
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

} // namespace

const std::vector<FileFormat>& fileFormats() {
    static const std::vector<FileFormat> table = {
        // gzip: Chrome/Kineto JSON inside (the only compressed format read so far).
        {InputFormat::Gzip, isGzip, importGzip, {}},
        {InputFormat::ChromeJson, isJson, importJson, {}},
        {InputFormat::XPlaneProtobuf, isXSpace, nullptr,
         "an XPlane protobuf (TensorBoard profile plugin); this version of Stallscope reads "
         "Chrome/Kineto JSON only"},
    };
    return table;
}

} // namespace stallscope::importers
