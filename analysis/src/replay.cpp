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
#include "huge_pages.h"

#include "detectors.h"
#include "fusion_chains.h"
#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/model/copy_kind.h"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <span>
#include <unordered_map>
#include <unordered_set>

namespace stallscope::analysis {

namespace {
struct FixText {
    std::string_view name, description;
};
// By Fix value.
constexpr std::array<FixText, size_t(Fix::Count)> kFixTexts{{
    {"input_pipeline", "data loading in workers"},
    {"pinned_copies", "pinned, non-blocking copies"},
    {"remove_syncs", "no host syncs in the step"},
    {"cuda_graphs", "CUDA Graphs (launch cost ~1 us per kernel)"},
    {"mixed_precision", "FP32 matmuls on Tensor Cores (2x)"},
    {"overlap_comm", "communication overlapped"},
    {"log_less_often", "logging/checkpointing every N steps"},
    {"keep_allocations", "no allocator calls in the step"},
    {"fuse_kernels", "memory-bound kernel chains fused (torch.compile)"},
}};
} // namespace

std::string_view fixName(Fix f) {
    return f < Fix::Count ? kFixTexts[size_t(f)].name : "none";
}
std::string_view fixDescription(Fix f) {
    return f < Fix::Count ? kFixTexts[size_t(f)].description : "none";
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

/// Sorts `v` by `less` (a strict total order, so the result is unique) by merging its
/// ascending runs when there are few (through one buffer, level by level), by std::sort
/// otherwise.
template <class T, class Less> void sortByRuns(std::vector<T>& v, Less less) {
    std::vector<size_t> runs{0}; // where each ascending run starts
    for (size_t i = 1; i < v.size(); ++i)
        if (less(v[i], v[i - 1])) runs.push_back(i);
    if (runs.size() > 64) {
        std::sort(v.begin(), v.end(), less);
        return;
    }
    if (runs.size() == 1) return;
    runs.push_back(v.size());
    std::vector<T> other;
    reserveHuge(other, v.size());
    other.resize(v.size());
    while (runs.size() > 2) { // merge neighbouring runs pairwise from v into other
        std::vector<size_t> merged{0};
        size_t r = 0;
        for (; r + 2 < runs.size(); r += 2) {
            std::merge(v.begin() + long(runs[r]), v.begin() + long(runs[r + 1]),
                       v.begin() + long(runs[r + 1]), v.begin() + long(runs[r + 2]),
                       other.begin() + long(runs[r]), less);
            merged.push_back(runs[r + 2]);
        }
        if (r + 1 < runs.size()) { // an odd run left over
            std::copy(v.begin() + long(runs[r]), v.end(), other.begin() + long(runs[r]));
            merged.push_back(runs.back());
        }
        v.swap(other);
        runs = std::move(merged);
    }
}
} // namespace

Replay::Replay(const Context& c, const DeviceActivity* dev, double commKeep, FixSet wanted)
    : m_c(c), m_commKeep(commKeep) {
    build(dev, wanted);
}

bool Replay::active(int32_t edit, FixSet fixes) const {
    const Edit& e = m_edits[static_cast<size_t>(edit)];
    if (!(fixes & fixBit(e.fix))) return false;
    return e.parent < 0 || !active(e.parent, fixes);
}

/// What build()'s phases hand each other.
struct Replay::BuildState {
    std::vector<int32_t> threadOf;     // track -> replay thread
    std::vector<TrackId> threads;      // replay thread -> track
    std::vector<uint32_t> launchSlice; // per item: its launch call on a replayed thread
    size_t nStreams = 0;
    std::vector<std::vector<int32_t>> onStream; // per stream, its items in start order
    std::vector<int64_t> firstLaunch;           // by step; INT64_MAX: none
    /// The replay thread of track `t`, added at the end when new.
    int32_t threadIndex(TrackId t) {
        int32_t& i = threadOf[t.index()];
        if (i < 0) i = int32_t(threads.size()), threads.push_back(t);
        return i;
    }
};

/// One replayed thread's slices from the window's start on (slice `begin` + li), while its
/// edits and waits are found. Per slice: the outermost edit around it (-1: none), the
/// outermost dispatching operator around it (-1: none; its own index: it is one), the
/// launches of that operator (only with CUDA Graphs), whether a wait lies inside that
/// operator, whether the slice lies inside a wait.
struct Replay::ThreadScan {
    int32_t thread = 0;
    uint32_t begin = 0, last = 0; // the thread's slices read: [begin, last)
    size_t n = 0;                 // last - begin
    std::vector<int32_t> outerEdit, outerOp, launches;
    std::vector<uint8_t> hasSync, inSync;
};

void Replay::build(const DeviceActivity* dev, FixSet wanted) {
    m_w0 = m_c.window.startNs;
    if (m_c.window.length() <= 0) return;
    BuildState state;
    if (!findStepThread(dev, state)) return;
    addGpuItems(dev, wanted, state);
    measureLatency();
    linkStreams(state.nStreams);
    indexStreams(state);
    findFirstLaunches(dev, state);
    addHostEdits(dev, wanted, state);
    findLaunchEdits();
    orderHostEvents();
    m_valid = !m_items.empty() || m_probe != INT64_MIN;
}

int64_t Replay::endOf(int32_t i) const {
    return m_items[size_t(i)].start + m_items[size_t(i)].dur;
}

// The step thread, and where the last step ends (the host side of the window's end). False:
// nothing to replay (no device and no step in the window).
bool Replay::findStepThread(const DeviceActivity* dev, BuildState& state) {
    const Context& c = m_c;
    const SliceTable& s = c.trace.slices();
    const int64_t w1 = c.window.endNs;
    TrackId mainThread;
    for (const Step& st : c.steps)
        if (st.startNs >= m_w0 && st.endNs <= w1) {
            mainThread = s.track[st.slice.index()];
            m_probe = std::max(m_probe, st.endNs);
        }
    if (!dev && m_probe == INT64_MIN) return false;
    if (!mainThread.valid() && dev) mainThread = dev->mainLaunchThread;
    state.threadOf.assign(c.trace.tracks().size(), -1);
    if (mainThread.valid()) state.threadIndex(mainThread);
    return true;
}

// ---- GPU items, in start order
void Replay::addGpuItems(const DeviceActivity* dev, FixSet wanted, BuildState& state) {
    const Context& c = m_c;
    const SliceTable& s = c.trace.slices();
    const int64_t w1 = c.window.endNs;
    std::vector<int32_t> streamOf(c.trace.tracks().size(), -1); // track -> replay stream
    std::vector<int32_t> lastOnStream;
    std::map<uint32_t, Precision> opPrecision;
    std::vector<uint32_t>& launchSlice = state.launchSlice;
    size_t budget = 256;
    const bool precision = wanted & fixBit(Fix::MixedPrecision);
    const std::unordered_set<uint32_t> fused = dev && (wanted & fixBit(Fix::FuseKernels))
                                                   ? fusionChains(c, *dev, m_w0, w1).fusedAway
                                                   : std::unordered_set<uint32_t>();
    const int64_t launchLimit = m_probe != INT64_MIN ? m_probe : w1;
    if (dev) {
        reserveHuge(m_items, dev->work.size());
        reserveHuge(launchSlice, dev->work.size());
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
                // A call that returned after its work started (a synchronous copy) issued it
                // at its start.
                it.launchEnd = le <= st ? le : la;
                if (la >= m_w0 && !it.fixedTime) {
                    it.launchThread = state.threadIndex(s.track[launch.index()]);
                    launchSlice.push_back(launch.index());
                } else {
                    launchSlice.push_back(UINT32_MAX);
                }
            } else {
                launchSlice.push_back(UINT32_MAX);
            }
            int32_t& stream = streamOf[s.track[w].index()];
            if (stream < 0) stream = int32_t(lastOnStream.size()), lastOnStream.push_back(-1);
            it.stream = stream;
            it.prev = lastOnStream[static_cast<size_t>(it.stream)];
            lastOnStream[static_cast<size_t>(it.stream)] = int32_t(m_items.size());
            it.comm = c.is(w, kNcComm);
            if (s.kind[w] == EventKind::Memcpy) {
                const CopyInfo ci = parseCopyName(c.trace.str(s.name[w]));
                it.pageableH2d =
                    ci.direction == CopyDirection::HtoD && ci.src == MemoryKind::Pageable;
            }
            if (precision && s.kind[w] == EventKind::Kernel)
                it.fp32Matmul = fp32MatmulEvidence(c, w, opPrecision, budget);
            it.fusedAway = fused.count(w) > 0;
            m_items.push_back(it);
        }
    }
    state.nStreams = lastOnStream.size();
}

