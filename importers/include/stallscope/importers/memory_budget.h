#pragma once
// How much memory an import takes: the estimates the importers check a memory budget
// (ImportOptions::memoryBudgetBytes) against, so that a trace too large for the machine is
// refused with a message naming the sizes instead of the process being killed by the
// operating system halfway through. The budget itself is the loader's policy
// (workspace/memory_budget.h).
#include <cstdint>

namespace stallscope::importers {

/// Peak memory of an import per byte of JSON text and per event: measured by
/// tests/bench (peak RSS 0.29-0.32 x the file, 49 B/event resident after finalize),
/// rounded up so that an estimate errs on the side of what the import really takes.
inline constexpr double kPeakBytesPerTextByte = 0.35;
inline constexpr uint64_t kPeakBytesPerEvent = 96;

} // namespace stallscope::importers
