#pragma once
// The Chrome/Kineto JSON import pipeline (../shared/spec/style.md "Import pipeline"):
// header -> blocks cut at line boundaries (reader thread) -> parallel speculative block
// parsing -> in-order validation and merge into the TraceBuilder -> suffix -> finalize.
#include "byte_stream.h"

#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stallscope::importers {

struct ChromeInput {
    std::unique_ptr<ByteStream> stream;          // plain text (a GzipByteStream when compressed)
    GzipByteStream* gzip = nullptr;              // the same stream when it is gzip
    std::string path;                            // empty for memory input
    std::shared_ptr<const std::string> memory;   // plain text held in memory
    // Text translated from another format (kineto_text.h): what `info` calls it, the file it
    // was read from and that file's size.
    std::string describedAs;
    std::string originalPath;
    uint64_t originalBytes = 0;
    std::vector<std::pair<model::DiagnosticKind, std::string>> notes; // said as diagnostics
};

Result<std::shared_ptr<const model::Trace>> importChromeTrace(ChromeInput input,
                                                              const ImportOptions& options);

} // namespace stallscope::importers
