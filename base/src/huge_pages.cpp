#include "stallscope/base/huge_pages.h"

#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace stallscope::base {

namespace {
constexpr const char* kTunables = "GLIBC_TUNABLES";
constexpr const char* kMarker =
    "STALLSCOPE_HUGE_PAGES_REEXEC"; // the variable's value before, or "-"
} // namespace

void preferHugePages(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
    if (const char* before = std::getenv(kMarker)) {
        // The second start: glibc has read its tunables; what we run later gets the caller's.
        if (std::strcmp(before, "-") == 0)
            unsetenv(kTunables);
        else
            setenv(kTunables, before, 1);
        unsetenv(kMarker);
        return;
    }
    if (std::getenv("STALLSCOPE_NO_HUGE_PAGES")) return;
    const char* tunables = std::getenv(kTunables);
    if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return; // the caller's choice
    const std::string value = tunables && *tunables
                                  ? std::string(tunables) + ":glibc.malloc.hugetlb=1"
                                  : "glibc.malloc.hugetlb=1";
    setenv(kMarker, tunables ? tunables : "-", 1);
    setenv(kTunables, value.c_str(), 1);
    execv("/proc/self/exe", argv);
    // Not possible here (no /proc, a sandbox): run on as we are.
    if (tunables)
        setenv(kTunables, tunables, 1);
    else
        unsetenv(kTunables);
    unsetenv(kMarker);
#else
    (void)argv;
#endif
}

} // namespace stallscope::base
