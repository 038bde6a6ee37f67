#include "idle_attribution.h"
#include "huge_pages.h"

#include "stallscope/analysis/name_rules.h"
#include "stallscope/model/copy_kind.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

std::vector<Interval> stepTiles(const Context& c) {
    std::vector<Interval> tiles;
    for (size_t i = 0; i < c.steps.size(); ++i) {
        const Interval span = stepSpan(c.steps, i, c.window.endNs);
        const int64_t lo = std::max(span.start, c.window.startNs);
        const int64_t hi = std::min(span.end, c.window.endNs);
        tiles.push_back({lo, std::max(lo, hi)});
    }
    return tiles;
}

namespace {

constexpr size_t idx(IdleCause c) { return static_cast<size_t>(c); }

class Attributor {
public:
    Attributor(const Context& c, const DeviceActivity& d, const std::vector<Interval>& tiles,
               std::vector<std::array<int64_t, kIdleCauseCount>>& perStep)
        : m_c(c), m_d(d), m_s(c.trace.slices()), m_tiles(tiles), m_perStep(perStep) {}

    // Queued work that starts later than this after its launch returned waited on the GPU.
    static constexpr int64_t kQueuedNs = 50'000;
    // A code-generation range shorter than this is the generated code running.
    static constexpr int64_t kJitHoldNs = 1'000'000;
    // classify()'s answer for an operator's own time, resolved per segment.
    static constexpr uint8_t kDispatch = static_cast<uint8_t>(IdleCause::Count);

    IdleBreakdown run() {
        const Intervals gaps = complement(m_d.busy, m_c.window.startNs, m_c.window.endNs);
        reserveHuge(m_out.gaps, gaps.size());
        for (const Interval& g : gaps) gap(g);
        for (auto& iv : m_out.intervals) iv = mergeIntervals(std::move(iv));
        for (auto& ct : m_out.causes)
            std::sort(ct.largest.begin(), ct.largest.end(),
                      [](const CausePortion& a, const CausePortion& b) { return a.ns > b.ns; });
        return std::move(m_out);
    }

private:
    void gap(const Interval& g) {
        IdleGap rec{g.start, g.end, IdleCause::HostUntraced, {}, {}};
        m_gapCause.fill(0);
        // The work that ends the gap and the call that launched it: the first starting at or
        // after its end (the gaps come in time order, so the search goes on from the last).
        auto it = m_d.work.begin() + long(m_workAt);
        while (it != m_d.work.end() && m_s.start[*it] < g.end) ++it;
        m_workAt = size_t(it - m_d.work.begin());
        const bool ended = g.end < m_c.window.endNs && it != m_d.work.end() && m_s.start[*it] == g.end;
        if (ended) {
            rec.endingWork = SliceId(*it);
            rec.launch = m_d.launch[static_cast<size_t>(it - m_d.work.begin())];
        }
        // Host-only stand-in: no GPU work marks where input preparation ends.
        m_leading = m_d.device >= 0 && isLeadingGap(g, it);
        if (rec.launch.valid() && m_s.start[rec.launch.index()] < g.start) {
            // Launched in time, yet not running: a dependency on the GPU side.
            chargeDependency(rec, g.start, g.end);
        } else {
            // Launched during the gap: the host's time until the launch returned. When the
            // work then stayed queued longer than a launch takes to start (a graph launch
            // waiting on the GPU side, a stream waiting for an event), that part is the GPU's.
            int64_t hostEnd = g.end;
            if (rec.launch.valid()) {
                const int64_t launchEnd =
                    m_s.start[rec.launch.index()] + m_s.dur[rec.launch.index()];
                if (launchEnd > g.start && g.end - launchEnd > kQueuedNs) hostEnd = launchEnd;
            }
            const TrackId thread = rec.launch.valid() ? m_s.track[rec.launch.index()] : m_d.mainLaunchThread;
            if (thread.valid())
                chargeThread(thread, g.start, hostEnd);
            else
                charge(g.start, hostEnd, IdleCause::HostUntraced, SliceId());
            chargeDependency(rec, hostEnd, g.end);
        }
        size_t best = 0;
        for (size_t k = 0; k < kIdleCauseCount; ++k) {
            if (m_gapCause[k] == 0) continue;
            CauseTotals& ct = m_out.causes[k];
            ++ct.gaps;
            keepLargest(ct.largest, g, m_gapCause[k]);
            if (m_gapCause[k] > m_gapCause[best]) best = k;
        }
        rec.dominant = static_cast<IdleCause>(best);
        m_out.idleNs += g.length();
        m_out.gaps.push_back(rec);
    }

