#pragma once
// Large buffers on transparent huge pages, where the kernel offers them on request (Linux,
// THP "madvise" or "always"). Importing a 1 GB trace writes ~0.5 GB of fresh model columns and
// the analysis of 10 M events ~1.3 GB of temporaries; in 4 KB pages that is one page fault per
// 4 KB, which on a virtual machine costs as much as the parsing (docs/decisions.md, "Import at
// the speed of the parser"). A hint only: results never depend on it, and where it is refused
// or unsupported the buffers are ordinary memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace stallscope::base {

/// Called first thing in main(): restarts the program once with glibc's malloc tuned
/// (GLIBC_TUNABLES, read only at a program's start): glibc.malloc.hugetlb=1 (glibc 2.35 and
/// later) puts its large blocks on transparent huge pages, so every std::vector of the model
/// and the analysis gets them, not only the buffers advised below; glibc.malloc.arena_max=1
/// keeps one arena (an import's blocks are allocated on parser threads and freed on the
/// merging one: one arena was both faster and ~10 % smaller at peak). The restarted program
/// puts GLIBC_TUNABLES back as it was, so that programs it starts (a recorded training run)
/// do not inherit it. A tunable the caller set is left as the caller set it; nothing is done
/// when STALLSCOPE_NO_MALLOC_TUNING is set (for valgrind, which would not follow the restart)
/// or outside Linux/glibc; if the restart fails the program runs on unchanged.
void tuneMalloc(char** argv);

/// Asks for huge pages over the whole 2 MiB pages inside [data, data + bytes), for buffers
/// of at least 4 MiB (smaller ones are not worth a system call).
inline void adviseHugePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr uintptr_t kHuge = uintptr_t(2) << 20;
    if (bytes < 2 * kHuge) return;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}

/// v.reserve(n), the new buffer on huge pages when it is large: advised before the old
/// contents are copied in, so that the copy does not fault in small pages.
template <class T> void reserveHuge(std::vector<T>& v, size_t n) {
    if (v.capacity() >= n) return;
    std::vector<T> fresh;
    fresh.reserve(n);
    adviseHugePages(fresh.data(), fresh.capacity() * sizeof(T));
    fresh.insert(fresh.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    v.swap(fresh);
}

/// Room for `n` elements in all, growing geometrically (as push_back would) on huge pages.
template <class T> void growHuge(std::vector<T>& v, size_t n) {
    if (v.capacity() >= n) return;
    reserveHuge(v, std::max(n, v.capacity() * 2));
}

/// v.assign(n, value) into a buffer on huge pages when it is large.
template <class T> void assignHuge(std::vector<T>& v, size_t n, const T& value) {
    if (v.capacity() < n) {
        std::vector<T>().swap(v);
        reserveHuge(v, n);
    }
    v.assign(n, value);
}

} // namespace stallscope::base
