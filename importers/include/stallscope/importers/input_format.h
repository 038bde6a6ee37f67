#pragma once
// The input formats: what sniffPath says a path holds. format_sniffer.h declares the enum
// opaque, so adding a format (a line in file_formats.def) recompiles only the files that name
// a format, not every file that sniffs or imports.

namespace stallscope::importers {

enum class InputFormat {
    Missing,   // the path does not exist
    Directory, // a folder: TensorBoard log folder
    Empty,     // zero bytes
// One value per line of file_formats.def, each with its row (file_formats.h).
#define STALLSCOPE_FILE_FORMAT(Name) Name,
#include "stallscope/importers/file_formats.def"
#undef STALLSCOPE_FILE_FORMAT
    Unknown,
};

} // namespace stallscope::importers
