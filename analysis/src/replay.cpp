// The what-if replay: the window replayed in recorded order as a dependency graph, with the
// host's time shifted by what each fix removes (docs/analysis.md "What-if replay").
//
// Host side: one clock shift for the launching threads together (PyTorch's threads hand
// work to each other: the main thread waits while the autograd thread runs backward), moved
// by edits (a fix shortens an interval) and by waits (a call that returned when GPU work
// ended returns, in the replay, when that work ends there). GPU side: each item starts at
// the latest of its launch's end, its stream predecessor's end and the end of the item on
// another stream it waited for, plus the gap measured to the constraint that bound it.
#include "replay.h"

#include "detectors.h"
#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/model/copy_kind.h"

#include <algorithm>
#include <climits>
#include <map>
#include <span>
#include <unordered_map>

namespace stallscope::analysis {

std::string_view fixName(Fix f) {
    switch (f) {
    case Fix::InputPipeline: return "input_pipeline";
    case Fix::PinnedCopies: return "pinned_copies";
    case Fix::RemoveSyncs: return "remove_syncs";
    case Fix::CudaGraphs: return "cuda_graphs";
    case Fix::MixedPrecision: return "mixed_precision";
    case Fix::OverlapComm: return "overlap_comm";
    case Fix::LogLessOften: return "log_less_often";
    case Fix::Count: break;
    }
    return "none";
}

std::string_view fixDescription(Fix f) {
    switch (f) {
    case Fix::InputPipeline: return "data loading in workers";
    case Fix::PinnedCopies: return "pinned, non-blocking copies";
    case Fix::RemoveSyncs: return "no host syncs in the step";
    case Fix::CudaGraphs: return "CUDA Graphs (launch cost ~1 us per kernel)";
    case Fix::MixedPrecision: return "FP32 matmuls on Tensor Cores (2x)";
    case Fix::OverlapComm: return "communication overlapped";
    case Fix::LogLessOften: return "logging/checkpointing every N steps";
    case Fix::Count: break;
    }
    return "none";
}

int64_t replayWindowNs(const model::Trace& trace, const AnalysisOptions& options, int32_t device,
                       FixSet fixes) {
    detail::Context c(trace, options);
    const detail::DeviceActivity* dev = nullptr;
    for (const auto& d : c.devices)
        if (d.device == device) dev = &d;
    if (device >= 0 && !dev) return -1;
    detail::Replay r(c, dev, 1.0);
    return r.run(fixes);
}

namespace detail {

using namespace model;

namespace {
constexpr int64_t kWakeNs = 50'000;     // a wait returns within this after the work it waited for
constexpr int64_t kGraphNodeNs = 1'000; // host cost per kernel of a CUDA Graph replay
constexpr int64_t kDefaultLatencyNs = 5'000;
constexpr int64_t kMaxLatencyNs = 50'000;
constexpr int kDepScan = 16;
} // namespace

Replay::Replay(const Context& c, const DeviceActivity* dev, double commKeep)
    : m_c(c), m_commKeep(commKeep) {
    build(dev);
}

bool Replay::active(int32_t edit, FixSet fixes) const {
    const Edit& e = m_edits[static_cast<size_t>(edit)];
    if (!(fixes & fixBit(e.fix))) return false;
    return e.parent < 0 || !active(e.parent, fixes);
}

void Replay::build(const DeviceActivity* dev) {
    const Context& c = m_c;
    const SliceTable& s = c.trace.slices();
    m_w0 = c.window.startNs;
    const int64_t w1 = c.window.endNs;
    if (c.window.length() <= 0) return;

    // The step thread, and where the last step ends (the host side of the window's end).
    TrackId mainThread;
    for (const Step& st : c.steps)
        if (st.startNs >= m_w0 && st.endNs <= w1) {
            mainThread = s.track[st.slice.index()];
            m_probe = std::max(m_probe, st.endNs);
        }
    if (!dev && m_probe == INT64_MIN) return;
    if (!mainThread.valid() && dev) mainThread = dev->mainLaunchThread;
    std::unordered_map<uint32_t, int32_t> threadOf; // track index -> replay thread
    std::vector<TrackId> threads;
    auto threadIndex = [&](TrackId t) {
        auto [it, added] = threadOf.emplace(t.index(), int32_t(threads.size()));
        if (added) threads.push_back(t);
        return it->second;
    };
    if (mainThread.valid()) threadIndex(mainThread);

    // ---- GPU items
    std::unordered_map<uint32_t, int32_t> streamOf;
    std::vector<int32_t> lastOnStream;
    std::map<uint32_t, Precision> opPrecision;
    size_t budget = 256;
    const int64_t launchLimit = m_probe != INT64_MIN ? m_probe : w1;
    if (dev) {
        for (size_t k = 0; k < dev->work.size(); ++k) {
            const uint32_t w = dev->work[k];
            const int64_t st = s.start[w], en = s.end(w);
            if (en < m_w0 || st >= w1) continue;
            const SliceId launch = dev->launch[k];
            Item it{};
            it.start = st;
            it.dur = en - st;
            it.launchEnd = INT64_MIN;
            it.fixedTime = st < m_w0;
            if (launch.valid()) {
                const int64_t la = s.start[launch.index()], le = s.end(launch.index());
                if (la > launchLimit)
                    continue; // launched after the last step: not the window's work
                it.launchEnd = le;
                if (la >= m_w0 && !it.fixedTime)
                    it.launchThread = threadIndex(s.track[launch.index()]);
            }
            const auto [sit, added] = streamOf.emplace(s.track[w].index(), m_streams);
            if (added) {
                ++m_streams;
                lastOnStream.push_back(-1);
            }
            it.stream = sit->second;
            it.prev = lastOnStream[static_cast<size_t>(it.stream)];
            lastOnStream[static_cast<size_t>(it.stream)] = int32_t(m_items.size());
            it.comm = c.is(w, kNcComm);
            if (s.kind[w] == EventKind::Kernel && c.is(w, kNcGemm) && !c.is(w, kNcTensorCore))
                it.fp32Matmul =
                    c.is(w, kNcFp32Matmul) ||
                    (!c.is(w, kNcPrecisionNamed) &&
                     kernelOperatorPrecision(c, w, opPrecision, budget) == Precision::FP32);
            m_items.push_back(it);
        }
    }
    m_threads = int32_t(threads.size());

    // The GPU's own start latency after a launch, measured where the GPU waited for it.
    std::vector<int64_t> lat;
    for (const Item& it : m_items) {
        if (it.launchEnd == INT64_MIN || it.start < it.launchEnd) continue;
        const int64_t prevEnd = it.prev >= 0
                                    ? m_items[size_t(it.prev)].start + m_items[size_t(it.prev)].dur
                                    : INT64_MIN;
        if (it.launchEnd >= prevEnd) lat.push_back(it.start - it.launchEnd);
    }
    // The lower quartile: items that waited for another stream as well inflate the rest.
    int64_t latency = kDefaultLatencyNs;
    if (!lat.empty()) {
        std::nth_element(lat.begin(), lat.begin() + long(lat.size() / 4), lat.end());
        latency = std::min(lat[lat.size() / 4], kMaxLatencyNs);
    }

    // Items by end, to find what a wait or a late start waited for.
    std::vector<std::pair<int64_t, uint32_t>> byEnd;
    byEnd.reserve(m_items.size());
    for (uint32_t i = 0; i < m_items.size(); ++i)
        byEnd.emplace_back(m_items[i].start + m_items[i].dur, i);
    std::sort(byEnd.begin(), byEnd.end());
    // The latest item ending in [lo, hi] (on another stream than `notStream` when >= 0) that
    // comes before `before` in start order.
    auto latestEnding = [&](int64_t lo, int64_t hi, int32_t notStream, uint32_t before) -> int32_t {
        auto itr = std::upper_bound(byEnd.begin(), byEnd.end(), std::make_pair(hi, UINT32_MAX));
        for (int n = 0; itr != byEnd.begin() && n < kDepScan; ++n) {
            --itr;
            if (itr->first < lo) break;
            const Item& j = m_items[itr->second];
            if (itr->second < before && (notStream < 0 || j.stream != notStream))
                return int32_t(itr->second);
        }
        return -1;
    };

    for (uint32_t i = 0; i < m_items.size(); ++i) {
        Item& it = m_items[i];
        if (it.fixedTime) continue;
        const int64_t prevEnd = it.prev >= 0
                                    ? m_items[size_t(it.prev)].start + m_items[size_t(it.prev)].dur
                                    : INT64_MIN;
        const int64_t base = std::max(it.launchEnd, prevEnd);
        if (base != INT64_MIN && it.start - base > latency + 5'000) {
            it.dep = latestEnding(base, it.start, it.stream, i);
        }
        const int64_t depEnd =
            it.dep >= 0 ? m_items[size_t(it.dep)].start + m_items[size_t(it.dep)].dur : INT64_MIN;
        const int64_t binding = std::max(base, depEnd);
        auto gap = [&](int64_t constraint) {
            const int64_t g = it.start - constraint;
            return constraint == binding ? g : std::min(g, latency);
        };
        if (it.launchEnd != INT64_MIN) it.gapLaunch = gap(it.launchEnd);
        if (prevEnd != INT64_MIN) it.gapStream = gap(prevEnd);
        if (depEnd != INT64_MIN) it.gapDep = gap(depEnd);
    }

    // First launch of each step on the step thread: input preparation before it is the
    // step's data loading (the leading-gap rule of the idle attribution).
    std::unordered_map<const Step*, int64_t> firstLaunch;
    for (const Item& it : m_items)
        if (it.launchThread == 0 && dev)
            if (const Step* st = c.stepAt(it.launchEnd)) {
                auto [f, added] = firstLaunch.emplace(st, it.launchEnd);
                if (!added) f->second = std::min(f->second, it.launchEnd);
            }

    // ---- host edits and waits, per replayed thread
    for (int32_t ti = 0; ti < m_threads; ++ti) {
        const TrackId track = threads[size_t(ti)];
        const auto [first, last] = c.trace.sliceRange(track);
        const uint32_t begin = c.trace.firstSliceEndingAtOrAfter(track, m_w0);
        const size_t n = last > begin ? last - begin : 0;
        std::vector<int32_t> outerEdit(n, -1), outerOp(n, -1);
        std::vector<int32_t> launches(n, 0);
        std::vector<uint8_t> hasSync(n, 0), inSync(n, 0);
        for (uint32_t i = begin; i < last && s.start[i] < w1; ++i) {
            const size_t li = i - begin;
            const SliceId p = s.parent[i];
            const int64_t pl = p.valid() && p.index() >= begin ? int64_t(p.index() - begin) : -1;
            const int32_t inEdit = pl >= 0 ? outerEdit[size_t(pl)] : -1;
            const int32_t inOp = pl >= 0 ? outerOp[size_t(pl)] : -1;
            const int64_t a = std::max(s.start[i], m_w0), b = std::min(s.end(i), w1);
            outerEdit[li] = inEdit;
            outerOp[li] = inOp;
            if (b <= a && s.dur[i] > 0) continue;
            if (inEdit < 0) {
                Fix fix = Fix::Count;
                if (c.is(i, kNcDataLoader))
                    fix = Fix::InputPipeline;
                else if (c.is(i, kNcIo))
                    fix = Fix::LogLessOften;
                else if (ti == 0 && dev && c.is(i, kNcInputPrep)) {
                    const Step* st = c.stepAt(s.start[i]);
                    const auto f = st ? firstLaunch.find(st) : firstLaunch.end();
                    if (st && (f == firstLaunch.end() || s.end(i) <= f->second))
                        fix = Fix::InputPipeline;
                }
                if (fix != Fix::Count) {
                    outerEdit[li] = int32_t(m_edits.size());
                    m_edits.push_back({a, b, 0, fix, ti, -1});
                    continue; // its inside goes with it
                }
            }
            if (inOp < 0 && s.kind[i] == EventKind::CpuOp && c.launchesGpu[i])
                outerOp[li] = int32_t(li);
            if (!dev) continue;
            const auto work = isLaunchSide(s.kind[i]) ? c.trace.gpuWorkOf(SliceId(i))
                                                      : std::span<const CorrelationEntry>();
            if (!work.empty()) {
                if (outerOp[li] >= 0)
                    launches[size_t(outerOp[li])] += int32_t(work.size());
                else if (b - a > kGraphNodeNs)
                    m_edits.push_back(
                        {a, b, kGraphNodeNs * int64_t(work.size()), Fix::CudaGraphs, ti, inEdit});
            }
            // A wait: a synchronising call or operator (.item(), synchronize), or a copy call,
            // during which GPU work ended and that returned right after. The outermost one.
            inSync[li] = pl >= 0 ? inSync[size_t(pl)] : 0;
            const bool syncLike =
                (c.nameClass(i) & kNcSync) ||
                (isLaunchSide(s.kind[i]) && (c.nameClass(i) & (kNcSyncCopy | kNcCopy)));
            if (!syncLike || inSync[li] || s.kind[i] == EventKind::CudaSync) continue;
            const int32_t j =
                latestEnding(std::max(a, s.end(i) - kWakeNs), s.end(i), -1, UINT32_MAX);
            if (j < 0 || m_items[size_t(j)].fixedTime) continue;
            const int64_t jEnd = m_items[size_t(j)].start + m_items[size_t(j)].dur;
            bool h2d = false;
            for (const auto& wk : work)
                h2d |= s.kind[wk.slice.index()] == EventKind::Memcpy &&
                       parseCopyName(c.trace.str(s.name[wk.slice.index()])).direction ==
                           CopyDirection::HtoD;
            m_syncs.push_back({a, b, b - jEnd, b - jEnd, uint32_t(j),
                               h2d ? Fix::PinnedCopies : Fix::RemoveSyncs, inEdit});
            inSync[li] = 1;
            if (outerOp[li] >= 0) hasSync[size_t(outerOp[li])] = 1;
        }
        // Dispatching operators: under CUDA Graphs their host time is the graph's per-kernel cost.
        for (size_t li = 0; li < n; ++li) {
            if (outerOp[li] != int32_t(li) || hasSync[li] || launches[li] == 0) continue;
            const uint32_t i = begin + uint32_t(li);
            const int64_t a = std::max(s.start[i], m_w0), b = std::min(s.end(i), w1);
            const int64_t len = std::min(b - a, kGraphNodeNs * int64_t(launches[li]));
            if (b - a > len) m_edits.push_back({a, b, len, Fix::CudaGraphs, ti, outerEdit[li]});
        }
    }

    // ---- events in recorded order
    for (uint32_t e = 0; e < m_edits.size(); ++e) {
        m_events.push_back({m_edits[e].a, kEditStart, e});
        m_events.push_back({m_edits[e].b, kEditEnd, e});
    }
    for (uint32_t p = 0; p < m_syncs.size(); ++p) m_events.push_back({m_syncs[p].b, kSyncEnd, p});
    for (uint32_t i = 0; i < m_items.size(); ++i) {
        // A launch call that returns after its work started is mapped when the work starts.
        if (m_items[i].launchThread >= 0 && m_items[i].launchEnd <= m_items[i].start)
            m_events.push_back({m_items[i].launchEnd, kLaunchEnd, i});
        m_events.push_back({m_items[i].start, kGpuStart, i});
    }
    if (m_probe != INT64_MIN) m_events.push_back({m_probe, kProbe, 0});
    std::sort(m_events.begin(), m_events.end(), [](const Ev& x, const Ev& y) {
        if (x.t != y.t) return x.t < y.t;
        if (x.type != y.type) return x.type < y.type;
        return x.idx < y.idx;
    });
    m_valid = !m_items.empty() || m_probe != INT64_MIN;
}

int64_t Replay::run(FixSet fixes) const {
    if (!m_valid) return -1;
    int64_t delta = 0;
    std::vector<int32_t> inEdit(size_t(std::max(1, m_threads)), -1);
    std::vector<int64_t> editStart(m_edits.size(), 0);
    std::vector<int64_t> launchAt(m_items.size(), 0), endAt(m_items.size(), 0);
    std::vector<uint8_t> editOn(m_edits.size(), 0);
    for (size_t e = 0; e < m_edits.size(); ++e) editOn[e] = active(int32_t(e), fixes);
    int64_t maxEnd = INT64_MIN, probe = INT64_MIN;
    auto mapOn = [&](int32_t thread, int64_t t) -> int64_t {
        const int32_t e = thread >= 0 ? inEdit[size_t(thread)] : -1;
        if (e < 0) return t + delta;
        const Edit& ed = m_edits[size_t(e)];
        const int64_t span = ed.b - ed.a;
        return editStart[size_t(e)] +
               (span > 0 ? int64_t(double(t - ed.a) * double(ed.newLen) / double(span)) : 0);
    };
    for (const Ev& ev : m_events) {
        switch (ev.type) {
        case kEditStart:
            if (editOn[ev.idx]) {
                const Edit& ed = m_edits[ev.idx];
                editStart[ev.idx] = mapOn(ed.thread, ed.a);
                inEdit[size_t(ed.thread)] = int32_t(ev.idx);
            }
            break;
        case kEditEnd:
            if (editOn[ev.idx]) {
                const Edit& ed = m_edits[ev.idx];
                delta = editStart[ev.idx] + ed.newLen - ed.b;
                if (inEdit[size_t(ed.thread)] == int32_t(ev.idx)) inEdit[size_t(ed.thread)] = -1;
            }
            break;
        case kSyncEnd: {
            const SyncPoint& sp = m_syncs[ev.idx];
            if (sp.parent >= 0 && editOn[size_t(sp.parent)]) break;
            if (fixes & fixBit(sp.fix)) {
                delta -= (sp.b - sp.a) - sp.nonWait;
            } else {
                const int64_t a = sp.a + delta;
                delta = std::max(a + sp.nonWait, endAt[sp.awaited] + sp.wake) - sp.b;
            }
            break;
        }
        case kLaunchEnd: launchAt[ev.idx] = mapOn(m_items[ev.idx].launchThread, ev.t); break;
        case kGpuStart: {
            const Item& it = m_items[ev.idx];
            int64_t st = INT64_MIN;
            if (it.fixedTime) {
                st = it.start;
            } else {
                if (it.launchThread >= 0 && it.launchEnd > it.start)
                    launchAt[ev.idx] = mapOn(it.launchThread, it.launchEnd);
                if (it.launchEnd != INT64_MIN)
                    st = std::max(st, (it.launchThread >= 0 ? launchAt[ev.idx] : it.launchEnd) +
                                          it.gapLaunch);
                if (it.prev >= 0) st = std::max(st, endAt[size_t(it.prev)] + it.gapStream);
                if (it.dep >= 0) st = std::max(st, endAt[size_t(it.dep)] + it.gapDep);
                if (st == INT64_MIN) st = it.start + delta;
            }
            double dur = double(it.dur);
            if (!it.fixedTime) {
                if (it.fp32Matmul && (fixes & fixBit(Fix::MixedPrecision))) dur *= 0.5;
                if (it.comm && (fixes & fixBit(Fix::OverlapComm))) dur *= m_commKeep;
            }
            endAt[ev.idx] = st + int64_t(dur);
            maxEnd = std::max(maxEnd, endAt[ev.idx]);
            break;
        }
        case kProbe: probe = mapOn(0, ev.t); break;
        default: break;
        }
    }
    const int64_t end = std::max(maxEnd, probe);
    return end == INT64_MIN ? -1 : std::max<int64_t>(0, end - m_w0);
}

} // namespace detail
} // namespace stallscope::analysis
