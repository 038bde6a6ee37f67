#include "stallscope/importers/memory_budget.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace stallscope::importers {

uint64_t availableMemoryBytes() {
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

std::string formatMemory(uint64_t bytes) {
    char buf[32];
    const double b = double(bytes);
    if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
    else if (b >= 1e3) std::snprintf(buf, sizeof buf, "%.0f kB", b / 1e3);
    else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
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

} // namespace stallscope::importers