// The GPU's own start latency after a launch, measured where the GPU waited for it; the
// lower quartile: items that waited for another stream as well inflate the rest.
void Replay::measureLatency() {
    std::vector<int64_t> lat;
    reserveHuge(lat, m_items.size());
    for (const Item& it : m_items) {
        if (it.launchEnd == INT64_MIN || it.start < it.launchEnd) continue;
        if (it.prev < 0 || it.launchEnd >= endOf(it.prev)) lat.push_back(it.start - it.launchEnd);
    }
    int64_t latency = kDefaultLatencyNs;
    if (!lat.empty()) {
        std::nth_element(lat.begin(), lat.begin() + long(lat.size() / 4), lat.end());
        latency = std::min(lat[lat.size() / 4], kMaxLatencyNs);
    }
    m_latency = latency;
}

// Cross-stream waits and the gaps to each constraint. Per stream, the last two items
// seen in start order: the latest end on another stream before an item starts is one of
// them (a stream runs one item at a time).
void Replay::linkStreams(size_t nStreams) {
    const int64_t latency = m_latency;
    std::vector<std::array<int32_t, 2>> recent(nStreams, {-1, -1});
    for (uint32_t i = 0; i < m_items.size(); ++i) {
        Item& it = m_items[i];
        if (!it.fixedTime) {
            const int64_t prevEnd = it.prev >= 0 ? endOf(it.prev) : INT64_MIN;
            const int64_t base = std::max(it.launchEnd, prevEnd);
            if (base != INT64_MIN && it.start - base > latency + 5'000) {
                int64_t best = INT64_MIN;
                for (size_t k = 0; k < nStreams; ++k) {
                    if (int32_t(k) == it.stream) continue;
                    for (int32_t j : recent[k]) {
                        if (j < 0) continue;
                        const int64_t e = endOf(j);
                        if (e >= base && e <= it.start && e > best) best = e, it.dep = j;
                    }
                }
            }
            const int64_t depEnd = it.dep >= 0 ? endOf(it.dep) : INT64_MIN;
            const int64_t binding = std::max(base, depEnd);
            auto gap = [&](int64_t constraint) {
                const int64_t g = it.start - constraint;
                return constraint == binding ? g : std::min(g, latency);
            };
            if (it.launchEnd != INT64_MIN) it.gapLaunch = gap(it.launchEnd);
            if (prevEnd != INT64_MIN) it.gapStream = gap(prevEnd);
            if (depEnd != INT64_MIN) it.gapDep = gap(depEnd);
        }
        auto& r = recent[size_t(it.stream)];
        r[0] = r[1];
        r[1] = int32_t(i);
    }
}

