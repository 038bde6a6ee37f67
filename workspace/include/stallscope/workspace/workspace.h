#pragma once
// The one loader: a path (a trace file or a TensorBoard folder) imported into a session and
// every trace of it analysed, the traces in parallel. `info`, `analyze`, `report` and the
// GUI's load worker all call loadAndAnalyse; none of them imports or analyses on its own.
// Qt-free (workspace -> importers, analysis, model, base).
#include "stallscope/analysis/analysis.h"
#include "stallscope/base/result.h"
#include "stallscope/importers/import_options.h"
#include "stallscope/model/session.h"
#include "stallscope/workspace/capture_series.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stallscope::workspace {

struct Workspace;

struct LoadOptions {
    unsigned threads = 0;           // import threads (0: the importer's default)
    uint64_t memoryBudgetBytes = 0; // 0: none (ImportOptions::memoryBudgetBytes)
    bool analyse = true;            // false: import only (`info`)
    analysis::AnalysisOptions analysis;
    unsigned analysisThreads = 0; // traces analysed at once (0: hardware threads)
    const std::atomic<bool>* cancel = nullptr;
    /// 0..0.9 while importing (with the events read so far), 0.9..1 while analysing.
    std::function<void(double fraction, const std::string& what)> progress;
    /// Work of the caller's own per trace (the GUI's timeline index), run on the loader's
    /// threads alongside that trace's analysis; its result is kept in AnalysedTrace::extra.
    std::function<std::shared_ptr<const void>(const model::Trace&)> perTrace;
    /// Progressive open of one trace file (a folder, or a file of several ranks after its
    /// first pass, gets none): now and then while the import goes on (ImportOptions::partial),
    /// the events read so far as a workspace of one trace, given the caller's per-trace work
    /// and analysed over the part read (partialReadEnd) — or not analysed, with a note, when
    /// no GPU work has been read yet. `fraction` is the part of the input read (0..1). Called
    /// on a thread of the importer's, one call at a time, never after loadAndAnalyse returns.
    std::function<void(Workspace&& partial, double fraction)> partial;
    unsigned partialFirstMs = 700;
};

struct AnalysedTrace {
    model::TraceEntry entry;
    std::shared_ptr<const analysis::AnalysisResult> analysis; // null when !LoadOptions::analyse
    std::shared_ptr<const void> extra;                        // LoadOptions::perTrace's result
};

struct Workspace {
    std::string path;
    model::Session session;            // the imported traces and the files that were skipped
    std::vector<AnalysedTrace> traces; // in session order
    /// Per rank, its captures in time order, each warm-up or steady (capture_series.h); a
    /// folder of one capture per worker has one capture per rank. Empty when not analysed.
    std::vector<RankSeries> series;
    double seconds = 0; // import + analysis wall time
};

/// The end of the part of a partly read trace whose CPU and GPU activity have both been read:
/// the earlier of the last GPU slice's end and the last CPU slice's end (a Kineto file writes
/// all CPU events before the GPU ones; a replicated or streamed one interleaves them). Null
/// when no GPU slice has been read: then the trace cannot tell yet where its GPU idles.
std::optional<int64_t> partialReadEnd(const model::Trace& trace);

/// Imports `path` and analyses its traces. Errors: the importer's (not found, invalid,
/// over the memory budget, ...), NoTraces for a folder without a loadable trace, and
/// Cancelled when `cancel` was set.
base::Result<Workspace> loadAndAnalyse(const std::string& path, const LoadOptions& options = {});

} // namespace stallscope::workspace
