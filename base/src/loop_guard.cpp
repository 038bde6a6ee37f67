#include "stallscope/base/loop_guard.h"

#include <cstdio>
#include <cstdlib>

namespace stallscope::base {

namespace {
std::atomic<uint64_t> g_stalls{0};
} // namespace

uint64_t loopStallCount() { return g_stalls.load(std::memory_order_relaxed); }

bool loopStalled(const char* file, int line) {
    const uint64_t n = g_stalls.fetch_add(1, std::memory_order_relaxed);
#ifndef NDEBUG
    (void)n;
    std::fprintf(stderr, "stallscope: a loop did not advance at %s:%d\n", file, line);
    std::abort();
#else
    // The first few are named on stderr (a bug report's clue); the rest are only counted.
    if (n < 5) std::fprintf(stderr, "stallscope: a loop did not advance at %s:%d (left it)\n", file, line);
    return false;
#endif
}

} // namespace stallscope::base
