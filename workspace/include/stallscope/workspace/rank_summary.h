#pragma once
// Rank summaries: one rank's digest (analysis/cross_rank.h) in a small JSON file, schema
// "stallscope.rank-summary/1" (docs/analysis-json.md "Rank summaries"). `analyze --summary`
// writes one per rank where the trace is (a Slurm array task, a Kubernetes indexed Job's pod);
// `merge` and the GUI read them back and run the cross-rank analysis on the digests alone,
// which gives exactly what the analysis of all the ranks' traces in one process gives.
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/base/result.h"
#include "stallscope/workspace/workspace.h"

#include <string>
#include <vector>

namespace stallscope::workspace {

/// The absolute, normalised form of a trace's path, as summaries record it (so a summary
/// names its trace the same way whichever folder the tool ran in).
std::string absoluteTracePath(const std::string& path);

/// The ranks of a loaded workspace for the cross-rank analysis (analysis::analyzeRanks) and
/// rank summaries: one input per rank, its series' representative capture (the latest steady
/// one, else the latest: capture_series.h), never a rank twice. A folder of one capture per
/// worker gives every trace, in session order, as before series existed.
std::vector<analysis::RankInput> rankInputs(const Workspace& ws);

/// The summary document of one rank.
std::string rankSummaryJson(const analysis::RankDigest& digest);

/// Reads a summary file. Errors: NotFound/Unreadable, InvalidJson, InvalidStructure (another
/// schema, a missing or mistyped field; the message names it).
base::Result<analysis::RankDigest> readRankSummary(const std::string& path);
base::Result<analysis::RankDigest> parseRankSummary(std::string_view json);

/// Several ranks' summaries in one file ("merged summaries", schema
/// "stallscope.rank-summaries/1": {"schema", "ranks": [one summary per rank]}), as
/// `merge --summaries` writes them; the GUI opens one as it opens a folder of summaries.
constexpr std::string_view kRankSummariesSchema = "stallscope.rank-summaries/1";
std::string rankSummariesJson(const std::vector<analysis::RankDigest>& digests);
/// A summary or merged summaries: every rank in it.
base::Result<std::vector<analysis::RankDigest>> parseRankSummaries(std::string_view json);
base::Result<std::vector<analysis::RankDigest>> readRankSummaries(const std::string& path);

/// Whether the file is a rank summary or merged summaries: a JSON object whose "schema" is the
/// summary's (read from the first few hundred bytes, so a trace is never parsed to find out).
bool isRankSummaryFile(const std::string& path);

/// The summaries of `path`: the file itself, or the *.summary.json files of a folder (sorted).
std::vector<std::string> rankSummaryFiles(const std::string& path);

/// Many ranks with bounded memory: every rank of `path` as a digest, never holding more than
/// a few traces at once. `path` is a rank summary, a folder of them (*.summary.json), or a
/// folder of per-rank traces, which are loaded, analysed, digested and released one rank per
/// worker thread (LoadOptions::analysisThreads, 0: the hardware's). Ranks come from
/// distributedInfo, else the worker's position in the folder; several captures of one worker
/// are that rank's series, and the rank's digest is its latest steady capture's (else its
/// latest's: capture_series.h). Files that cannot be read are listed in `problems`.
struct RankSet {
    std::vector<analysis::RankDigest> digests; // by rank, one per rank
    std::vector<RankSeries> series;            // a folder of traces: each rank's captures
    std::vector<std::string> problems;
    bool fromSummaries = false;
    double seconds = 0;
};
base::Result<RankSet> digestRanks(const std::string& path, const LoadOptions& options = {});

/// The number of per-rank trace files in a folder (0: not a folder of traces).
size_t rankTraceFileCount(const std::string& path);

} // namespace stallscope::workspace
