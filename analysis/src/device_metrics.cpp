#include "device_metrics.h"
#include "huge_pages.h"

#include "stallscope/analysis/gpu_metrics.h"
#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

/// totalLength(intersect(clip(a, lo, hi), clip(b, lo, hi))) of merged lists, without the lists.
int64_t overlapWithin(const Intervals& a, const Intervals& b, int64_t lo, int64_t hi) {
    if (a.empty() || b.empty() || hi <= lo) return 0;
    auto from = [lo](const Intervals& v) {
        return std::lower_bound(v.begin(), v.end(), lo,
                                [](const Interval& i, int64_t x) { return i.end <= x; });
    };
    int64_t total = 0;
    for (auto i = from(a), j = from(b);
         i != a.end() && j != b.end() && i->start < hi && j->start < hi;) {
        const int64_t s = std::max({i->start, j->start, lo}), e = std::min({i->end, j->end, hi});
        if (s < e) total += e - s;
        if (i->end < j->end)
            ++i;
        else
            ++j;
    }
    return total;
}

/// `all` = unite(all, more), through a buffer kept between calls (no fresh list per thread).
void uniteInto(Intervals& all, Intervals&& more, Intervals& buffer) {
    if (more.empty()) return;
    if (all.empty()) {
        all = std::move(more);
        return;
    }
    buffer.clear();
    reserveHuge(buffer, all.size() + more.size());
    size_t i = 0, j = 0;
    while (i < all.size() || j < more.size()) {
        const Interval& next =
            (j == more.size() || (i < all.size() && all[i].start <= more[j].start)) ? all[i++]
                                                                                    : more[j++];
        if (!buffer.empty() && next.start <= buffer.back().end)
            buffer.back().end = std::max(buffer.back().end, next.end);
        else
            buffer.push_back(next);
    }
    std::swap(all, buffer);
}

} // namespace

CpuActivity collectCpuActivity(const Context& c) {
    const SliceTable& s = c.trace.slices();
    CpuActivity out;
    Intervals buffer;
    const int64_t lo = c.window.startNs, hi = c.window.endNs;
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        // One thread's slices come in start order: merged as they come, then threads united.
        Intervals runtime, loader, cpu;
        reserveHuge(cpu, tr.sliceEnd - tr.sliceBegin); // at most; pages never written cost nothing
        reserveHuge(runtime, tr.sliceEnd - tr.sliceBegin);
        for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(TrackId(ti), lo); i < tr.sliceEnd && s.start[i] < hi; ++i) {
            const Interval iv{s.start[i], s.start[i] + s.dur[i]};
            if (iv.end <= lo) continue;
            const uint32_t nc = c.nameClass(i);
            if (nc & kNcProfilerStep) continue;
            if (isLaunchSide(s.kind[i])) appendMerged(runtime, iv);
            if (nc & kNcDataLoader) appendMerged(loader, iv);
            appendMerged(cpu, iv);
        }
        uniteInto(out.runtime, std::move(runtime), buffer);
        uniteInto(out.dataLoader, std::move(loader), buffer);
        uniteInto(out.cpu, std::move(cpu), buffer);
    }
    return out;
}

