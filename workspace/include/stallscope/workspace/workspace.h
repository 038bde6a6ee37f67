#pragma once
// The one loader: what a user names (a trace file, a TensorBoard folder, rank summaries, a
// folder of many ranks) opened as a workspace: imported under the machine's memory budget,
// every trace analysed (in parallel) with its timeline index when asked, each rank's captures
// as a series, and the ranks compared. `info`, `analyze`, `report` (and a baseline) and the
// GUI all call open(); none of them imports, budgets or assembles ranks on its own.
// Qt-free (workspace -> importers, analysis, scene, model, base).
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/base/result.h"
#include "stallscope/importers/import_options.h"
#include "stallscope/model/session.h"
#include "stallscope/scene/timeline_index.h"
#include "stallscope/workspace/capture_series.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stallscope::workspace {

struct Workspace;

/// LoadOptions::detailRanks: folders with more per-rank traces than this, and rank summaries,
/// open as every rank's digest plus the detail of one rank (the GUI's default).
inline constexpr size_t kDetailRanks = 16;
/// LoadOptions::detailRanks for front ends that show every rank's detail (the CLI's `analyze`
/// and `report`): every trace is held; a rank summary is then a file like any other.
inline constexpr size_t kEveryRank = ~size_t(0);

/// LoadOptions::memoryBudgetBytes's default: the machine's budget (memory_budget.h), taken when
/// the load starts. Every front end loads under it; tests and benchmarks may set their own.
inline constexpr uint64_t kMachineMemoryBudget = ~uint64_t(0);

struct LoadOptions {
    unsigned threads = 0; // import threads (0: the importer's default)
    /// A trace too large for this machine is refused with its size, not killed by the OS
    /// (ImportOptions::memoryBudgetBytes). 0: no limit.
    uint64_t memoryBudgetBytes = kMachineMemoryBudget;
    bool analyse = true; // false: import only (`info`)
    analysis::AnalysisOptions analysis;
    unsigned analysisThreads = 0;      // traces analysed at once (0: hardware threads)
    size_t detailRanks = kDetailRanks; // open(): above this many ranks, digests (see above)
    const std::atomic<bool>* cancel = nullptr;
    /// 0..0.9 while importing (with the events read so far), 0.9..1 while analysing.
    std::function<void(double fraction, const std::string& what)> progress;
    /// Each trace's timeline index (scene/timeline_index.h), built on the loader's threads
    /// beside that trace's analysis (AnalysedTrace::timeline): the GUI's first paint is only
    /// a paint.
    bool timelineIndex = false;
    /// Progressive open of one trace file (a folder, or a file of several ranks after its
    /// first pass, gets none): now and then while the import goes on (ImportOptions::partial),
    /// the events read so far as a workspace of one trace (Workspace::partial, readFraction),
    /// with its timeline index when asked, analysed over the part read (partialReadEnd) — or,
    /// when no GPU work has been read yet, given an empty analysis whose window says so. Called
    /// on a thread of the importer's, one call at a time, never after the load returns.
    std::function<void(Workspace&& partial)> partial;
    unsigned partialFirstMs = 700;
};

struct AnalysedTrace {
    model::TraceEntry entry;
    std::shared_ptr<const analysis::AnalysisResult> analysis; // null when !LoadOptions::analyse
    std::shared_ptr<const scene::TimelineIndex> timeline;     // LoadOptions::timelineIndex
};

struct Workspace {
    std::string path;
    model::Session session;            // the imported traces and the files that were skipped
    std::vector<AnalysedTrace> traces; // in session order
    /// Per rank, its captures in time order, each warm-up or steady (capture_series.h); a
    /// folder of one capture per worker has one capture per rank. Empty when not analysed.
    std::vector<RankSeries> series;
    /// Two or more ranks: the cross-rank analysis of each rank's representative capture
    /// (rankInputs), or of every rank's digest when `manyRanks`.
    analysis::CrossRankResult ranks;
    /// Many ranks (rank summaries, or a folder of more than kDetailRanks traces): every rank
    /// is held as its digest in `ranks`, and `traces` holds the one rank whose detail is
    /// loaded — or none, with `detailNote` saying why (summaries from another machine).
    bool manyRanks = false;
    std::string detailNote;
    /// A progressive open's workspace so far: the events of the first `readFraction` of the
    /// input, each trace analysed over the part whose GPU work is read.
    bool partial = false;
    double readFraction = 1;
    double seconds = 0; // import + analysis wall time

    /// The series holding trace `index` (its capture's position in `capture`), null when none.
    [[nodiscard]] const RankSeries* seriesOf(size_t index, size_t* capture = nullptr) const;
    /// The trace a rank is shown by first: its series' representative, else its first trace;
    /// -1 when the rank is not loaded.
    [[nodiscard]] int traceOfRank(int32_t rank) const;
    /// The representative capture of series `k` (the latest steady one: capture_series.h);
    /// null when there is no such series.
    [[nodiscard]] const AnalysedTrace* representative(size_t k = 0) const;
};

/// The end of the part of a partly read trace whose CPU and GPU activity have both been read:
/// the earlier of the last GPU slice's end and the last CPU slice's end (a Kineto file writes
/// all CPU events before the GPU ones; a replicated or streamed one interleaves them). Null
/// when no GPU slice has been read: then the trace cannot tell yet where its GPU idles.
std::optional<int64_t> partialReadEnd(const model::Trace& trace);

/// The budget a load runs under: the options' own, or the machine's (defaultMemoryBudget).
uint64_t memoryBudgetOf(const LoadOptions& options);

/// Opens what a user names — a trace file, a TensorBoard folder, a folder of rank traces, rank
/// summaries — and analyses every trace in it (unless !analyse), for the CLI, the GUI, the
/// reports and a baseline alike. Two or more ranks are compared (`ranks`). Rank summaries and
/// folders of more than kDetailRanks traces are digested rank by rank with bounded memory
/// (digestRanks) and the detail of one rank is loaded: the straggler's, else the first's.
/// Errors: the importer's (not found, invalid, over the memory budget, ...), NoTraces for a
/// folder without a loadable trace, and Cancelled when `cancel` was set.
base::Result<Workspace> open(const std::string& path, const LoadOptions& options = {});

/// The detail of one rank of a many-ranks workspace: the same ranks, that rank's trace loaded
/// (under its rank and label; of a file holding several ranks, only that rank's).
base::Result<Workspace> openRank(const Workspace& ranksOf, int32_t rank,
                                 const LoadOptions& options = {});

/// The traces of one path imported and analysed, without the ranks' comparison (open() calls
/// it; `digestRanks` per rank).
base::Result<Workspace> loadAndAnalyse(const std::string& path, const LoadOptions& options = {});

/// The ranks of several opened paths (`analyze A B ...`): each path's rankInputs in turn.
/// The cross-rank analysis of one path is its `ranks`; crossRank gives that, or the analysis
/// of all the paths' ranks together.
analysis::CrossRankResult crossRank(const std::vector<Workspace>& opened);

/// How a rank's representative capture is named where several ranks or captures are listed
/// (reports): "rank 3 · worker3 · capture 2 of 4 (steady)"; empty with one rank of one capture.
std::string representativeLabel(const Workspace& ws, const RankSeries& series);

} // namespace stallscope::workspace
