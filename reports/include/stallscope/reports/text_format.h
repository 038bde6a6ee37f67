#pragma once
// Human-readable numbers for terminal output.
#include <cstdint>
#include <string>

namespace stallscope::cli {

std::string formatDuration(int64_t ns);       // "1.234 ms", "12.3 s"
std::string formatBytes(uint64_t bytes);      // "35.2 MB"
std::string formatCount(uint64_t n);          // "75,718"
std::string formatTimestamp(int64_t ns);      // "2021-06-08 08:57:03.460 UTC" (epoch) or "+1.234 s"

} // namespace stallscope::cli