    /// A GPU-side wait: until the work a recorded stream wait names ended, charged to that
    /// work (stream_waits.h); the rest to nothing the trace shows.
    void chargeDependency(const IdleGap& rec, int64_t lo, int64_t hi) {
        const StreamWait* w = rec.endingWork.valid()
                                  ? waitEndingIn(m_c, rec.endingWork.index(), rec.launch, lo, hi)
                                  : nullptr;
        const int64_t until = w ? m_s.end(w->awaited.index()) : lo;
        charge(lo, until, IdleCause::GpuDependency, w ? w->awaited : SliceId());
        charge(until, hi, IdleCause::GpuDependency, SliceId());
    }

    static void keepLargest(std::vector<CausePortion>& v, const Interval& g, int64_t ns) {
        if (v.size() < 5) {
            v.push_back({g, ns});
            return;
        }
        auto mi = std::min_element(v.begin(), v.end(), [](const CausePortion& a, const CausePortion& b) { return a.ns < b.ns; });
        if (ns > mi->ns) *mi = {g, ns};
    }

    /// True when no GPU work of the current step ran before this gap (input preparation
    /// before the step's first kernel counts as data loading).
    bool isLeadingGap(const Interval& g, std::vector<uint32_t>::const_iterator endingIt) {
        const Step* st = m_c.stepAt(g.end > 0 ? g.end - 1 : g.end);
        if (!st) return false;
        if (endingIt == m_d.work.begin()) return true;
        const uint32_t prev = *(endingIt - 1);
        const SliceId l = m_d.launch[static_cast<size_t>(endingIt - m_d.work.begin()) - 1];
        const int64_t t = l.valid() ? m_s.start[l.index()] : m_s.start[prev];
        return t < st->startNs;
    }

    void chargeThread(TrackId thread, int64_t lo, int64_t hi) {
        // Sweep the thread's slices overlapping [lo, hi) and charge each elementary
        // segment to the innermost slice covering it.
        const model::TrackInfo& tr = m_c.trace.track(thread);
        const auto b = m_s.start.begin();
        const uint32_t first = static_cast<uint32_t>(std::lower_bound(b + tr.sliceBegin, b + tr.sliceEnd, lo) - b);
        const uint32_t last = tr.sliceEnd;
        // The slices already open at `lo`: the innermost one covering it and its ancestors.
        m_stack.clear();
        SliceId open = first > tr.sliceBegin ? SliceId(first - 1) : SliceId();
        while (open.valid() && m_s.start[open.index()] + m_s.dur[open.index()] <= lo) open = m_s.parent[open.index()];
        for (SliceId a = open; a.valid(); a = m_s.parent[a.index()])
            if (m_s.start[a.index()] + m_s.dur[a.index()] > lo) m_stack.push_back(a.index());
        std::reverse(m_stack.begin(), m_stack.end());
        int64_t cur = lo;
        m_afterSync = false;
        m_gapStart = lo;
        for (uint32_t i = first; i < last && m_s.start[i] < hi; ++i) {
            const int64_t e = m_s.start[i] + m_s.dur[i];
            if (e <= lo || m_s.dur[i] == 0) continue;
            advance(cur, std::max(m_s.start[i], lo));
            m_stack.push_back(i);
        }
        advance(cur, hi);
    }

