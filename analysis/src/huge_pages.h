#pragma once
// Large temporary buffers of the analysis on transparent huge pages, where the kernel offers
// them on request (Linux, THP "madvise" or "always"). At 10 M events the analysis writes
// about 1.3 GB of fresh memory; in 4 KB pages that is some 330 000 page faults, which cost
// more than the analysis itself on a virtual machine (docs/decisions.md, "Analysis at 0.2 s
// per million events"). A hint only: results never depend on it, and where it is refused
// or unsupported the buffers are ordinary memory.
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace stallscope::analysis::detail {

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

/// v.reserve(n), the buffer on huge pages when it is large (before its pages are written).
template <class T> void reserveHuge(std::vector<T>& v, size_t n) {
    v.reserve(n);
    adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

/// v.assign(n, value) into a buffer on huge pages when it is large.
template <class T> void assignHuge(std::vector<T>& v, size_t n, const T& value) {
    if (v.capacity() < n) {
        std::vector<T>().swap(v);
        reserveHuge(v, n);
    }
    v.assign(n, value);
}

} // namespace stallscope::analysis::detail