namespace {

constexpr size_t kRoles = 7; // the roles with intervals, by priority (RoleBreakdown's order)
using RoleLists = std::array<const Intervals*, kRoles>;

int64_t& roleNs(RoleBreakdown& r, size_t role) {
    switch (role) {
    case 0: return r.kernel;
    case 1: return r.memcpy;
    case 2: return r.memset;
    case 3: return r.communication;
    case 4: return r.runtime;
    case 5: return r.dataLoader;
    default: return r.cpuExec;
    }
}

using RoleNs = std::array<int64_t, kRoles>;

/// Each role gets the time of [lo, hi) that it covers and no role before it covers: the
/// union of the first k roles less that of the first k-1 (what subtracting each role's
/// intervals from those before it and uniting gives), for the window and for each tile.
/// One sweep over the roles' merged intervals (sorted, disjoint) and the tiles (sorted,
/// disjoint, inside [lo, hi)): at each boundary the roles covering the time are a bit mask,
/// the segment up to the next boundary goes to the first of them. Exact integer lengths, no
/// intermediate interval lists.
void sweepRoles(const RoleLists& roles, int64_t lo, int64_t hi, const std::vector<Interval>& tiles,
                RoleNs& whole, std::vector<RoleNs>& perTile) {
    std::array<const Interval*, kRoles> at{}, stop{};
    std::array<int64_t, kRoles> event{}; // each role's next boundary; INT64_MAX: none
    std::array<size_t, kRoles> active{}; // the roles with intervals in [lo, hi)
    size_t n = 0;
    uint32_t covering = 0; // bit k: role k covers the current time
    for (size_t k = 0; k < kRoles; ++k) {
        const Intervals& v = *roles[k];
        const auto first = std::lower_bound(
            v.begin(), v.end(), lo, [](const Interval& i, int64_t x) { return i.end <= x; });
        at[k] = v.data() + (first - v.begin());
        stop[k] = v.data() + v.size();
        event[k] = INT64_MAX;
        if (at[k] == stop[k] || at[k]->start >= hi) continue;
        active[n++] = k;
        if (at[k]->start <= lo) {
            covering |= 1u << k;
            event[k] = at[k]->end;
        } else {
            event[k] = at[k]->start;
        }
    }
    size_t tile = 0;
    while (tile < tiles.size() && tiles[tile].end <= lo) ++tile;
    int64_t t = lo;
    while (t < hi) {
        int64_t next = hi;
        for (size_t j = 0; j < n; ++j) next = std::min(next, event[active[j]]);
        const bool inTile = tile < tiles.size() && tiles[tile].start <= t;
        if (tile < tiles.size())
            next = std::min(next, inTile ? tiles[tile].end : tiles[tile].start);
        if (covering) {
            const size_t role = size_t(std::countr_zero(covering));
            whole[role] += next - t;
            if (inTile) perTile[tile][role] += next - t;
        }
        t = next;
        for (size_t j = 0; j < n; ++j) {
            const size_t k = active[j];
            if (event[k] != t) continue;
            if (covering & (1u << k)) { // its interval ends: the next one starts later
                covering &= ~(1u << k);
                ++at[k];
                event[k] = at[k] == stop[k] || at[k]->start >= hi ? INT64_MAX : at[k]->start;
                if (event[k] == t) { // touching (merged lists have none): covers on
                    covering |= 1u << k;
                    event[k] = at[k]->end;
                }
            } else {
                covering |= 1u << k;
                event[k] = at[k]->end;
            }
        }
        while (tile < tiles.size() && tiles[tile].end <= t) ++tile;
    }
}

RoleLists roleLists(const Intervals& kernels, const Intervals& memcpy, const Intervals& memset,
                    const Intervals& comm, const CpuActivity& cpu) {
    return {&kernels, &memcpy, &memset, &comm, &cpu.runtime, &cpu.dataLoader, &cpu.cpu};
}

RoleBreakdown toBreakdown(const RoleNs& ns, int64_t lo, int64_t hi) {
    RoleBreakdown r;
    if (hi <= lo) return r;
    int64_t covered = 0;
    for (size_t k = 0; k < kRoles; ++k) {
        roleNs(r, k) = ns[k];
        covered += ns[k];
    }
    r.other = (hi - lo) - covered;
    return r;
}

} // namespace

RoleBreakdown roleBreakdown(const Intervals& kernels, const Intervals& memcpy,
                            const Intervals& memset, const Intervals& comm, const CpuActivity& cpu,
                            int64_t lo, int64_t hi) {
    RoleNs ns{};
    std::vector<RoleNs> none;
    if (hi > lo) sweepRoles(roleLists(kernels, memcpy, memset, comm, cpu), lo, hi, {}, ns, none);
    return toBreakdown(ns, lo, hi);
}

void roleBreakdowns(const Intervals& kernels, const Intervals& memcpy, const Intervals& memset,
                    const Intervals& comm, const CpuActivity& cpu, int64_t lo, int64_t hi,
                    const std::vector<Interval>& tiles, RoleBreakdown& whole,
                    std::vector<RoleBreakdown>& perTile) {
    RoleNs ns{};
    std::vector<RoleNs> tileNs(tiles.size(), RoleNs{});
    if (hi > lo)
        sweepRoles(roleLists(kernels, memcpy, memset, comm, cpu), lo, hi, tiles, ns, tileNs);
    whole = toBreakdown(ns, lo, hi);
    perTile.clear();
    perTile.reserve(tiles.size());
    for (size_t t = 0; t < tiles.size(); ++t)
        perTile.push_back(toBreakdown(tileNs[t], tiles[t].start, tiles[t].end));
}

namespace {

/// `maxDur`: the longest work item of the device, so the scan starts at the first item that
/// can reach `lo` (the work is sorted by start) instead of the first of the trace.
double achievedOccupancy(const Context& c, const DeviceActivity& d, int64_t lo, int64_t hi,
                         int64_t maxDur) {
    const SliceTable& s = c.trace.slices();
    double sum = 0, time = 0;
    auto it = std::lower_bound(d.work.begin(), d.work.end(), lo - maxDur,
                               [&s](uint32_t w, int64_t v) { return s.start[w] < v; });
    for (; it != d.work.end() && s.start[*it] < hi; ++it) {
        const uint32_t w = *it;
        if (s.kind[w] != EventKind::Kernel) continue;
        const float occ = SliceExtra::estOccupancyPct(s.extra[w]);
        if (!(occ >= 0)) continue;
        const int64_t a = std::max(s.start[w], lo);
        const int64_t b = std::min(s.start[w] + s.dur[w], hi);
        if (b <= a) continue;
        sum += occ * static_cast<double>(b - a);
        time += static_cast<double>(b - a);
    }
    return time > 0 ? sum / time : -1;
}

} // namespace

