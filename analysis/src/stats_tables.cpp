#include "stats_tables.h"
#include "huge_pages.h"

#include "stallscope/analysis/name_rules.h"
#include "stallscope/model/copy_kind.h"

#include <algorithm>
#include <unordered_map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

template <class Map, class Vec>
void sortedValues(Map& m, Vec& out, auto key) {
    out.reserve(m.size());
    for (auto& [k, v] : m) out.push_back(v);
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        if (key(a) != key(b)) return key(a) > key(b);
        return a.count > b.count;
    });
}

/// A table's entry by name, looked up in its hash map once per distinct name: entries of an
/// unordered_map keep their address, and the map itself (its insertion order, so the order
/// the tables are sorted from) is the same as with a lookup per event.
template <class V> class ByName {
public:
    ByName(std::unordered_map<uint32_t, V>& map, size_t names)
        : m_map(map), m_cache(names, nullptr) {}
    V& operator[](StringId id) {
        V*& p = m_cache[id.index()];
        if (!p) p = &m_map[id.value];
        return *p;
    }

private:
    std::unordered_map<uint32_t, V>& m_map;
    std::vector<V*> m_cache;
};

} // namespace

StatsTables computeStats(const Context& c) {
    const Trace& t = c.trace;
    const SliceTable& s = t.slices();
    const int64_t lo = c.window.startNs, hi = c.window.endNs;
    auto inWindow = [&](uint32_t i) { return startsInWindow(s, i, lo, hi); };
    StatsTables out;
    const StepRanges isStepRange(t);

    // Kernels and copies of the analysed devices.
    std::unordered_map<uint32_t, KernelStat> kernels;
    std::unordered_map<uint32_t, std::pair<double, double>> kernelWeights;  // blocks, occupancy weights
    std::unordered_map<std::string, CopyStat> copies;
    std::unordered_map<uint64_t, KernelOperatorStat> byOperator; // (op name, kernel name)
    std::vector<uint32_t> commKernels;
    LaunchedGpu launched(s.size());
    const size_t names = t.strings().size();
    ByName<KernelStat> kernelOf(kernels, names);
    ByName<std::pair<double, double>> kernelWeightOf(kernelWeights, names);
    std::vector<CopyStat*> copyOf(names, nullptr);
    for (const DeviceActivity& d : c.devices) {
        for (size_t wi = 0; wi < d.work.size(); ++wi) {
            const uint32_t w = d.work[wi];
            if (!inWindow(w)) continue;
            const int64_t dur = s.dur[w];
            const SliceId l = d.launch[wi];
            const SliceId op = launched.charge(s, l, dur, isStepRange);
            if (s.kind[w] == EventKind::Kernel) {
                KernelStat& k = kernelOf[s.name[w]];
                if (k.count == 0) {
                    k.name = s.name[w];
                    k.minNs = dur;
                    k.example = SliceId(w);
                    k.tensorCores = c.is(w, kNcTensorCore);
                    k.communication = c.is(w, kNcComm);
                    k.gemmOrConv = c.is(w, kNcGemm);
                }
                ++k.count;
                k.totalNs += dur;
                k.minNs = std::min(k.minNs, dur);
                k.maxNs = std::max(k.maxNs, dur);
                const float b = SliceExtra::blocksPerSm(s.extra[w]);
                const float o = SliceExtra::estOccupancyPct(s.extra[w]);
                auto& wt = kernelWeightOf[s.name[w]];
                if (b >= 0) {
                    k.meanBlocksPerSm = (k.meanBlocksPerSm < 0 ? 0 : k.meanBlocksPerSm) + b * double(dur);
                    wt.first += double(dur);
                }
                if (o >= 0) {
                    k.meanOccupancy = (k.meanOccupancy < 0 ? 0 : k.meanOccupancy) + o * double(dur);
                    wt.second += double(dur);
                }
                if (k.communication) commKernels.push_back(w);
                const StringId opName = op.valid() ? s.name[op.index()] : StringId();
                KernelOperatorStat& ko =
                    byOperator[(uint64_t(opName.value) << 32) | s.name[w].value];
                if (ko.count == 0)
                    ko.op = opName, ko.kernel = s.name[w], ko.minNs = dur, ko.example = SliceId(w);
                ++ko.count;
                ko.totalNs = satAdd(ko.totalNs, dur);
                ko.minNs = std::min(ko.minNs, dur);
                ko.maxNs = std::max(ko.maxNs, dur);
            } else if (s.kind[w] == EventKind::Memcpy) {
                CopyStat*& entry = copyOf[s.name[w].index()];
                if (!entry) {
                    const CopyInfo ci = parseCopyName(t.str(s.name[w]));
                    const std::string key = std::string(copyDirectionName(ci.direction)) + " " +
                                            std::string(memoryKindName(ci.src)) + "->" +
                                            std::string(memoryKindName(ci.dst));
                    entry = &copies[key];
                    if (entry->count == 0) entry->kind = key;
                }
                CopyStat& cs = *entry;
                if (cs.count == 0) cs.example = SliceId(w);
                ++cs.count;
                cs.totalNs += dur;
                if (s.extra[w] != SliceExtra::kNone) cs.bytes += static_cast<int64_t>(s.extra[w]);
            }
        }
    }
    for (auto& [name, k] : kernels) {
        const auto& wt = kernelWeights[name];
        if (wt.first > 0) k.meanBlocksPerSm /= wt.first;
        if (wt.second > 0) k.meanOccupancy /= wt.second;
    }
    sortedValues(kernels, out.kernels, [](const KernelStat& k) { return k.totalNs; });
    for (auto& [key, cs] : copies) cs.gbPerSecond = cs.totalNs > 0 ? double(cs.bytes) / double(cs.totalNs) : 0;
    sortedValues(copies, out.copies, [](const CopyStat& k) { return k.totalNs; });
    sortedValues(byOperator, out.kernelsByOperator,
                 [](const KernelOperatorStat& k) { return k.totalNs; });
    out.collectives = collectiveStats(t, commKernels);

    // CPU operators by name, and runtime calls.
    OperatorTable ops = operatorTable(t, lo, hi, launched, isStepRange,
                                      [&](uint32_t i) { return uint64_t(s.name[i].value); });
    out.operators.reserve(ops.size());
    for (auto& [key, o] : ops) out.operators.push_back(o);
    sortOperators(out.operators);
    std::unordered_map<uint32_t, RuntimeStat> runtime;
    ByName<RuntimeStat> runtimeOf(runtime, names);
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo); i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (!inWindow(i) || !isLaunchSide(s.kind[i])) continue;
            RuntimeStat& r = runtimeOf[s.name[i]];
            if (r.count == 0) r.name = s.name[i], r.example = SliceId(i);
            ++r.count;
            r.totalNs += s.dur[i];
            r.maxNs = std::max(r.maxNs, s.dur[i]);
        }
    }
    sortedValues(runtime, out.runtime, [](const RuntimeStat& r) { return r.totalNs; });
    return out;
}

