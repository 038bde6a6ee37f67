#include "stallscope/importers/format_sniffer.h"

#include "stallscope/importers/content_probe.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

#include <system_error>

namespace stallscope::importers {

namespace {

InputFormat formatOf(const ContentProbe& probe) {
    if (probe.stored().empty()) return InputFormat::Empty;
    const FileFormat* f = recogniseContent(probe);
    return f ? f->format : InputFormat::Unknown;
}

} // namespace

InputFormat sniffBytes(std::string_view b) {
    return formatOf(ContentProbe::ofBytes(b));
}

InputFormat sniffPath(const std::filesystem::path& path, std::string* error) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) {
        if (error) *error = path.string() + ": no such file or folder";
        return InputFormat::Missing;
    }
    if (std::filesystem::is_directory(st)) return InputFormat::Directory;
    if (std::string why = notAFileMessage(path, st); !why.empty()) {
        if (error) *error = why;
        return InputFormat::Missing;
    }
    auto probe = ContentProbe::ofFile(path);
    if (!probe) {
        if (error) *error = probe.error().message;
        return InputFormat::Missing;
    }
    return formatOf(probe.value());
}

std::string notAFileMessage(const std::filesystem::path& path,
                            const std::filesystem::file_status& st) {
    using std::filesystem::file_type;
    const char* what = nullptr;
    switch (st.type()) {
    case file_type::fifo: what = "a FIFO"; break;
    case file_type::socket: what = "a socket"; break;
    case file_type::character: what = "a character device"; break;
    case file_type::block: what = "a block device"; break;
    default: return {};
    }
    // Reading one could wait forever (a FIFO nobody writes) or never end (/dev/zero).
    return path.string() + " is " + what +
           ", not a file: traces are read from files and folders (standard input: -)";
}

const char* inputFormatName(InputFormat f) {
    switch (f) {
    case InputFormat::Missing: return "missing";
    case InputFormat::Directory: return "folder";
    case InputFormat::Empty: return "empty";
    default: break;
    }
    for (const FileFormat& row : fileFormats())
        if (row.format == f) return row.name.data(); // the rows' names are literals
    return "unknown";
}

} // namespace stallscope::importers
