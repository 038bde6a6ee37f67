#include "stallscope/importers/format_sniffer.h"

#include "stallscope/importers/file_formats.h"

#include <fstream>
#include <system_error>

namespace stallscope::importers {

InputFormat sniffBytes(std::string_view b) {
    if (b.empty()) return InputFormat::Empty;
    for (const FileFormat& f : fileFormats())
        if (f.recognise(b)) return f.format;
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
