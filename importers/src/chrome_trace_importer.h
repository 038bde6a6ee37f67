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

namespace stallscope::importers {

struct ChromeInput {
    std::unique_ptr<ByteStream> stream;          // plain text (a GzipByteStream when compressed)
    GzipByteStream* gzip = nullptr;              // the same stream when it is gzip
    std::string path;                            // empty for memory input
    std::shared_ptr<const std::string> memory;   // plain text held in memory
};

Result<std::shared_ptr<const model::Trace>> importChromeTrace(ChromeInput input,
                                                              const ImportOptions& options);

} // namespace stallscope::importers
