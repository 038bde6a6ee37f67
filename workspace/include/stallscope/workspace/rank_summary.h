#pragma once
// Rank summaries: one rank's digest (analysis/cross_rank.h) in a small JSON file, schema
// "stallscope.rank-summary/1" (docs/analysis-json.md "Rank summaries"). `analyze --summary`
// writes one per rank where the trace is (a Slurm array task, a Kubernetes indexed Job's pod);
// `merge` and the GUI read them back and run the cross-rank analysis on the digests alone,
// which gives exactly what the analysis of all the ranks' traces in one process gives.
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/base/result.h"

#include <string>
#include <vector>

namespace stallscope::workspace {

/// The summary document of one rank.
std::string rankSummaryJson(const analysis::RankDigest& digest);

/// Reads a summary file. Errors: NotFound/Unreadable, InvalidJson, InvalidStructure (another
/// schema, a missing or mistyped field; the message names it).
base::Result<analysis::RankDigest> readRankSummary(const std::string& path);
base::Result<analysis::RankDigest> parseRankSummary(std::string_view json);

/// Whether the file is a rank summary: a JSON object whose "schema" is the summary's (read
/// from the first few hundred bytes, so a trace is never parsed to find out).
bool isRankSummaryFile(const std::string& path);

/// The summaries of `path`: the file itself, or the *.summary.json files of a folder (sorted).
std::vector<std::string> rankSummaryFiles(const std::string& path);

} // namespace stallscope::workspace
