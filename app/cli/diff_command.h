#pragma once
// The `diff --json` document ("stallscope.diff/1"), shared by `diff` and the MCP server's
// compare_traces tool.
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/base/json_writer.h"

#include <string>

namespace stallscope::cli {

/// Two runs compared (BEFORE = `pb`, AFTER = `pa`), as one JSON object; the ranks' waits when
/// both cross-rank results are given.
void writeDiffJson(base::JsonWriter& w, const std::string& pb, const model::Trace& tb,
                   const analysis::AnalysisResult& b, const std::string& pa, const model::Trace& ta,
                   const analysis::AnalysisResult& a, const analysis::RunDiff& d,
                   const analysis::CrossRankResult* rb, const analysis::CrossRankResult* ra);

} // namespace stallscope::cli