// Per stream, its items in start order: a stream runs one item at a time, so the item
// of a stream that ended last by `hi` is its last one started by then, or the one before.
void Replay::indexStreams(BuildState& state) const {
    std::vector<std::vector<int32_t>>& onStream = state.onStream;
    onStream.resize(state.nStreams);
    for (uint32_t i = 0; i < m_items.size(); ++i)
        onStream[size_t(m_items[i].stream)].push_back(int32_t(i));
}

// The item that ended last in [lo, hi] (-1: none), from the items per stream (indexStreams).
int32_t Replay::latestEnding(const BuildState& state, int64_t lo, int64_t hi) const {
    int32_t best = -1;
    for (const auto& v : state.onStream) {
        auto itr = std::upper_bound(v.begin(), v.end(), hi, [this](int64_t t, int32_t x) {
            return t < m_items[size_t(x)].start;
        });
        for (int n = 0; itr != v.begin() && n < 2; ++n) {
            --itr;
            const int64_t e = endOf(*itr);
            if (e <= hi) {
                if (e >= lo && (best < 0 || e > endOf(best))) best = *itr;
                break;
            }
        }
    }
    return best;
}

// First launch of each step on the step thread: input preparation before it is the
// step's data loading (the leading-gap rule of the idle attribution).
void Replay::findFirstLaunches(const DeviceActivity* dev, BuildState& state) const {
    const Context& c = m_c;
    std::vector<int64_t>& firstLaunch = state.firstLaunch;
    firstLaunch.assign(c.steps.size(), INT64_MAX);
    for (const Item& it : m_items)
        if (it.launchThread == 0 && dev)
            if (const Step* st = c.stepAt(it.launchEnd)) {
                int64_t& f = firstLaunch[size_t(st - c.steps.data())];
                f = std::min(f, it.launchEnd);
            }
}

