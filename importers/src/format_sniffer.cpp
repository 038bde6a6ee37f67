#include "stallscope/importers/format_sniffer.h"

#include "byte_stream.h"

#include <fstream>
#include <system_error>

namespace stallscope::importers {

InputFormat sniffBytes(std::string_view b) {
    if (b.empty()) return InputFormat::Empty;
    if (looksGzip(b.data(), b.size())) return InputFormat::Gzip;
    size_t i = 0;
    if (b.size() >= 3 && b.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < b.size() && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) ++i;
    if (i < b.size() && (b[i] == '{' || b[i] == '[')) return InputFormat::ChromeJson;
    if (i == b.size()) return InputFormat::ChromeJson;  // whitespace only: the JSON reader explains
    // XSpace: field 1 (planes), wire type 2 -> tag byte 0x0a, then a varint length and an
    // XPlane whose first field is id (0x08) or name (0x12).
    if (static_cast<unsigned char>(b[0]) == 0x0a && b.size() > 2) {
        size_t j = 1;
        while (j < b.size() && (static_cast<unsigned char>(b[j]) & 0x80)) ++j;
        ++j;
        if (j < b.size() && (b[j] == 0x08 || b[j] == 0x12 || b[j] == 0x1a)) return InputFormat::XPlaneProtobuf;
    }
    return InputFormat::Unknown;
}

InputFormat sniffPath(const std::filesystem::path& path, std::string* error) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) {
        if (error) *error = path.string() + ": no such file or folder";
        return InputFormat::Missing;
    }
    if (std::filesystem::is_directory(st)) return InputFormat::Directory;
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        if (error) *error = "cannot open " + path.string();
        return InputFormat::Missing;
    }
    char buf[64];
    f.read(buf, sizeof buf);
    return sniffBytes(std::string_view(buf, static_cast<size_t>(f.gcount())));
}

const char* inputFormatName(InputFormat f) {
    switch (f) {
    case InputFormat::Missing: return "missing";
    case InputFormat::Directory: return "folder";
    case InputFormat::Empty: return "empty";
    case InputFormat::Gzip: return "gzip";
    case InputFormat::ChromeJson: return "Chrome/Kineto JSON";
    case InputFormat::XPlaneProtobuf: return "XPlane protobuf";
    case InputFormat::Unknown: return "unknown";
    }
    return "unknown";
}

} // namespace stallscope::importers
