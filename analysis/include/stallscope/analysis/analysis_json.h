#pragma once
// The analysis as JSON, schema "stallscope.analysis/1" (docs/analysis-json.md).
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/base/json_writer.h"

#include <string>

namespace stallscope::analysis {

constexpr std::string_view kAnalysisSchema = "stallscope.analysis/1";

struct JsonOptions {
    size_t maxTableRows = 50;      // per statistics table
    size_t maxEvidence = 20;       // per finding
    bool utilizationSeries = true;
};

/// The cross-rank analysis as one JSON object (docs/analysis-json.md "ranks").
void writeCrossRankJson(base::JsonWriter& w, const CrossRankResult& r);

constexpr std::string_view kRankSummarySchema = "stallscope.rank-summary/1";

/// One rank's digest as a summary document (docs/analysis-json.md "Rank summaries"): what
/// `analyze --summary` writes and `merge` reads back (workspace/rank_summary.h). Doubles are
/// written with 17 significant digits so they read back to the same bits.
void writeRankDigestJson(base::JsonWriter& w, const RankDigest& d);

/// One trace's analysis as a JSON object written into `w`.
void writeAnalysisJson(base::JsonWriter& w, const model::Trace& trace, const AnalysisResult& r,
                       const std::string& path, int32_t rank, const JsonOptions& options = {});

std::string_view windowKindName(WindowKind k);

struct MemoryAnalysis;
/// A memory analysis as one JSON object (docs/analysis-json.md "memory"): per device its
/// peaks, headroom, live-at-peak groups (at most `maxRows` each), operator table and advice;
/// the events themselves when `events`.
void writeMemoryJson(base::JsonWriter& w, const model::Trace& trace, const MemoryAnalysis& m,
                     size_t maxRows = 50, bool events = false);

} // namespace stallscope::analysis