// ---- host edits and waits, per replayed thread
void Replay::addHostEdits(const DeviceActivity* dev, FixSet wanted, const BuildState& state) {
    const Context& c = m_c;
    m_threads = int32_t(state.threads.size());
    const bool graphs = wanted & fixBit(Fix::CudaGraphs);
    for (int32_t ti = 0; ti < m_threads; ++ti) {
        const TrackId track = state.threads[size_t(ti)];
        const auto [first, last] = c.trace.sliceRange(track);
        ThreadScan t;
        t.thread = ti;
        t.begin = c.trace.firstSliceEndingAtOrAfter(track, m_w0);
        t.last = last;
        t.n = last > t.begin ? last - t.begin : 0;
        const size_t n = t.n;
        assignHuge(t.outerEdit, n, -1);
        assignHuge(t.outerOp, n, -1);
        assignHuge(t.launches, graphs ? n : 0, 0); // only read with CUDA Graphs
        assignHuge(t.hasSync, n, uint8_t(0));
        assignHuge(t.inSync, n, uint8_t(0));
        // Room for an edit per second slice (a dispatching operator and its launch call),
        // reserved once rather than grown by copies; more still fits, by growing.
        if (graphs) growHuge(m_edits, m_edits.size() + n / 2 + 16);
        addThreadEditsAndWaits(dev, wanted, state, t);
        if (graphs) addGraphEdits(state, t);
    }
}