DeviceMetrics computeDeviceMetrics(const Context& c, const DeviceActivity& d, const CpuActivity& cpu,
                                   const std::vector<Interval>& tiles) {
    const SliceTable& s = c.trace.slices();
    const int64_t lo = c.window.startNs, hi = c.window.endNs;
    DeviceMetrics m;
    m.device = d.device;
    for (const auto& p : c.trace.metadata().devices)
        if (p.id == d.device) m.name = p.name;
    m.windowNs = hi - lo;  // model times: the difference fits (kModelTimeLimitNs)
    m.busyNs = lengthWithin(d.busy, lo, hi);
    m.kernelBusyNs = lengthWithin(d.kernelBusy, lo, hi);
    m.idleNs = m.windowNs - m.busyNs;
    m.utilization = m.windowNs > 0 ? double(m.busyNs) / double(m.windowNs) : 0;
    m.kernelUtilization = m.windowNs > 0 ? double(m.kernelBusyNs) / double(m.windowNs) : 0;
    const auto sm = smEfficiencyRanges(c.trace, d.device);
    m.estSmEfficiency = sm.empty() ? -1 : weightedMean(sm, lo, hi);
    int64_t maxDur = 0;
    for (uint32_t w : d.work) maxDur = std::max(maxDur, s.dur[w]);
    m.estAchievedOccupancy = achievedOccupancy(c, d, lo, hi, maxDur);

    // Work by role, and launch queues per stream.
    Intervals compute, comm, memcpy, memset;
    reserveHuge(compute, d.work.size()); // at most; pages never written cost nothing
    std::map<int64_t, StreamQueue> queues;
    for (size_t wi = 0; wi < d.work.size(); ++wi) {
        const uint32_t w = d.work[wi];
        const Interval iv{s.start[w], s.start[w] + s.dur[w]};
        const EventKind k = s.kind[w];
        if (k == EventKind::Kernel) { // the work is in start order: merged as it comes
            appendMerged(c.is(w, kNcComm) ? comm : compute, iv);
        } else if (k == EventKind::Memcpy) {
            appendMerged(memcpy, iv);
        } else {
            appendMerged(memset, iv);
        }
        if (iv.start < lo || iv.start >= hi) continue;
        const int64_t stream = c.trace.track(s.track[w]).key.number;
        StreamQueue& q = queues[stream];
        q.stream = stream;
        ++q.launched;
        const SliceId l = d.launch[wi];
        if (l.valid()) {
            const int64_t queuedFrom = std::max(s.start[l.index()] + s.dur[l.index()], lo);
            if (iv.start > queuedFrom) q.meanDepth += static_cast<double>(iv.start - queuedFrom);
        }
    }
    for (auto& [stream, q] : queues) {
        q.meanDepth = m.windowNs > 0 ? q.meanDepth / double(m.windowNs) : 0;
        m.queues.push_back(q);
    }
    m.launches = computeLaunchStats(c, d, lo, hi);
    m.commNs = lengthWithin(comm, lo, hi);
    m.commOverlapNs = overlapWithin(comm, compute, lo, hi);
    std::vector<RoleBreakdown> tileRoles;
    roleBreakdowns(compute, memcpy, memset, comm, cpu, lo, hi, tiles, m.roles, tileRoles);

    // Utilisation over time.
    // At most kMaxUtilizationBuckets: a window of days (one stray event far from the rest)
    // widens the buckets instead of asking for billions of them.
    constexpr int64_t kMaxUtilizationBuckets = 100'000;
    m.utilizationBucketNs = std::max<int64_t>({1, c.options.utilizationBucketNs,
                                               m.windowNs / kMaxUtilizationBuckets + 1});
    m.utilizationSeries = bucketize(d.busy, lo, hi, m.utilizationBucketNs, false);

    for (size_t i = 0; i < tiles.size(); ++i) {
        StepMetrics st;
        st.number = c.steps[i].number;
        st.startNs = tiles[i].start;
        st.endNs = tiles[i].end;
        st.busyNs = lengthWithin(d.busy, st.startNs, st.endNs);
        st.kernelBusyNs = lengthWithin(d.kernelBusy, st.startNs, st.endNs);
        if (!sm.empty()) st.estSmEfficiency = weightedMean(sm, st.startNs, st.endNs);
        if (m.estAchievedOccupancy >= 0)
            st.estAchievedOccupancy = achievedOccupancy(c, d, st.startNs, st.endNs, maxDur);
        st.roles = tileRoles[i];
        m.steps.push_back(st);
    }
    return m;
}

} // namespace stallscope::analysis::detail