    void advance(int64_t& cur, int64_t to) {
        while (cur < to) {
            while (!m_stack.empty() && m_s.start[m_stack.back()] + m_s.dur[m_stack.back()] <= cur) m_stack.pop_back();
            if (m_stack.empty()) {
                charge(cur, to, m_afterSync ? IdleCause::HostSync : IdleCause::HostUntraced, SliceId());
                cur = to;
                return;
            }
            const uint32_t top = m_stack.back();
            const int64_t e = std::min(m_s.start[top] + m_s.dur[top], to);
            const uint8_t code = classify(top);
            // An operator's own time: dispatch while launches come close together, its CPU
            // work otherwise (the segment lies between two of the thread's launch calls).
            IdleCause cause = code == kDispatch ? (inLaunchStretch(m_s.track[top], cur, e)
                                                       ? IdleCause::LaunchOverhead
                                                       : IdleCause::CpuCompute)
                                                : static_cast<IdleCause>(code);
            // Untraced time right after a synchronising call belongs to the sync, when the
            // sync waited for the GPU: it was already waiting when the GPU went idle. A sync
            // that began with the GPU idle waited for nothing.
            if (cause == IdleCause::HostUntraced && m_afterSync) cause = IdleCause::HostSync;
            charge(cur, e, cause, SliceId(top));
            m_afterSync =
                cause == IdleCause::HostSync && (m_afterSync || m_s.start[top] <= m_gapStart);
            cur = e;
        }
    }

    /// True when [lo, hi) on `thread` lies between launch-family calls (launches, async
    /// copies, event records, stream waits) at most launchStretchMaxGapNs apart: the thread
    /// was issuing work, and what it did between the calls is their dispatch. Before the
    /// thread's first call (after its last), the segment's own start (end) stands in for the
    /// missing call. (Thresholds::launchStretchMaxGapNs.)
    bool inLaunchStretch(TrackId thread, int64_t lo, int64_t hi) {
        const std::vector<Interval>& calls = launchCalls(thread);
        if (calls.empty()) return false;
        // The first call starting at or after hi, and the last one ending at or before lo (a
        // zero-length call inside the segment, which does not split it, is neither).
        // Segments come in time order: the search goes on from the last one's answer.
        size_t at = m_callsAt <= calls.size() ? m_callsAt : 0;
        if (at > 0 && calls[at - 1].start >= hi)
            at = size_t(
                std::lower_bound(calls.begin(), calls.end(), hi,
                                 [](const Interval& iv, int64_t t) { return iv.start < t; }) -
                calls.begin());
        while (at < calls.size() && calls[at].start < hi) ++at;
        m_callsAt = at;
        const auto next = calls.begin() + long(at);
        // Calls starting after lo lie in the segment (zero-length) or after it: step back over
        // them to the last one starting at or before lo.
        auto prev = next;
        while (prev != calls.begin() && std::prev(prev)->start > lo) --prev;
        int64_t before = lo;
        bool any = next != calls.end();
        for (int n = 0; prev != calls.begin() && n < 8; ++n) {
            --prev;
            if (prev->end <= lo) {
                before = prev->end;
                any = true;
                break;
            }
        }
        const int64_t after = next == calls.end() ? hi : next->start;
        if (!any) return false;
        return after - before <= m_c.options.thresholds.launchStretchMaxGapNs;
    }

    const std::vector<Interval>& launchCalls(TrackId thread) {
        if (m_lastCalls && m_lastCallsTrack == thread.index()) return *m_lastCalls;
        auto [it, added] = m_launchCalls.try_emplace(thread.index());
        m_lastCallsTrack = thread.index();
        m_lastCalls = &it->second;
        m_callsAt = 0; // another thread: the search starts afresh
        if (added) {
            const model::TrackInfo& tr = m_c.trace.track(thread);
            size_t n = 0; // reserved at their number: on huge pages, not grown by copies
            for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
                n += m_c.is(i, static_cast<NameClass>(kNcLaunch | kNcStream)) &&
                     isLaunchSide(m_s.kind[i]);
            reserveHuge(it->second, n);
            for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
                if (m_c.is(i, static_cast<NameClass>(kNcLaunch | kNcStream)) &&
                    isLaunchSide(m_s.kind[i]))
                    it->second.push_back({m_s.start[i], m_s.start[i] + m_s.dur[i]});
        }
        return it->second;
    }

