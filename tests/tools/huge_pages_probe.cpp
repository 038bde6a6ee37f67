// For test_huge_pages: starts as Stallscope's programs do (tuneMalloc), then prints the
// GLIBC_TUNABLES this process has now (what a program it runs would inherit), the huge pages
// under a freshly written 64 MiB block (whether glibc's malloc asked for them) and the number
// of malloc arenas after a second thread allocated (malloc_info's heaps), and its name.
#include "stallscope/base/huge_pages.h"

#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

int main(int, char** argv) {
    stallscope::base::tuneMalloc(argv);
    const char* now = std::getenv("GLIBC_TUNABLES");
    const size_t bytes = size_t(64) << 20;
    auto* block = static_cast<char*>(std::malloc(bytes));
    std::memset(block, 1, bytes);
    long hugeKb = 0;
    std::ifstream smaps("/proc/self/smaps_rollup");
    for (std::string line; std::getline(smaps, line);)
        if (line.rfind("AnonHugePages:", 0) == 0) hugeKb = std::atol(line.c_str() + 14);
    void* held = nullptr;
    std::thread([&] { held = std::malloc(4000); }).join();
    char* info = nullptr;
    size_t infoLen = 0;
    std::FILE* f = open_memstream(&info, &infoLen);
    malloc_info(0, f);
    std::fclose(f);
    int heaps = 0;
    for (const char* p = info; (p = std::strstr(p, "<heap nr=")); ++p) ++heaps;
    std::string comm;
    std::getline(std::ifstream("/proc/self/comm"), comm);
    std::printf("now=%s\nhuge_kb=%ld\nheaps=%d\ncomm=%s\nmarker=%s\n", now ? now : "(unset)",
                hugeKb, heaps, comm.c_str(),
                std::getenv("STALLSCOPE_MALLOC_REEXEC") ? "set" : "(unset)");
    std::free(info);
    std::free(held);
    std::free(block);
    return 0;
}
