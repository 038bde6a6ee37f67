#pragma once
// Reading many events' arguments back from the trace: in file order (a trace's events are
// read back a stretch at a time), in batches shared out to threads.
#include "stallscope/model/trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace stallscope::analysis::detail {

/// Calls `each(k, ok, args)` once for each slices[k] (on several threads: `each` writes only
/// to its own k's storage). `slices` is put in file order. False when `cancel` stopped it.
bool readArgsInFileOrder(
    const model::Trace& t, std::vector<uint32_t>& slices,
    const std::function<void(size_t k, bool ok, std::vector<model::ArgValue>& args)>& each,
    const std::atomic<bool>* cancel);

} // namespace stallscope::analysis::detail