// ---------------------------------------------------------------- shared with operator_groups.cpp

StepRanges::StepRanges(const Trace& t) : m_trace(t), m_known(t.strings().size(), 0) {}

bool StepRanges::operator()(StringId n) const {
    uint8_t& k = m_known[n.index()];
    if (k == 0) k = names::isProfilerStep(m_trace.str(n)) ? 2 : 1;
    return k == 2;
}

LaunchedGpu::LaunchedGpu(size_t slices) {
    assignHuge(total, slices, int64_t(0));
    assignHuge(self, slices, int64_t(0));
}

SliceId LaunchedGpu::charge(const SliceTable& s, SliceId launch, int64_t dur,
                            const StepRanges& isStepRange) {
    SliceId innermost;
    for (SliceId p = launch.valid() ? s.parent[launch.index()] : SliceId(); p.valid();
         p = s.parent[p.index()]) {
        if (s.kind[p.index()] != EventKind::CpuOp) continue;
        total[p.index()] = satAdd(total[p.index()], dur);
        if (!innermost.valid() && !isStepRange(s.name[p.index()])) {
            innermost = p;
            self[p.index()] = satAdd(self[p.index()], dur);
        }
    }
    return innermost;
}

void sortOperators(std::vector<OperatorStat>& ops) {
    std::sort(ops.begin(), ops.end(), [](const OperatorStat& a, const OperatorStat& b) {
        if (a.selfNs != b.selfNs) return a.selfNs > b.selfNs;
        return a.count > b.count;
    });
}

} // namespace stallscope::analysis::detail
