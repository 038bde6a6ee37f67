#pragma once
// How much memory the program may use: one policy for the CLI and the GUI (docs/security.md).
// The loader applies it (LoadOptions::memoryBudgetBytes defaults to the machine's budget);
// the importers check their estimates against it (importers/memory_budget.h).
#include <cstdint>
#include <optional>
#include <string>

namespace stallscope::workspace {

/// Bytes the system can still give this process: MemAvailable of /proc/meminfo (else free
/// physical pages), or less when the process's cgroup (v2 memory.max, v1
/// memory.limit_in_bytes, on it or an ancestor) leaves less room; 0 when it cannot tell.
uint64_t availableMemoryBytes();

/// The room left under the tightest memory limit of the cgroup named in `procSelfCgroup`
/// (a /proc/self/cgroup file) below `cgroupRoot` (/sys/fs/cgroup); nullopt without a limit.
std::optional<uint64_t> cgroupRoomBytes(const std::string& procSelfCgroup,
                                        const std::string& cgroupRoot);

/// A budget given in STALLSCOPE_MEMORY_BUDGET ("4G", "512M", "1000000"); nullopt when unset
/// or unreadable ("0" means no limit).
std::optional<uint64_t> memoryBudgetFromEnvironment();

/// The machine's budget: the environment's, else 80 % of what is available now (the cgroup's
/// room included; 0 = no limit when that cannot be told).
uint64_t defaultMemoryBudget();

/// The most JSON text a budget could open (what standard input may bring before it is
/// refused); 64 GiB without a budget.
uint64_t textBytesWithin(uint64_t budget);

} // namespace stallscope::workspace
