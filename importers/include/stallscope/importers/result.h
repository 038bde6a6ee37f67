#pragma once
// The importers' results are base's error values (base/result.h): one error style for all
// libraries. These names keep `importers::Result<T>` readable at the import call sites.
#include "stallscope/base/result.h"

namespace stallscope::importers {

using base::Error;
using base::ErrorKind;
using base::Result;
using base::errorKindName;

} // namespace stallscope::importers
