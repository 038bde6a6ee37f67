#pragma once
#include "analysis_context.h"

namespace stallscope::analysis::detail {

/// Holistic Trace Analysis' temporal and per-stream idle breakdowns, on HTA's window and
/// with HTA's rules (../shared/spec/analysis.md), so numbers can be compared side by side.
HtaBreakdown computeHta(const Context& c);

/// HTA's kernel type by name: "communication", "memory", "computation" or "other".
std::string_view htaKernelType(std::string_view name);

} // namespace stallscope::analysis::detail
