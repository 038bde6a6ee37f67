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
    auto inWindow = [&](uint32_t i) { return s.start[i] < hi && s.start[i] + s.dur[i] > lo && s.start[i] >= lo; };
    StatsTables out;

    // Kernels and copies of the analysed devices.
    std::unordered_map<uint32_t, KernelStat> kernels;
    std::unordered_map<uint32_t, std::pair<double, double>> kernelWeights;  // blocks, occupancy weights
    std::unordered_map<std::string, CopyStat> copies;
    std::vector<int64_t> gpuNs; // per CPU op: GPU work launched inside it
    assignHuge(gpuNs, s.size(), int64_t(0));
    const size_t names = t.strings().size();
    ByName<KernelStat> kernelOf(kernels, names);
    ByName<std::pair<double, double>> kernelWeightOf(kernelWeights, names);
    std::vector<CopyStat*> copyOf(names, nullptr);
    for (const DeviceActivity& d : c.devices) {
        for (size_t wi = 0; wi < d.work.size(); ++wi) {
            const uint32_t w = d.work[wi];
            if (!inWindow(w)) continue;
            const int64_t dur = s.dur[w];
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
            // Charge the GPU time to every CPU op around the launch call.
            const SliceId l = d.launch[wi];
            for (SliceId p = l.valid() ? s.parent[l.index()] : SliceId(); p.valid(); p = s.parent[p.index()])
                if (s.kind[p.index()] == EventKind::CpuOp) gpuNs[p.index()] += dur;
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

    // CPU operators (self time = own time minus direct children) and runtime calls.
    std::unordered_map<uint32_t, OperatorStat> ops;
    std::unordered_map<uint32_t, RuntimeStat> runtime;
    ByName<OperatorStat> opOf(ops, names);
    ByName<RuntimeStat> runtimeOf(runtime, names);
    // ProfilerStep#N ranges are steps, not operators (the 2021 traces write them as
    // operators): they would head the table with the whole window.
    std::unordered_map<size_t, bool> stepRange; // per name
    auto isStepRange = [&](StringId n) {
        auto [it, fresh] = stepRange.try_emplace(n.index(), false);
        if (fresh) it->second = names::isProfilerStep(t.str(n));
        return it->second;
    };
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo); i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (!inWindow(i)) continue;
            const EventKind k = s.kind[i];
            if (k == EventKind::CpuOp && !isStepRange(s.name[i])) {
                OperatorStat& o = opOf[s.name[i]];
                if (o.count == 0) o.name = s.name[i], o.example = SliceId(i);
                ++o.count;
                o.totalNs += s.dur[i];
                o.selfNs += s.dur[i];
                o.gpuNs += gpuNs[i];
            }
            if (isLaunchSide(k)) {
                RuntimeStat& r = runtimeOf[s.name[i]];
                if (r.count == 0) r.name = s.name[i], r.example = SliceId(i);
                ++r.count;
                r.totalNs += s.dur[i];
                r.maxNs = std::max(r.maxNs, s.dur[i]);
            }
            const SliceId p = s.parent[i];
            if (p.valid() && s.kind[p.index()] == EventKind::CpuOp && inWindow(p.index()) &&
                !isStepRange(s.name[p.index()]))
                opOf[s.name[p.index()]].selfNs -= std::min(s.dur[i], s.dur[p.index()]);
        }
    }
    sortedValues(ops, out.operators, [](const OperatorStat& o) { return o.selfNs; });
    sortedValues(runtime, out.runtime, [](const RuntimeStat& r) { return r.totalNs; });
    return out;
}

} // namespace stallscope::analysis::detail
