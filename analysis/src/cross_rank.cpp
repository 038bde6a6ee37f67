// Cross-rank analysis: see cross_rank.h and docs/analysis.md "Ranks".
#include "stallscope/analysis/cross_rank.h"

#include "stallscope/analysis/detector_catalogue.h"
#include "stallscope/analysis/kernel_catalogue.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis {

using namespace model;

namespace {

struct Coll {
    int64_t start, end;
    StringId name;
};

/// The communication kernels (the catalogue's comm family) of a rank's busiest device
/// inside its window, by start.
std::vector<Coll> collectivesOf(const RankInput& in) {
    const Trace& t = *in.trace;
    const SliceTable& s = t.slices();
    const AnalysisResult& a = *in.analysis;
    std::vector<Coll> out;
    const DeviceMetrics* busiest = nullptr;
    for (const DeviceMetrics& d : a.devices)
        if (!busiest || d.busyNs > busiest->busyNs) busiest = &d;
    if (!busiest) return out;
    std::map<uint32_t, bool> comm; // per kernel name
    for (const TrackInfo& tr : t.tracks()) {
        if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != busiest->device)
            continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (s.kind[i] != EventKind::Kernel || s.start[i] < a.window.startNs ||
                s.start[i] >= a.window.endNs)
                continue;
            auto [it, added] = comm.try_emplace(s.name[i].value);
            if (added) it->second = classifyKernel(t.str(s.name[i])).family == KernelFamily::Comm;
            if (it->second) out.push_back({s.start[i], s.end(i), s.name[i]});
        }
    }
    std::sort(out.begin(), out.end(),
              [](const Coll& x, const Coll& y) { return x.start < y.start; });
    return out;
}

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace

CrossRankResult analyzeRanks(const std::vector<RankInput>& inputs) {
    CrossRankResult r;
    std::vector<RankInput> in = inputs;
    std::sort(in.begin(), in.end(),
              [](const RankInput& a, const RankInput& b) { return a.rank < b.rank; });
    const size_t n = in.size();
    if (n < 2) {
        r.notes.push_back("one rank: nothing to compare");
        return r;
    }
    std::vector<std::vector<Coll>> colls(n);
    for (size_t i = 0; i < n; ++i) {
        RankSummary rs;
        rs.rank = in[i].rank;
        rs.label = in[i].label;
        const AnalysisResult& a = *in[i].analysis;
        rs.windowNs = a.window.length();
        const DeviceMetrics* busiest = nullptr;
        for (const DeviceMetrics& d : a.devices)
            if (!busiest || d.busyNs > busiest->busyNs) busiest = &d;
        if (busiest) {
            rs.utilization = busiest->utilization;
            for (size_t k = 0; k < kIdleCauseCount; ++k)
                if (busiest->idle.causes[k].ns > rs.topCauseNs)
                    rs.topCauseNs = busiest->idle.causes[k].ns,
                    rs.topCause = static_cast<IdleCause>(k);
        }
        r.ranks.push_back(rs);
        colls[i] = collectivesOf(in[i]);
    }
    // Findings across the ranks instead of one row per rank and GPU.
    std::map<FindingKind, RankFinding> byKind;
    for (const RankInput& ri : in) {
        std::map<FindingKind, double> best; // a rank's largest saving per kind (its GPUs)
        for (const Finding& f : ri.analysis->findings)
            if (detectorEntry(f.kind).stage != DetectorStage::Context)
                best[f.kind] = std::max(best[f.kind], f.savingShare);
        for (const auto& [kind, share] : best) {
            RankFinding& rf = byKind[kind];
            rf.kind = kind;
            if (rf.ranks == 0 || share < rf.minShare) rf.minShare = share;
            if (rf.ranks == 0 || share > rf.maxShare) rf.maxShare = share, rf.worstRank = ri.rank;
            ++rf.ranks;
        }
    }
    for (auto& [k, rf] : byKind) r.findings.push_back(rf);
    std::stable_sort(r.findings.begin(), r.findings.end(),
                     [](const RankFinding& a, const RankFinding& b) {
                         return a.ranks != b.ranks ? a.ranks > b.ranks : a.maxShare > b.maxShare;
                     });
    int64_t slow = 0, fast = INT64_MAX;
    for (const RankSummary& rs : r.ranks)
        slow = std::max(slow, rs.windowNs), fast = std::min(fast, rs.windowNs);
    r.stepImbalance = fast > 0 ? double(slow) / double(fast) - 1 : 0;

    // Match by order: the common prefix whose names agree on every rank.
    size_t m = SIZE_MAX;
    for (const auto& v : colls) m = std::min(m, v.size());
    size_t agreed = 0;
    for (; agreed < m; ++agreed) {
        bool same = true;
        for (size_t i = 1; i < n && same; ++i)
            same =
                in[i].trace->str(colls[i][agreed].name) == in[0].trace->str(colls[0][agreed].name);
        if (!same) break;
    }
    bool equalCounts = true;
    for (const auto& v : colls) equalCounts &= v.size() == colls[0].size();
    r.collectives = agreed;
    r.matching = "by order of the communication kernels on each rank's busiest GPU";
    if (!equalCounts || agreed < m)
        r.notes.push_back("the ranks' collectives differ after #" + std::to_string(agreed) +
                          " (counts or kernel names): only the first " + std::to_string(agreed) +
                          " are compared");
    if (agreed == 0) {
        r.notes.push_back(
            "no collective common to all ranks: waiting and stragglers cannot be told");
        return r;
    }

    // Clock offsets from the collectives' ends (a collective ends within microseconds on
    // every rank): the median difference to rank order's first rank; applied when any is
    // beyond 50 us (the hosts' clocks disagree), else the ranks share a clock.
    std::vector<int64_t> offset(n, 0);
    for (size_t i = 1; i < n; ++i) {
        std::vector<int64_t> d;
        for (size_t k = 0; k < agreed; ++k) d.push_back(colls[i][k].end - colls[0][k].end);
        offset[i] = median(d);
        if (std::abs(offset[i]) > 50'000) r.clocksAligned = true;
    }
    if (!r.clocksAligned) std::fill(offset.begin(), offset.end(), 0);
    for (size_t i = 0; i < n; ++i) r.ranks[i].clockOffsetNs = offset[i];

    // Each collective: the last arrival sets its end; the others wait for it.
    for (size_t k = 0; k < agreed; ++k) {
        int64_t last = INT64_MIN, second = INT64_MIN;
        size_t who = 0;
        for (size_t i = 0; i < n; ++i) {
            const int64_t arrive = colls[i][k].start - offset[i];
            if (arrive > last)
                second = last, last = arrive, who = i;
            else if (arrive > second)
                second = arrive;
        }
        for (size_t i = 0; i < n; ++i) {
            const int64_t arrive = colls[i][k].start - offset[i];
            const int64_t dur = colls[i][k].end - colls[i][k].start;
            const int64_t wait = std::clamp<int64_t>(last - arrive, 0, dur);
            r.ranks[i].collectiveNs += dur;
            r.ranks[i].waitNs += wait;
            r.ranks[i].transferNs += dur - wait;
        }
        ++r.ranks[who].lastArrivals;
        r.ranks[who].lateNs += second == INT64_MIN ? 0 : last - second;
        // What the last rank did before arriving: from its previous collective's end (or
        // its window's start) to this one's start, on its own clock.
        const int64_t from = k > 0 ? colls[who][k - 1].end : in[who].analysis->window.startNs;
        const int64_t to = colls[who][k].start;
        if (to > from) {
            RankSummary& rs = r.ranks[who];
            rs.lateStretchNs += to - from;
            const DeviceMetrics* busiest = nullptr;
            for (const DeviceMetrics& d : in[who].analysis->devices)
                if (!busiest || d.busyNs > busiest->busyNs) busiest = &d;
            if (busiest) {
                int64_t idle = 0;
                for (size_t c = 0; c < kIdleCauseCount; ++c) {
                    const int64_t ns = lengthWithin(busiest->idle.intervals[c], from, to);
                    rs.lateIdle[c] += ns;
                    idle += ns;
                }
                rs.lateBusyNs += std::max<int64_t>(0, (to - from) - idle);
            }
        }
    }
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
        if (r.ranks[i].lastArrivals > r.ranks[best].lastArrivals) best = i;
    r.stragglerShare = double(r.ranks[best].lastArrivals) / double(agreed);
    // A straggler is a rank that is last clearly more often than its share by chance.
    if (r.stragglerShare * double(n) >= 2.0 || (agreed == 1 && n >= 2))
        r.straggler = r.ranks[best].rank;
    return r;
}

} // namespace stallscope::analysis