    void charge(int64_t lo, int64_t hi, IdleCause cause, SliceId slice) {
        if (hi <= lo) return;
        const int64_t len = hi - lo;
        const size_t k = idx(cause);
        m_out.causes[k].ns += len;
        m_gapCause[k] += len;
        // Charges come in time order: one that starts inside the last interval of its cause
        // extends it (the union is the same; the lists are merged at the end all the same).
        Intervals& mine = m_out.intervals[k];
        if (!mine.empty() && lo >= mine.back().start && lo <= mine.back().end)
            mine.back().end = std::max(mine.back().end, hi);
        else
            mine.push_back({lo, hi});
        if (slice.valid()) waited(k, m_s.name[slice.index()]) += len;
        // Per-step accounting, split at tile boundaries, from the last tile starting at or
        // before lo (or the first): charges come in time order, so found from the last one.
        if (lo < m_tileFrom) m_tileAt = 0;
        m_tileFrom = lo;
        while (m_tileAt + 1 < m_tiles.size() && m_tiles[m_tileAt + 1].start <= lo) ++m_tileAt;
        auto t = m_tiles.begin() + long(m_tileAt);
        for (; t != m_tiles.end() && t->start < hi; ++t) {
            const int64_t part = std::min(hi, t->end) - std::max(lo, t->start);
            if (part > 0) m_perStep[static_cast<size_t>(t - m_tiles.begin())][k] += part;
        }
    }

    /// m_out.waitedFor[cause][name], its map looked up once per name (map entries stay put).
    int64_t& waited(size_t cause, StringId name) {
        std::vector<int64_t*>& byName = m_waited[cause];
        if (byName.empty()) byName.assign(m_c.trace.strings().size(), nullptr);
        int64_t*& p = byName[name.index()];
        if (!p) p = &m_out.waitedFor[cause][name];
        return *p;
    }

    /// The cause of time whose innermost slice is `s`, or kDispatch (resolved per segment).
    uint8_t classify(uint32_t s) {
        // Memo per slice (and per "leading gap" flag): code + 1, 0 = not computed yet.
        std::vector<uint8_t>& memo = m_memo[m_leading ? 1 : 0];
        if (memo.empty()) assignHuge(memo, m_s.size(), uint8_t(0));
        if (memo[s]) return uint8_t(memo[s] - 1);
        const uint8_t c = classifyChain(s);
        memo[s] = uint8_t(c + 1);
        return c;
    }

    bool enclosedBySyncOp(uint32_t s) const {
        SliceId p = m_s.parent[s];
        for (int hops = 0; p.valid() && hops < 4; ++hops, p = m_s.parent[p.index()])
            if (m_c.is(p.index(), kNcSync)) return true;
        return false;
    }

    /// A copy call that moves pageable memory (or blocks by design).
    bool isBlockingCopyCall(uint32_t s) const {
        const uint32_t nc = m_c.nameClass(s);
        if (nc & kNcSyncCopy) return true;
        if (!(nc & kNcCopy)) return false;
        for (const CorrelationEntry& g : m_c.gpuWorkOf(s)) {
            const CopyInfo ci = parseCopyName(m_c.trace.str(m_s.name[g.slice.index()]));
            if (ci.src == MemoryKind::Pageable || ci.dst == MemoryKind::Pageable) return true;
        }
        return false;
    }

    /// A run-time code generation range of an operator kind (a TorchScript fusion group, its
    /// fallback) is code generation when it holds the host: it lasts kJitHoldNs or more and
    /// its launch calls take under a tenth of it. Otherwise it is the fused code running.
    bool jitHoldsHost(uint32_t a) const {
        if (isLaunchSide(m_s.kind[a]) || m_c.is(a, kNcCompile)) return true;
        const int64_t end = m_s.start[a] + m_s.dur[a];
        if (m_s.dur[a] < kJitHoldNs) return false;
        const model::TrackInfo& tr = m_c.trace.track(m_s.track[a]);
        int64_t launches = 0;
        for (uint32_t i = a + 1; i < tr.sliceEnd && m_s.start[i] < end; ++i)
            if (m_c.is(i, static_cast<NameClass>(kNcLaunch | kNcStream)) &&
                isLaunchSide(m_s.kind[i]))
                launches = model::satAdd(launches, m_s.dur[i]);
        return model::satMul(launches, 10) < m_s.dur[a];
    }

