#pragma once
// Entry points: open a file or a TensorBoard folder, detect the format by content.
#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"
#include "stallscope/model/session.h"

#include <filesystem>
#include <memory>
#include <string>

namespace stallscope::importers {

/// A file (any supported format) or a TensorBoard log folder.
Result<model::Session> importPath(const std::filesystem::path& path,
                                  const ImportOptions& options = {});

/// One trace file, format detected by content.
Result<std::shared_ptr<const model::Trace>> importFile(const std::filesystem::path& path,
                                                       const ImportOptions& options = {});

/// Chrome/Kineto JSON held in memory (tests, tools). Plain text or gzip bytes.
Result<std::shared_ptr<const model::Trace>> importBuffer(std::string bytes,
                                                         const ImportOptions& options = {});

} // namespace stallscope::importers
