#pragma once
// The analysis JSON's "efficiency" section (docs/analysis-json.md), written by writeAnalysisJson.
#include "stallscope/analysis/efficiency.h"
#include "stallscope/base/json_writer.h"

namespace stallscope::analysis::detail {

/// At most 1000 operator rows, the largest FLOPs first; then each GPU and the notes.
void writeEfficiencyJson(base::JsonWriter& w, const Efficiency& e);

} // namespace stallscope::analysis::detail
