#include "stallscope/analysis/gpu_metrics.h"

#include <algorithm>

namespace stallscope::analysis {

using namespace model;

std::vector<double> bucketize(const Intervals& busy, int64_t lo, int64_t hi, int64_t bucketNs, bool lastAbsorbs) {
    std::vector<double> out;
    if (hi <= lo || bucketNs <= 0) return out;
    int64_t n = (hi - lo) / bucketNs;
    if (!lastAbsorbs && (hi - lo) % bucketNs) ++n;
    if (n == 0) n = 1;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t b = lo + i * bucketNs;
        const int64_t e = (i == n - 1) ? hi : std::min(hi, b + bucketNs);
        out.push_back(double(lengthWithin(busy, b, e)) / double(e - b));
    }
    return out;
}

std::vector<ValueRange> smEfficiencyRanges(const Trace& t, int32_t device) {
    const SliceTable& s = t.slices();
    struct Ep {
        int64_t t;
        int type;  // 0 start, 1 end: starts first at equal times
        double v;
    };
    std::vector<Ep> eps;
    for (const TrackInfo& tr : t.tracks()) {
        if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != device) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (s.kind[i] != EventKind::Kernel) continue;
            const float b = SliceExtra::blocksPerSm(s.extra[i]);
            if (!(b > 0)) continue;
            eps.push_back({s.start[i], 0, b});
            eps.push_back({s.start[i] + s.dur[i], 1, b});
        }
    }
    std::vector<ValueRange> out;
    if (eps.empty()) return out;
    std::sort(eps.begin(), eps.end(), [](const Ep& a, const Ep& b) { return a.t != b.t ? a.t < b.t : a.type < b.type; });
    double value = eps[0].v;
    int64_t last = eps[0].t;
    for (size_t i = 1; i < eps.size(); ++i) {
        const Ep& e = eps[i];
        if (e.t > last && value > 1e-12) out.push_back({last, e.t, std::min(value, 1.0)});
        last = e.t;
        value += e.type == 0 ? e.v : -e.v;
    }
    return out;
}

double weightedMean(const std::vector<ValueRange>& ranges, int64_t lo, int64_t hi) {
    if (hi <= lo) return 0;
    double w = 0;
    // The ranges are in start order and do not overlap (see the header): their ends are in
    // order too, so the first one ending after `lo` is found by bisection.
    auto r = std::upper_bound(ranges.begin(), ranges.end(), lo,
                              [](int64_t v, const ValueRange& x) { return v < x.end; });
    for (; r != ranges.end() && r->start < hi; ++r) {
        const int64_t a = std::max(r->start, lo), b = std::min(r->end, hi);
        if (b > a) w += r->value * double(b - a);
    }
    return w / double(hi - lo);
}

} // namespace stallscope::analysis
