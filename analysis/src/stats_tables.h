#pragma once
#include "analysis_context.h"

namespace stallscope::analysis::detail {

/// Kernel, operator, copy and runtime-call tables over the window (events starting in it).
StatsTables computeStats(const Context& c);

} // namespace stallscope::analysis::detail
