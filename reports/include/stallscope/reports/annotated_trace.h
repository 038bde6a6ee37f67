#pragma once
// The annotated trace: the original trace plus Stallscope's findings as a process of their
// own, so Perfetto and chrome://tracing show them next to the events they explain.
//
// The original text is copied, not rebuilt (the model does not keep args): the findings'
// events are spliced in before the ']' that closes the event array, whose offset the
// importer records (TraceMetadata::eventsArrayEnd). A trace without a source file to copy
// (read from memory, or a file that is gone or changed since) is written from the model.
#include "stallscope/analysis/analysis.h"
#include "stallscope/base/result.h"
#include "stallscope/model/trace.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace stallscope::reports {

inline constexpr std::string_view kFindingsProcessName = "Stallscope findings";
inline constexpr std::string_view kFindingsCategory = "stallscope";

/// What writeAnnotatedTrace() did.
struct AnnotatedTraceOutcome {
    bool copiedSource = false;   // the original text was copied; else written from the model
    std::string fromModelReason; // why the model was used (empty when copied)
    int64_t findingsPid = 0;     // pid of the "Stallscope findings" process
    uint64_t addedEvents = 0;    // events added: metadata and one slice per finding range
    uint64_t skippedRanges = 0;  // finding ranges left out: their times relative to the file's
                                 // baseTimeNanoseconds are beyond int64 ns (a hostile base)
};

/// Writes the original trace's events plus a "Stallscope findings" process whose tracks
/// (one per finding with ranges, named by the finding's id, e.g. "data_loading/gpu0")
/// carry one complete ('X') slice per finding range: name = the finding's title, args =
/// finding id, severity, saving and fix. gzip when `out` ends in .gz. The write is atomic
/// (AtomicFile), so a failure (ErrorKind::Unwritable) leaves `out` as it was.
base::Status writeAnnotatedTrace(const model::Trace& trace,
                                 const analysis::AnalysisResult& analysis,
                                 const std::filesystem::path& out,
                                 AnnotatedTraceOutcome* outcome = nullptr);

} // namespace stallscope::reports
