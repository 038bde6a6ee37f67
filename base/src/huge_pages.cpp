#include "stallscope/base/huge_pages.h"

#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <sys/auxv.h>
#include <unistd.h>

#include <climits>
#endif

namespace stallscope::base {

namespace {
constexpr const char* kTunables = "GLIBC_TUNABLES";
constexpr const char* kMarker = "STALLSCOPE_MALLOC_REEXEC"; // the variable's value before, or "-"
// Ours, each unless the caller set that tunable: large blocks on transparent huge pages, and
// one arena (blocks are allocated by the parser threads and freed by the merging thread).
constexpr const char* kOurs[] = {"glibc.malloc.hugetlb=1", "glibc.malloc.arena_max=1"};
} // namespace

void tuneMalloc(char** argv) {
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
    if (std::getenv("STALLSCOPE_NO_MALLOC_TUNING")) return;
    const char* tunables = std::getenv(kTunables);
    std::string value = tunables ? tunables : "";
    bool added = false;
    for (const char* ours : kOurs) {
        const std::string name(ours, std::strchr(ours, '='));
        if (value.find(name) != std::string::npos) continue; // the caller's choice
        value += value.empty() ? "" : ":";
        value += ours;
        added = true;
    }
    if (!added) return;
    // Started through the dynamic loader (`ld-linux-x86-64.so.2 ./prog`) or linked
    // statically: the program file is not ours to run again.
    if (getauxval(AT_BASE) == 0) return;
    // The file itself, not /proc/self/exe: the restarted process keeps its name (ps, pkill).
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
    setenv(kMarker, tunables ? tunables : "-", 1);
    setenv(kTunables, value.c_str(), 1);
    execv(self, argv);
    // Not possible (the file replaced or removed since): run on as we are.
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
