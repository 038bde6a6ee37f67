#pragma once
// Detects an input's format from its content, never from its name.
#include <filesystem>
#include <string>
#include <string_view>

namespace stallscope::importers {

enum class InputFormat {
    Missing,        // the path does not exist
    Directory,      // a folder: TensorBoard log folder
    Empty,          // zero bytes
    Gzip,           // gzip stream holding Chrome/Kineto JSON (content sniffed after inflating)
    ChromeJson,     // '{' or '[' (after whitespace / BOM)
    XPlaneProtobuf, // XSpace protobuf (TensorBoard profile plugin)
    // Recognised, not read (file_formats.cpp says what each is and what to do):
    MemoryTimeline,   // torch.profiler export_memory_timeline(_raw): a JSON array of rows
    RocprofJson,      // rocprofv3 --output-format json
    MemorySnapshot,   // PyTorch CUDA allocator snapshot (pickle)
    PythonPickle,     // any other pickle (protocol 2..5)
    MemoryVizHtml,    // torch.cuda._memory_viz HTML (a snapshot inside the viewer)
    StallscopeReport, // Stallscope's own HTML report
    Html,             // any other HTML page
    NsightSqlite,     // nsys export --type sqlite
    RpdSqlite,        // rocmProfileData (rocpd_* tables)
    Sqlite,           // any other SQLite database
    Unknown,
};

/// The format of these first bytes (an SQLite database's tables cannot be read from them:
/// such content is Sqlite).
InputFormat sniffBytes(std::string_view firstBytes);
InputFormat sniffPath(const std::filesystem::path& path, std::string* error = nullptr);
/// Why `path` (of status `st`, links followed) is not read at all: a FIFO, socket or device
/// ("" for a regular file or a folder).
std::string notAFileMessage(const std::filesystem::path& path,
                            const std::filesystem::file_status& st);

const char* inputFormatName(InputFormat f);

} // namespace stallscope::importers
