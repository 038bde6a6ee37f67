#pragma once
// The file formats as a table (importers/src/file_formats.cpp): how each is recognised from
// its first bytes (content, never the name) and how a file of it is imported. sniffBytes
// and importFile read the table, so a new importer is its reader (a new file in
// importers/src/), an InputFormat value and one row there.
#include "stallscope/importers/format_sniffer.h"
#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

namespace stallscope::importers {

struct FileFormat {
    InputFormat format;
    /// True when the first bytes of a file (up to 64) are this format's.
    bool (*recognise)(std::string_view firstBytes);
    /// Imports a file of this format; null when it is recognised but not read yet.
    Result<std::shared_ptr<const model::Trace>> (*import)(const std::filesystem::path& path,
                                                          const ImportOptions& options) = nullptr;
    /// Why it is not read (when import is null), after the path.
    std::string_view unsupported;
};

/// In the order they are tried (the first that recognises the bytes wins).
const std::vector<FileFormat>& fileFormats();

} // namespace stallscope::importers