    uint8_t classifyChain(uint32_t innermost) const {
        constexpr auto code = [](IdleCause c) { return static_cast<uint8_t>(c); };
        for (SliceId a(innermost); a.valid(); a = m_s.parent[a.index()]) {
            const uint32_t i = a.index();
            const uint32_t nc = m_c.nameClass(i);
            if ((nc & kNcDataLoader) || (m_leading && (nc & kNcInputPrep) && !m_c.launchesGpu[i]))
                return code(IdleCause::DataLoading);
            if ((nc & kNcSync) || m_s.kind[i] == EventKind::CudaSync)
                return code(IdleCause::HostSync);
            if (isBlockingCopyCall(i))
                return code(enclosedBySyncOp(i) ? IdleCause::HostSync : IdleCause::BlockingCopy);
            if (nc & kNcAlloc) return code(IdleCause::Allocator);
            if ((nc & kNcSetupCall) || m_c.isSlowFirstUse(i)) return code(IdleCause::Setup);
            if ((nc & kNcJit) && jitHoldsHost(i)) return code(IdleCause::Jit);
            if (nc & (kNcLaunch | kNcStream)) return code(IdleCause::LaunchOverhead);
            if (nc & kNcOptimizer) return code(IdleCause::OptimizerCpu);
            if (nc & kNcIo) return code(IdleCause::IoLoggingCheckpoint);
        }
        // No specific rule: a user range (or the step range itself) with nothing inside is
        // untraced Python; an operator that dispatches GPU work, or a runtime call, is
        // dispatch (kDispatch: launch overhead between close launches, CPU work otherwise);
        // anything else is CPU work.
        if (m_s.kind[innermost] == EventKind::UserAnnotation || m_c.is(innermost, kNcProfilerStep))
            return code(IdleCause::HostUntraced);
        if (isLaunchSide(m_s.kind[innermost])) return kDispatch;
        for (SliceId a(innermost); a.valid(); a = m_s.parent[a.index()]) {
            const uint32_t i = a.index();
            if (m_s.kind[i] != EventKind::CpuOp || m_c.is(i, kNcProfilerStep)) continue;
            return m_c.launchesGpu[i] ? kDispatch : code(IdleCause::CpuCompute);
        }
        return code(IdleCause::CpuCompute);
    }

    const Context& m_c;
    const DeviceActivity& m_d;
    const SliceTable& m_s;
    const std::vector<Interval>& m_tiles;
    std::vector<std::array<int64_t, kIdleCauseCount>>& m_perStep;
    IdleBreakdown m_out;
    std::array<int64_t, kIdleCauseCount> m_gapCause{};
    std::vector<uint32_t> m_stack;
    std::array<std::vector<uint8_t>, 2> m_memo;
    std::map<uint32_t, std::vector<Interval>> m_launchCalls; // by track: launch-family calls
    const std::vector<Interval>* m_lastCalls = nullptr;      // the last thread's (entries stay put)
    uint32_t m_lastCallsTrack = 0;
    size_t m_callsAt = 0; // inLaunchStretch(): the last answer's position in m_lastCalls
    std::array<std::vector<int64_t*>, kIdleCauseCount> m_waited;
    size_t m_workAt = 0;            // gap(): the ending work of the last gap
    size_t m_tileAt = 0;            // charge(): the tile of the last charge
    int64_t m_tileFrom = INT64_MIN; // ... and its start
    bool m_leading = false;
    bool m_afterSync = false;
    int64_t m_gapStart = 0;
};

} // namespace

IdleBreakdown attributeIdle(const Context& c, const DeviceActivity& d, const std::vector<Interval>& tiles,
                            std::vector<std::array<int64_t, kIdleCauseCount>>& perStep) {
    perStep.assign(tiles.size(), {});
    return Attributor(c, d, tiles, perStep).run();
}

HostOnlyBreakdown hostOnlyBreakdown(const Context& c, const std::vector<Interval>& tiles) {
    HostOnlyBreakdown h;
    h.thread = c.trace.slices().track[c.steps.front().slice.index()];
    DeviceActivity host;  // no work: the whole window is one gap, charged along h.thread
    host.device = -1;
    host.mainLaunchThread = h.thread;
    std::vector<std::array<int64_t, kIdleCauseCount>> perStep;
    h.time = attributeIdle(c, host, tiles, perStep);
    h.windowNs = h.time.idleNs;
    for (size_t i = 0; i < c.steps.size() && i < perStep.size(); ++i) {
        StepMetrics m;
        m.number = c.steps[i].number;
        m.startNs = c.steps[i].startNs;
        m.endNs = c.steps[i].endNs;
        m.idleByCause = perStep[i];
        h.steps.push_back(m);
    }
    return h;
}

} // namespace stallscope::analysis::detail
