#pragma once
// How much memory a trace's model will take, and how much the program may use: so that a
// trace too large for the machine is refused with a message naming the sizes instead of
// the process being killed by the operating system halfway through.
#include <cstdint>
#include <optional>
#include <string>

namespace stallscope::importers {

/// Peak memory of an import per byte of JSON text and per event: measured by
/// tests/bench (peak RSS 0.29-0.32 x the file, 49 B/event resident after finalize),
/// rounded up so that an estimate errs on the side of what the import really takes.
inline constexpr double kPeakBytesPerTextByte = 0.35;
inline constexpr uint64_t kPeakBytesPerEvent = 96;

/// Bytes the system can still give this process: MemAvailable of /proc/meminfo (else free
/// physical pages), or less when the process's cgroup (v2 memory.max, v1
/// memory.limit_in_bytes, on it or an ancestor) leaves less room; 0 when it cannot tell.
uint64_t availableMemoryBytes();

/// The room left under the tightest memory limit of the cgroup named in `procSelfCgroup`
/// (a /proc/self/cgroup file) below `cgroupRoot` (/sys/fs/cgroup); nullopt without a limit.
std::optional<uint64_t> cgroupRoomBytes(const std::string& procSelfCgroup,
                                        const std::string& cgroupRoot);

/// "2.5 GB", "640 MB", "12 kB".
std::string formatMemory(uint64_t bytes);

/// A budget given in STALLSCOPE_MEMORY_BUDGET ("4G", "512M", "1000000"); nullopt when unset
/// or unreadable ("0" means no limit).
std::optional<uint64_t> memoryBudgetFromEnvironment();

/// The budget the GUI and the CLI use: the environment's, else 80 % of what is available now
/// (the cgroup's room included; 0 = no limit when that cannot be told).
uint64_t defaultMemoryBudget();

} // namespace stallscope::importers