// The edits and waits of one replayed thread, in its recorded order: the outermost
// interval a fix shortens, and the outermost call that waited for GPU work.
void Replay::addThreadEditsAndWaits(const DeviceActivity* dev, FixSet wanted,
                                    const BuildState& state, ThreadScan& t) {
    const Context& c = m_c;
    const SliceTable& s = c.trace.slices();
    const int64_t w1 = c.window.endNs;
    const bool graphs = wanted & fixBit(Fix::CudaGraphs);
    const int32_t ti = t.thread;
    const uint32_t begin = t.begin, last = t.last;
    std::vector<int32_t>& outerEdit = t.outerEdit;
    std::vector<int32_t>& outerOp = t.outerOp;
    std::vector<uint8_t>& hasSync = t.hasSync;
    std::vector<uint8_t>& inSync = t.inSync;
    for (uint32_t i = begin; i < last && s.start[i] < w1; ++i) {
        const size_t li = i - begin;
        const SliceId p = s.parent[i];
        const int64_t pl = p.valid() && p.index() >= begin ? int64_t(p.index() - begin) : -1;
        const int32_t inEdit = pl >= 0 ? outerEdit[size_t(pl)] : -1;
        const int32_t inOp = pl >= 0 ? outerOp[size_t(pl)] : -1;
        inSync[li] = pl >= 0 ? inSync[size_t(pl)] : 0;
        const int64_t a = std::max(s.start[i], m_w0), b = std::min(s.end(i), w1);
        outerEdit[li] = inEdit;
        outerOp[li] = inOp;
        if (b <= a && s.dur[i] > 0) continue;
        const uint32_t nc = c.nameClass(i);
        if (inEdit < 0) {
            Fix fix = Fix::Count;
            if (nc & kNcDataLoader)
                fix = Fix::InputPipeline;
            else if (nc & kNcIo)
                fix = Fix::LogLessOften;
            else if ((nc & kNcAlloc) && isLaunchSide(s.kind[i]))
                fix = Fix::KeepAllocations; // the allocator keeps its memory: no call
            else if (ti == 0 && dev && (nc & kNcInputPrep) && !c.launchesGpu[i]) {
                const Step* st = c.stepAt(s.start[i]);
                if (st && s.end(i) <= state.firstLaunch[size_t(st - c.steps.data())])
                    fix = Fix::InputPipeline;
            }
            if (fix != Fix::Count && (wanted & fixBit(fix))) {
                outerEdit[li] = int32_t(m_edits.size());
                m_edits.push_back({a, b, 0, fix, ti, -1});
                continue; // its inside goes with it
            }
        }
        if (graphs && inOp < 0 && s.kind[i] == EventKind::CpuOp && c.launchesGpu[i])
            outerOp[li] = int32_t(li);
        if (!dev) continue;
        const bool launchSide = isLaunchSide(s.kind[i]);
        const auto work = launchSide && (nc & (kNcSyncCopy | kNcCopy))
                              ? c.gpuWorkOf(i)
                              : std::span<const CorrelationEntry>();
        // A wait: a synchronising call or operator (.item(), synchronize), or a copy call,
        // during which GPU work ended and that returned right after. The outermost one.
        const bool syncLike = (nc & kNcSync) || (launchSide && (nc & (kNcSyncCopy | kNcCopy)));
        if (!syncLike || inSync[li] || s.kind[i] == EventKind::CudaSync) continue;
        const int32_t j = latestEnding(state, std::max(a, s.end(i) - kWakeNs), s.end(i));
        if (j < 0 || m_items[size_t(j)].fixedTime) continue;
        bool h2d = false;
        for (const auto& wk : work)
            h2d |= s.kind[wk.slice.index()] == EventKind::Memcpy &&
                   parseCopyName(c.trace.str(s.name[wk.slice.index()])).direction ==
                       CopyDirection::HtoD;
        m_syncs.push_back(
            {a, b, b - endOf(j), uint32_t(j), h2d ? Fix::PinnedCopies : Fix::RemoveSyncs, inEdit});
        inSync[li] = 1;
        if (outerOp[li] >= 0) hasSync[size_t(outerOp[li])] = 1;
    }
}

// Dispatching operators: under CUDA Graphs their host time is the graph's per-kernel
// cost; a launch call outside any operator costs that itself.
void Replay::addGraphEdits(const BuildState& state, ThreadScan& t) {
    const Context& c = m_c;
    const SliceTable& s = c.trace.slices();
    const int64_t w1 = c.window.endNs;
    const int32_t ti = t.thread;
    const uint32_t begin = t.begin;
    const size_t n = t.n;
    const std::vector<int32_t>& outerEdit = t.outerEdit;
    const std::vector<int32_t>& outerOp = t.outerOp;
    std::vector<int32_t>& launches = t.launches;
    std::vector<int32_t> direct;
    assignHuge(direct, n, 0);
    for (size_t k = 0; k < m_items.size(); ++k) {
        const uint32_t l = state.launchSlice[k];
        if (m_items[k].launchThread != ti || l < begin || l >= begin + n) continue;
        const size_t li = l - begin;
        if (outerOp[li] >= 0)
            ++launches[size_t(outerOp[li])];
        else if (outerEdit[li] < 0 || m_edits[size_t(outerEdit[li])].fix != Fix::CudaGraphs)
            ++direct[li];
    }
    for (size_t li = 0; li < n; ++li) {
        if (!direct[li]) continue;
        const uint32_t i = begin + uint32_t(li);
        const int64_t a = std::max(s.start[i], m_w0), b = std::min(s.end(i), w1);
        if (b - a > kGraphNodeNs * direct[li])
            m_edits.push_back(
                {a, b, kGraphNodeNs * int64_t(direct[li]), Fix::CudaGraphs, ti, outerEdit[li]});
    }
    for (size_t li = 0; li < n; ++li) {
        if (outerOp[li] != int32_t(li) || t.hasSync[li] || launches[li] == 0) continue;
        const uint32_t i = begin + uint32_t(li);
        const int64_t a = std::max(s.start[i], m_w0), b = std::min(s.end(i), w1);
        const int64_t len = std::min(b - a, kGraphNodeNs * int64_t(launches[li]));
        if (b - a > len) m_edits.push_back({a, b, len, Fix::CudaGraphs, ti, outerEdit[li]});
    }
}

