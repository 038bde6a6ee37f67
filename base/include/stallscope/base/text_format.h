#pragma once
// Human-readable numbers for terminal output and reports.
#include <cstdint>
#include <string>

namespace stallscope::base {

std::string formatDuration(int64_t ns);       // "1.234 ms", "12.3 s"
std::string formatBytes(uint64_t bytes);      // "35.2 MB"
std::string formatCount(uint64_t n);          // "75,718"
std::string formatTimestamp(int64_t ns);      // "2021-06-08 08:57:03.460 UTC" (epoch) or "+1.234 s"

/// A time-axis label: the unit follows the value ("+65.2 ms", not "+65200 µs") and the
/// decimals resolve `step`; "0" for zero.
std::string formatOffset(int64_t ns, int64_t step);
/// The smallest 1-2-5 x 10^k ns step that puts ticks at least `minPx` apart.
int64_t tickStep(double nsPerPx, double minPx);

} // namespace stallscope::base
