#pragma once
// Allocator snapshots held in memory (importBuffer): a pickle, or a gzip of one.
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <memory>
#include <string>

namespace stallscope::importers {

Result<std::shared_ptr<const model::Trace>>
importSnapshotBytes(std::shared_ptr<const std::string> bytes);

} // namespace stallscope::importers
