#pragma once
// The file formats as a table (importers/src/file_formats.cpp): how each is recognised from
// its content (never the name: the first bytes, inflated for gzip input, and an SQLite
// database's table names) and how a file of it is imported, or, for a format Stallscope
// recognises but does not read, what the file is and what to do instead. sniffPath,
// importFile and importBuffer read the table, so a new importer is its reader (a new file
// in importers/src/ defining its row) and one line in file_formats.def.
#include "stallscope/importers/content_probe.h"
#include "stallscope/importers/format_sniffer.h"
#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers {

/// A format's row: defined beside its reader as `extern const FileFormat kFormat<Name>{...}`
/// (extern: the table finds it by name) and registered by one line in file_formats.def.
struct FileFormat {
    InputFormat format;
    /// What `info` calls it: "Chrome/Kineto JSON".
    std::string_view name;
    /// True when the content is this format's.
    bool (*recognise)(const ContentProbe& probe);
    /// Imports a file of this format; null when it is recognised but not read.
    Result<std::shared_ptr<const model::Trace>> (*import)(const std::filesystem::path& path,
                                                          const ImportOptions& options) = nullptr;
    /// When import is null: what the file is ("an Nsight Systems SQLite export (...)") ...
    std::string_view what;
    /// ... and what to do ("Stallscope does not read ... yet — ...").
    std::string_view advice;
    /// Optional: what the content adds to `what` (" (protocol 4)", " (tables: ...)").
    std::string (*detail)(const ContentProbe& probe) = nullptr;
    /// Formats read through their Kineto form (another profiler's records written as Kineto
    /// events, importers/src/kineto_text.h): that form's text.
    Result<std::string> (*kineto)(const std::filesystem::path& path,
                                  const ImportOptions& options) = nullptr;
};

/// In the order they are tried (the first that recognises the content wins).
const std::vector<FileFormat>& fileFormats();

/// The row that recognises the content, or null.
const FileFormat* recogniseContent(const ContentProbe& probe);

/// The one line said about a file of a format that is recognised but not read:
/// "this is <what>[detail]; <advice>", with "a gzip-compressed file holding" for gzip input.
std::string unsupportedMessage(const FileFormat& format, const ContentProbe& probe);

/// The Kineto form of another profiler's file (Nsight, RPD, rocprofv3): the JSON text its
/// import reads. Error: the file cannot be read, or its format is not read that way.
Result<std::string> kinetoTextOf(const std::filesystem::path& path,
                                 const ImportOptions& options = {});

/// The line said about content no row recognises.
std::string unknownFormatMessage(const ContentProbe& probe);

} // namespace stallscope::importers
