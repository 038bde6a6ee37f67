#include "stallscope/model/intervals.h"

#include "stallscope/base/huge_pages.h"
#include "stallscope/model/trace.h"

#include <algorithm>

namespace stallscope::model {

Intervals mergeIntervals(Intervals in) {
    std::erase_if(in, [](const Interval& i) { return i.end <= i.start; });
    auto byStart = [](const Interval& a, const Interval& b) { return a.start < b.start; };
    if (!std::is_sorted(in.begin(), in.end(), byStart)) std::sort(in.begin(), in.end(), byStart);
    // In place: the merged list is never longer than what is read so far.
    size_t n = 0;
    for (size_t r = 0; r < in.size(); ++r) {
        if (n > 0 && in[r].start <= in[n - 1].end)
            in[n - 1].end = std::max(in[n - 1].end, in[r].end);
        else
            in[n++] = in[r];
    }
    in.resize(n);
    if (n < in.capacity() / 4) in.shrink_to_fit(); // much shorter: do not keep the input's memory
    return in;
}

int64_t totalLength(const Intervals& merged) {
    int64_t t = 0;
    for (const Interval& i : merged) t += i.length();
    return t;
}

Intervals clip(const Intervals& merged, int64_t lo, int64_t hi) {
    Intervals out;
    auto it = std::lower_bound(merged.begin(), merged.end(), lo,
                               [](const Interval& i, int64_t v) { return i.end <= v; });
    for (; it != merged.end() && it->start < hi; ++it) {
        const Interval c{std::max(it->start, lo), std::min(it->end, hi)};
        if (c.length() > 0) out.push_back(c);
    }
    return out;
}

Intervals unite(const Intervals& a, const Intervals& b) {
    Intervals out;
    out.reserve(a.size() + b.size());
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        const Interval& next =
            (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) ? a[i++] : b[j++];
        if (!out.empty() && next.start <= out.back().end)
            out.back().end = std::max(out.back().end, next.end);
        else
            out.push_back(next);
    }
    return out;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
    Intervals out;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const int64_t s = std::max(a[i].start, b[j].start);
        const int64_t e = std::min(a[i].end, b[j].end);
        if (s < e) out.push_back({s, e});
        if (a[i].end < b[j].end)
            ++i;
        else
            ++j;
    }
    return out;
}

Intervals subtract(const Intervals& a, const Intervals& b) {
    Intervals out;
    size_t j = 0;
    for (const Interval& x : a) {
        int64_t cur = x.start;
        while (j < b.size() && b[j].end <= cur) ++j;
        size_t k = j;
        while (k < b.size() && b[k].start < x.end) {
            if (b[k].start > cur) out.push_back({cur, b[k].start});
            cur = std::max(cur, b[k].end);
            ++k;
        }
        if (cur < x.end) out.push_back({cur, x.end});
    }
    return out;
}

Intervals complement(const Intervals& busy, int64_t lo, int64_t hi) {
    if (hi <= lo) return {};
    // At most one gap more than the busy intervals reaching into [lo, hi): reserved, on huge
    // pages when large, rather than grown (the whole window of a large trace has millions).
    const auto first = std::lower_bound(busy.begin(), busy.end(), lo,
                                        [](const Interval& i, int64_t v) { return i.end <= v; });
    const auto last = std::lower_bound(first, busy.end(), hi,
                                       [](const Interval& i, int64_t v) { return i.start < v; });
    Intervals out;
    base::reserveHuge(out, size_t(last - first) + 1);
    size_t j = 0;
    int64_t cur = lo; // subtract({{lo, hi}}, busy)
    while (j < busy.size() && busy[j].end <= cur) ++j;
    for (size_t k = j; k < busy.size() && busy[k].start < hi; ++k) {
        if (busy[k].start > cur) out.push_back({cur, busy[k].start});
        cur = std::max(cur, busy[k].end);
    }
    if (cur < hi) out.push_back({cur, hi});
    return out;
}

int64_t lengthWithin(const Intervals& merged, int64_t lo, int64_t hi) {
    int64_t t = 0;
    auto it = std::lower_bound(merged.begin(), merged.end(), lo,
                               [](const Interval& i, int64_t v) { return i.end <= v; });
    for (; it != merged.end() && it->start < hi; ++it)
        t += std::min(it->end, hi) - std::max(it->start, lo);
    return t;
}

Intervals gpuBusyIntervals(const Trace& t, int32_t device, bool kernelsOnly) {
    const SliceTable& s = t.slices();
    Intervals out;
    for (const TrackInfo& tr : t.tracks()) {
        if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != device) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
            if (kernelsOnly ? s.kind[i] == EventKind::Kernel : isGpuWork(s.kind[i]))
                out.push_back({s.start[i], s.start[i] + s.dur[i]});
    }
    return mergeIntervals(std::move(out));
}

} // namespace stallscope::model