// The innermost edit around each launch constraint (edits of one thread nest at most
// two deep: a dispatching operator or launch inside a DataLoader/logging range).
void Replay::findLaunchEdits() {
    std::vector<std::vector<int32_t>> editsOf(size_t(std::max(1, m_threads)));
    for (uint32_t e = 0; e < m_edits.size(); ++e)
        editsOf[size_t(m_edits[e].thread)].push_back(int32_t(e));
    for (auto& v : editsOf)
        std::sort(v.begin(), v.end(), [this](int32_t x, int32_t y) {
            return m_edits[size_t(x)].a < m_edits[size_t(y)].a;
        });
    for (Item& it : m_items) {
        if (it.launchThread < 0) continue;
        const auto& v = editsOf[size_t(it.launchThread)];
        auto e = std::upper_bound(v.begin(), v.end(), it.launchEnd, [this](int64_t t, int32_t x) {
            return t < m_edits[size_t(x)].a;
        });
        // Scan back over the edits starting before: the innermost one containing the launch.
        for (int n = 0; e != v.begin() && n < 4; ++n) {
            --e;
            const Edit& ed = m_edits[size_t(*e)];
            if (ed.a <= it.launchEnd && it.launchEnd <= ed.b &&
                (it.launchEdit < 0 || ed.parent == it.launchEdit))
                it.launchEdit = *e;
        }
    }
}

// ---- host events in recorded order (the items are merged with them in run())
void Replay::orderHostEvents() {
    reserveHuge(m_events, 2 * m_edits.size() + m_syncs.size());
    // Starts, then ends, then waits: each comes as a few ascending runs (one per kind of edit
    // and thread: outermost ranges, disjoint), merged; the order is total, so the result is
    // the one sort gives.
    for (uint32_t e = 0; e < m_edits.size(); ++e) m_events.push_back({m_edits[e].a, kEditStart, e});
    for (uint32_t e = 0; e < m_edits.size(); ++e) m_events.push_back({m_edits[e].b, kEditEnd, e});
    for (uint32_t p = 0; p < m_syncs.size(); ++p) m_events.push_back({m_syncs[p].b, kSyncEnd, p});
    sortByRuns(m_events, [](const Ev& x, const Ev& y) {
        if (x.t != y.t) return x.t < y.t;
        if (x.type != y.type) return x.type < y.type;
        return x.idx < y.idx;
    });
}

