// For test_huge_pages: starts as Stallscope's programs do (preferHugePages), then prints the
// GLIBC_TUNABLES this process has now (what a program it runs would inherit) and the huge pages
// under a freshly written 64 MiB block (whether glibc's malloc asked for them).
#include "stallscope/base/huge_pages.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

int main(int, char** argv) {
    stallscope::base::preferHugePages(argv);
    const char* now = std::getenv("GLIBC_TUNABLES");
    const size_t bytes = size_t(64) << 20;
    auto* block = static_cast<char*>(std::malloc(bytes));
    std::memset(block, 1, bytes);
    long hugeKb = 0;
    std::ifstream smaps("/proc/self/smaps_rollup");
    for (std::string line; std::getline(smaps, line);)
        if (line.rfind("AnonHugePages:", 0) == 0) hugeKb = std::atol(line.c_str() + 14);
    std::printf("now=%s\nhuge_kb=%ld\nmarker=%s\n", now ? now : "(unset)", hugeKb,
                std::getenv("STALLSCOPE_HUGE_PAGES_REEXEC") ? "set" : "(unset)");
    std::free(block);
    return 0;
}
