#pragma once
// The analysis's large temporary buffers on transparent huge pages: see
// stallscope/base/huge_pages.h (at 10 M events the analysis writes ~1.3 GB of fresh memory).
#include "stallscope/base/huge_pages.h"

namespace stallscope::analysis::detail {

using base::adviseHugePages;
using base::assignHuge;
using base::growHuge;
using base::reserveHuge;

} // namespace stallscope::analysis::detail
