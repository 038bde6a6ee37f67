#include "stallscope/workspace/memory_budget.h"

#include "stallscope/importers/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace stallscope::workspace {

namespace {

/// A number from a cgroup file ("max" and unreadable files: nullopt).
std::optional<uint64_t> cgroupNumber(const std::string& path) {
    std::ifstream in(path);
    std::string v;
    if (!(in >> v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::strtoull(v.c_str(), nullptr, 10);
}

uint64_t hostAvailableBytes() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        std::istringstream fields(line.substr(13));
        uint64_t kb = 0;
        if (fields >> kb) return kb * 1024;
    }
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

} // namespace

std::optional<uint64_t> cgroupRoomBytes(const std::string& procSelfCgroup,
                                        const std::string& cgroupRoot) {
    std::ifstream in(procSelfCgroup);
    std::optional<uint64_t> room;
    for (std::string line; std::getline(in, line);) {
        // v2: "0::/path"; v1: "N:memory:/path" (or "N:cpu,memory:/path").
        const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1);
        std::string path = line.substr(b + 1);
        const bool v2 = line.rfind("0::", 0) == 0;
        const bool v1 = !v2 && ("," + controllers + ",").find(",memory,") != std::string::npos;
        if (!v2 && !v1) continue;
        const std::string base = v2 ? cgroupRoot : cgroupRoot + "/memory";
        const char* maxFile = v2 ? "/memory.max" : "/memory.limit_in_bytes";
        const char* usedFile = v2 ? "/memory.current" : "/memory.usage_in_bytes";
        // The limit may be set on any ancestor: the tightest room along the path.
        for (;;) {
            const std::string dir = base + (path == "/" ? "" : path);
            const auto max = cgroupNumber(dir + maxFile), used = cgroupNumber(dir + usedFile);
            // cgroup v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages).
            if (max && *max < (uint64_t(1) << 60)) {
                const uint64_t r = used && *used < *max ? *max - *used : 0;
                room = room ? std::min(*room, r) : r;
            }
            if (path.empty() || path == "/") break;
            const size_t slash = path.rfind('/');
            path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
        }
    }
    return room;
}

uint64_t availableMemoryBytes() {
    const uint64_t host = hostAvailableBytes();
    // In a container (or a systemd slice) with a memory limit, the limit binds first: the
    // kernel's OOM killer acts on the cgroup, whatever the host has free.
    if (const auto room = cgroupRoomBytes("/proc/self/cgroup", "/sys/fs/cgroup"))
        return host ? std::min(host, *room) : *room;
    return host;
}

std::optional<uint64_t> memoryBudgetFromEnvironment() {
    const char* v = std::getenv("STALLSCOPE_MEMORY_BUDGET");
    if (!v || !*v) return std::nullopt;
    char* end = nullptr;
    const double n = std::strtod(v, &end);
    if (end == v || !(n >= 0) || n > 1e19) return std::nullopt;
    double unit = 1;
    switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K': unit = 1024.0; break;
    case 'M': unit = 1024.0 * 1024; break;
    case 'G': unit = 1024.0 * 1024 * 1024; break;
    case 'T': unit = 1024.0 * 1024 * 1024 * 1024; break;
    case '\0': break;
    default: return std::nullopt;
    }
    return static_cast<uint64_t>(n * unit);
}

uint64_t defaultMemoryBudget() {
    if (const auto env = memoryBudgetFromEnvironment()) return *env;
    return availableMemoryBytes() / 10 * 8;
}

uint64_t textBytesWithin(uint64_t budget) {
    return budget ? uint64_t(double(budget) / importers::kPeakBytesPerTextByte)
                  : uint64_t(64) << 30;
}

} // namespace stallscope::workspace