int64_t Replay::run(FixSet fixes, Scratch& scratch) const {
    if (!m_valid) return -1;
    int64_t delta = 0;
    auto& shifts = scratch.shifts; // (time, delta from then on)
    shifts.clear();
    reserveHuge(shifts, 1 + m_edits.size() + m_syncs.size()); // one per edit end or wait at most
    shifts.emplace_back(INT64_MIN, 0);
    auto& inEdit = scratch.inEdit;
    inEdit.assign(size_t(std::max(1, m_threads)), -1);
    auto& editStart = scratch.editStart;
    assignHuge(editStart, m_edits.size(), int64_t(0));
    auto& endAt = scratch.endAt;
    assignHuge(endAt, m_items.size(), int64_t(0));
    auto& editOn = scratch.editOn;
    assignHuge(editOn, m_edits.size(), uint8_t(0));
    for (size_t e = 0; e < m_edits.size(); ++e) editOn[e] = active(int32_t(e), fixes);
    int64_t maxEnd = INT64_MIN;
    auto inside = [&](int32_t e, int64_t t) {
        const Edit& ed = m_edits[size_t(e)];
        const int64_t span = ed.b - ed.a;
        return editStart[size_t(e)] +
               (span > 0 ? int64_t(double(t - ed.a) * double(ed.newLen) / double(span)) : 0);
    };
    // Where host time `t` (already passed) lands: inside an active edit proportionally,
    // else shifted by the delta in force at t.
    auto mapLaunch = [&](const Item& it) -> int64_t {
        for (int32_t e = it.launchEdit; e >= 0; e = m_edits[size_t(e)].parent)
            if (editOn[size_t(e)]) return inside(e, it.launchEnd);
        auto sh = std::upper_bound(
            shifts.begin(), shifts.end(), it.launchEnd,
            [](int64_t t, const std::pair<int64_t, int64_t>& x) { return t < x.first; });
        return it.launchEnd + std::prev(sh)->second;
    };
    auto hostEvent = [&](const Ev& ev) {
        switch (ev.type) {
        case kEditStart:
            if (editOn[ev.idx]) {
                const Edit& ed = m_edits[ev.idx];
                const int32_t open = inEdit[size_t(ed.thread)];
                editStart[ev.idx] = open >= 0 ? inside(open, ed.a) : ed.a + delta;
                inEdit[size_t(ed.thread)] = int32_t(ev.idx);
            }
            break;
        case kEditEnd:
            if (editOn[ev.idx]) {
                const Edit& ed = m_edits[ev.idx];
                delta = editStart[ev.idx] + ed.newLen - ed.b;
                if (inEdit[size_t(ed.thread)] == int32_t(ev.idx)) inEdit[size_t(ed.thread)] = -1;
                shifts.emplace_back(ed.b, delta);
            }
            break;
        case kSyncEnd: {
            const SyncPoint& sp = m_syncs[ev.idx];
            if (sp.parent >= 0 && editOn[size_t(sp.parent)]) break;
            if (fixes & fixBit(sp.fix))
                delta -= (sp.b - sp.a) - sp.wake;
            else
                delta = std::max(sp.a + delta + sp.wake, endAt[sp.awaited] + sp.wake) - sp.b;
            shifts.emplace_back(sp.b, delta);
            break;
        }
        default: break;
        }
    };
    size_t h = 0;
    for (uint32_t i = 0; i < m_items.size(); ++i) {
        const Item& it = m_items[i];
        // Host events before this item starts (edits at the same time first; waits after).
        while (h < m_events.size() && (m_events[h].t < it.start ||
                                       (m_events[h].t == it.start && m_events[h].type != kSyncEnd)))
            hostEvent(m_events[h++]);
        int64_t st = INT64_MIN;
        if (it.fixedTime) {
            st = it.start;
        } else {
            // Pinned memory: the copy starts once issued and its stream is free, without
            // the staging delay that held it back (whichever constraint that showed up on).
            const bool pinned = it.pageableH2d && (fixes & fixBit(Fix::PinnedCopies));
            auto gap = [&](int64_t g) { return pinned ? std::min(g, m_latency) : g; };
            if (it.launchEnd != INT64_MIN)
                st = std::max(st, (it.launchThread >= 0 ? mapLaunch(it) : it.launchEnd) +
                                      gap(it.gapLaunch));
            if (it.prev >= 0) st = std::max(st, endAt[size_t(it.prev)] + gap(it.gapStream));
            if (it.dep >= 0) st = std::max(st, endAt[size_t(it.dep)] + gap(it.gapDep));
            if (st == INT64_MIN) st = it.start + delta;
        }
        double dur = double(it.dur);
        if (!it.fixedTime) {
            if (it.fp32Matmul && (fixes & fixBit(Fix::MixedPrecision))) dur *= 0.5;
            if (it.fusedAway && (fixes & fixBit(Fix::FuseKernels))) dur = 0;
            if (it.comm && (fixes & fixBit(Fix::OverlapComm))) dur *= m_commKeep;
        }
        endAt[i] = st + int64_t(dur);
        maxEnd = std::max(maxEnd, endAt[i]);
    }
    int64_t probe = INT64_MIN;
    for (; h < m_events.size() && (m_probe == INT64_MIN || m_events[h].t <= m_probe); ++h)
        hostEvent(m_events[h]);
    if (m_probe != INT64_MIN) probe = inEdit[0] >= 0 ? inside(inEdit[0], m_probe) : m_probe + delta;
    const int64_t end = std::max(maxEnd, probe);
    return end == INT64_MIN ? -1 : std::max<int64_t>(0, end - m_w0);
}

} // namespace detail
} // namespace stallscope::analysis
