#pragma once
#include "analysis_context.h"

#include <unordered_map>

namespace stallscope::analysis::detail {

/// Kernel, operator, copy and runtime-call tables over the window (events starting in it).
StatsTables computeStats(const Context& c);

/// Collective communication kernels by type (collectives.cpp): `kernels` are the window's
/// communication kernels; their sizes are read from their arguments on demand.
std::vector<CollectiveStat> collectiveStats(const model::Trace& t,
                                            const std::vector<uint32_t>& kernels);

inline bool startsInWindow(const model::SliceTable& s, uint32_t i, int64_t lo, int64_t hi) {
    return s.start[i] < hi && s.start[i] + s.dur[i] > lo && s.start[i] >= lo;
}

/// ProfilerStep#N ranges are steps, not operators (the 2021 traces write them as
/// operators): they would head the operator table with the whole window. Cached by name.
class StepRanges {
public:
    explicit StepRanges(const model::Trace& t);
    bool operator()(model::StringId name) const;

private:
    const model::Trace& m_trace;
    mutable std::vector<uint8_t> m_known; // 0 not looked at, 1 no, 2 yes
};

/// GPU time launched from inside each CPU operator, per slice: `total` at any depth (device
/// total), `self` by the innermost operator around the launch that is not a step (device self).
struct LaunchedGpu {
    explicit LaunchedGpu(size_t slices);
    /// Charges `dur` of GPU work launched by `launch`; returns the operator charged as self.
    model::SliceId charge(const model::SliceTable& s, model::SliceId launch, int64_t dur,
                          const StepRanges& isStepRange);
    std::vector<int64_t> total, self;
};

/// By self time, then calls.
void sortOperators(std::vector<OperatorStat>& ops);

using OperatorTable = std::unordered_map<uint64_t, OperatorStat>;

/// CPU operators of the window grouped by `key(slice)`: calls, inclusive and self time (own
/// time minus the events nested directly inside), device total and self. A group's name
/// and example are its first call's.
template <class Key>
OperatorTable operatorTable(const model::Trace& t, int64_t lo, int64_t hi, const LaunchedGpu& gpu,
                            const StepRanges& isStepRange, Key key) {
    using namespace model;
    const SliceTable& s = t.slices();
    OperatorTable ops;
    auto isOperator = [&](uint32_t i) {
        return s.kind[i] == EventKind::CpuOp && !isStepRange(s.name[i]);
    };
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo);
             i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (!startsInWindow(s, i, lo, hi)) continue;
            if (isOperator(i)) {
                OperatorStat& o = ops[key(i)];
                if (o.count == 0) o.name = s.name[i], o.example = SliceId(i);
                ++o.count;
                o.totalNs = model::satAdd(o.totalNs, s.dur[i]);
                o.selfNs = model::satAdd(o.selfNs, s.dur[i]);
                o.gpuNs = model::satAdd(o.gpuNs, gpu.total[i]);
                o.gpuSelfNs = model::satAdd(o.gpuSelfNs, gpu.self[i]);
            }
            const SliceId p = s.parent[i];
            if (p.valid() && isOperator(p.index()) && startsInWindow(s, p.index(), lo, hi)) {
                OperatorStat& parent = ops[key(p.index())];
                parent.selfNs = model::satSub(parent.selfNs, std::min(s.dur[i], s.dur[p.index()]));
            }
        }
    }
    return ops;
}

} // namespace stallscope::analysis::detail
