#pragma once
// Detects an input's format from its content, never from its name.
#include <filesystem>
#include <string>
#include <string_view>

namespace stallscope::importers {

/// What a path holds: its values are in input_format.h (Missing, Directory, Empty, one per
/// line of file_formats.def, Unknown).
enum class InputFormat;

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
