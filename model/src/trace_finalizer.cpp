#include "trace_finalizer.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>
#include <numeric>
#include <string>
#include <thread>

namespace stallscope::model {

namespace {

int64_t addBase(int64_t ts, int64_t base) {
    int64_t r;
    if (__builtin_add_overflow(ts, base, &r)) return ts < 0 ? INT64_MIN : kMaxNs;
    return r;
}

template <class T>
void gather(std::vector<T>& col, const std::vector<uint32_t>& perm) {
    std::vector<T> out;
    out.reserve(perm.size());
    for (const uint32_t p : perm) out.push_back(col[p]);
    col.swap(out);
}

// Big traces finalize on two threads where steps do not depend on each other.
constexpr size_t kParallelSlices = 200000;

template <class A, class B>
void runBoth(bool parallel, A&& a, B&& b) {
    if (!parallel) {
        a();
        b();
        return;
    }
    std::thread t(std::forward<B>(b));
    a();
    t.join();
}

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

} // namespace

bool TraceFinalizer::run() {
    applyTimeBase();
    pairBeginEnd();
    if (stopped()) return false;
    classifyTracks();
    foldStreamSyncRows();
    sortSlices();
    if (stopped()) return false;
    // Nesting -> end index -> flows on this thread; the correlation index, instants,
    // counters and memory samples (which only need sorted slices) on another.
    Diagnostics sideDiagnostics;
    runBoth(
        m_t.m_slices.size() >= kParallelSlices,
        [this] {
            computeNesting();
            buildEndIndex();
            resolveFlows();
        },
        [this, &sideDiagnostics] {
            buildCorrelationIndex(sideDiagnostics);
            sortInstants();
            sortCounters();
            // Stable: events at one instant keep the file's order (a free before the next
            // allocation at the same address, the allocator's totals in sequence).
            std::stable_sort(
                m_t.m_memory.begin(), m_t.m_memory.end(),
                [](const MemorySample& a, const MemorySample& b) { return a.ts < b.ts; });
        });
    m_t.m_diagnostics.merge(sideDiagnostics);
    if (stopped()) return false;
    computeSpan();
    nameTracks();
    buildDisplayOrder();
    m_t.m_source = m_b.m_source;
    return true;
}

void TraceFinalizer::applyTimeBase() {
    const int64_t base = m_b.m_timeBase;
    if (base != 0) {
        for (auto& v : m_t.m_slices.start) v = addBase(v, base);
        for (auto& v : m_t.m_instants.ts) v = addBase(v, base);
        for (auto& v : m_t.m_counterSamples.ts) v = addBase(v, base);
        for (auto& m : m_t.m_memory) m.ts = addBase(m.ts, base);
        for (auto& f : m_b.m_flowEndpoints) f.ts = addBase(f.ts, base);
        for (auto& e : m_b.m_beginEnds) e.ts = addBase(e.ts, base);
    }
    clampTimes();
}

// The model's time range (time_math.h): what lies beyond ±kModelTimeLimitNs is clamped there
// and counted, so every difference of two model times fits in int64.
void TraceFinalizer::clampTimes() {
    static constexpr int64_t lim = kModelTimeLimitNs;
    auto outside = [](int64_t v) { return v < -lim || v > lim; };
    auto clamp = [](int64_t v) { return std::clamp(v, -lim, lim); };
    Diagnostics& d = m_t.m_diagnostics;
    auto note = [&](uint64_t offset, int64_t v) {
        d.add(DiagnosticKind::TimeClamped, offset, std::to_string(v) + " ns");
    };
    SliceTable& sl = m_t.m_slices;
    for (size_t i = 0; i < sl.size(); ++i) {
        const int64_t start = sl.start[i], end = sl.end(i);  // end saturates
        if (!outside(start) && !outside(end)) continue;
        note(sl.srcOffset[i], outside(start) ? start : end);
        sl.start[i] = clamp(start);
        sl.dur[i] = clamp(end) - sl.start[i];
    }
    // A single time: clamped and counted when outside.
    auto fix = [&](int64_t& v, uint64_t offset) {
        if (!outside(v)) return;
        note(offset, v);
        v = clamp(v);
    };
    InstantTable& in = m_t.m_instants;
    for (size_t i = 0; i < in.size(); ++i) fix(in.ts[i], in.srcOffset[i]);
    for (auto& v : m_t.m_counterSamples.ts) fix(v, UINT64_MAX);
    for (auto& m : m_t.m_memory) fix(m.ts, UINT64_MAX);
    for (auto& f : m_b.m_flowEndpoints) fix(f.ts, UINT64_MAX);
    for (auto& e : m_b.m_beginEnds) fix(e.ts, e.srcOffset);
}

void TraceFinalizer::pairBeginEnd() {
    auto& be = m_b.m_beginEnds;
    if (be.empty()) return;
    // Stable: B and E at the same timestamp keep their file order.
    std::stable_sort(be.begin(), be.end(), [](const BeginEnd& a, const BeginEnd& b) {
        return a.track != b.track ? a.track < b.track : a.ts < b.ts;
    });
    // "The end of the trace" is the span's end (computeSpan): the last time of any slice,
    // instant, counter or memory sample, and of the B/E events themselves. Closing at the
    // last slice alone made the closed slice depend on which other slices the file holds
    // (an annotated copy with findings up to the span's end closed it later).
    int64_t lastTs = INT64_MIN;
    for (const auto& e : be) lastTs = std::max(lastTs, e.ts);
    const SliceTable& sl = m_t.m_slices;
    for (size_t i = 0; i < sl.size(); ++i) lastTs = std::max(lastTs, sl.end(i));
    for (int64_t ts : m_t.m_instants.ts) lastTs = std::max(lastTs, ts);
    for (int64_t ts : m_t.m_counterSamples.ts) lastTs = std::max(lastTs, ts);
    for (const auto& m : m_t.m_memory) lastTs = std::max(lastTs, m.ts);

    std::vector<const BeginEnd*> stack;
    auto closeOpen = [&]() {
        for (const BeginEnd* b : stack) {
            m_t.m_diagnostics.add(DiagnosticKind::UnterminatedBegin, b->srcOffset,
                                  std::string(m_t.m_strings.view(b->name)));
            SliceRow row{b->ts, satSub(lastTs, b->ts), b->track, b->name, b->category,
                         kindFromCategory(m_t.m_strings.view(b->category), b->category.value != 0),
                         b->correlation, SliceExtra::kNone, b->srcOffset, b->srcLength,
                         static_cast<uint8_t>(kSliceFromBeginEnd | kSliceUnterminated)};
            m_b.appendSlice(row);
        }
        stack.clear();
    };
    TrackId current;
    for (const auto& e : be) {
        if (e.track != current) {
            closeOpen();
            current = e.track;
        }
        if (e.begin) {
            stack.push_back(&e);
            continue;
        }
        if (stack.empty()) {
            m_t.m_diagnostics.add(DiagnosticKind::UnmatchedEnd, e.srcOffset,
                                  std::string(m_t.m_strings.view(e.name)));
            continue;
        }
        const BeginEnd* b = stack.back();
        stack.pop_back();
        SliceRow row{b->ts, satSub(e.ts, b->ts), b->track, b->name, b->category,
                     kindFromCategory(m_t.m_strings.view(b->category), b->category.value != 0),
                     b->correlation, SliceExtra::kNone, b->srcOffset, b->srcLength,
                     kSliceFromBeginEnd};
        m_b.appendSlice(row);
    }
    closeOpen();
    be.clear();
    be.shrink_to_fit();
}

void TraceFinalizer::classifyTracks() {
    const SliceTable& s = m_t.m_slices;
    std::vector<uint32_t> kindMask(m_t.m_tracks.size(), 0);
    for (size_t i = 0; i < s.size(); ++i)
        kindMask[s.track[i].index()] |= 1u << static_cast<unsigned>(s.kind[i]);
    uint32_t gpuMask = 0, cpuMask = 0;
    for (unsigned k = 0; k < static_cast<unsigned>(EventKind::Count); ++k) {
        const auto kind = static_cast<EventKind>(k);
        if (isGpuSide(kind)) gpuMask |= 1u << k;
        else if (kind != EventKind::TraceSpan && kind != EventKind::Overhead &&
                 kind != EventKind::Instant)
            cpuMask |= 1u << k;
    }
    for (size_t t = 0; t < m_t.m_tracks.size(); ++t) {
        TrackInfo& tr = m_t.m_tracks[t];
        ProcessInfo& p = m_t.m_processes[tr.process.index()];
        if (kindMask[t] & gpuMask) {
            tr.kind = TrackKind::GpuStream;
            if (p.gpuDevice < 0 && !p.key.isString() && p.key.number >= 0 &&
                p.key.number < INT32_MAX)
                p.gpuDevice = static_cast<int32_t>(p.key.number);
        } else if ((kindMask[t] & cpuMask) ||
                   (!p.key.isString() && p.key.number >= 0 && kindMask[t] == 0 &&
                    p.gpuDevice < 0)) {
            tr.kind = TrackKind::CpuThread;
        } else {
            tr.kind = TrackKind::Other;
        }
    }
    // A process labelled "GPU N" is device N even when it only carries metadata.
    for (auto& p : m_t.m_processes) {
        const std::string_view labels = m_t.m_strings.view(p.labels);
        if (p.gpuDevice < 0 && startsWith(labels, "GPU ")) {
            int dev = -1;
            const auto digits = labels.substr(4);
            auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), dev);
            if (ec == std::errc() && dev >= 0) p.gpuDevice = dev;
        }
    }
}

void TraceFinalizer::foldStreamSyncRows() {
    constexpr int64_t kSyncRowOffset = 1'000'000; // libkineto: the sync row of stream s is s + 10^6
    const SliceTable& s = m_t.m_slices;
    std::vector<bool> onlySync(m_t.m_tracks.size(), true), any(m_t.m_tracks.size(), false);
    for (size_t i = 0; i < s.size(); ++i) {
        any[s.track[i].index()] = true;
        if (s.kind[i] != EventKind::CudaSync) onlySync[s.track[i].index()] = false;
    }
    std::map<std::pair<uint32_t, int64_t>, uint32_t> streams; // (process, stream) -> track
    for (uint32_t t = 0; t < m_t.m_tracks.size(); ++t) {
        const TrackInfo& tr = m_t.m_tracks[t];
        if (tr.kind == TrackKind::GpuStream && !tr.key.isString())
            streams.emplace(std::pair(tr.process.index(), tr.key.number), t);
    }
    for (TrackInfo& tr : m_t.m_tracks) {
        if (tr.kind != TrackKind::GpuStream || tr.key.isString() ||
            tr.key.number < kSyncRowOffset || !onlySync[&tr - m_t.m_tracks.data()] ||
            !any[&tr - m_t.m_tracks.data()])
            continue;
        const auto it = streams.find({tr.process.index(), tr.key.number - kSyncRowOffset});
        if (it == streams.end()) continue;
        tr.syncOf = TrackId(it->second);
        if (!tr.name.valid() || tr.name.value == 0)
            tr.name = m_t.m_strings.intern(
                "stream " + std::to_string(tr.key.number - kSyncRowOffset) + " sync");
    }
}

void TraceFinalizer::sortSlices() {
    SliceTable& s = m_t.m_slices;
    const size_t n = s.size();
    const size_t tracks = m_t.m_tracks.size();
    std::vector<uint32_t> offsets(tracks + 1, 0);
    for (size_t i = 0; i < n; ++i) ++offsets[s.track[i].index() + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    for (size_t t = 0; t < tracks; ++t) {
        m_t.m_tracks[t].sliceBegin = offsets[t];
        m_t.m_tracks[t].sliceEnd = offsets[t + 1];
    }
    std::vector<uint32_t> perm(n);
    {
        std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
        for (size_t i = 0; i < n; ++i) perm[cursor[s.track[i].index()]++] = static_cast<uint32_t>(i);
    }
    auto less = [&s](uint32_t a, uint32_t b) {
        if (s.start[a] != s.start[b]) return s.start[a] < s.start[b];
        if (s.dur[a] != s.dur[b]) return s.dur[a] > s.dur[b];
        return a < b;
    };
    bool identity = true;
    // Tracks sort independently: on a big trace two threads take them largest first.
    std::vector<uint32_t> order(tracks);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&offsets](uint32_t a, uint32_t b) {
        return offsets[a + 1] - offsets[a] > offsets[b + 1] - offsets[b];
    });
    std::atomic<size_t> nextTrack{0};
    auto sortTracks = [&] {
        for (size_t k = nextTrack++; k < tracks; k = nextTrack++) {
            const uint32_t t = order[k];
            auto first = perm.begin() + offsets[t];
            auto last = perm.begin() + offsets[t + 1];
            if (!std::is_sorted(first, last, less)) std::sort(first, last, less);
        }
    };
    runBoth(n >= kParallelSlices, sortTracks, sortTracks);
    for (size_t i = 0; i < n && identity; ++i) identity = perm[i] == i;
    if (identity) {
        // Columns grew geometrically while appending: give the slack back.
        s.start.shrink_to_fit();
        s.dur.shrink_to_fit();
        s.track.shrink_to_fit();
        s.name.shrink_to_fit();
        s.category.shrink_to_fit();
        s.parent.shrink_to_fit();
        s.srcOffset.shrink_to_fit();
        s.srcLength.shrink_to_fit();
        s.correlation.shrink_to_fit();
        s.extra.shrink_to_fit();
        s.kind.shrink_to_fit();
        s.flags.shrink_to_fit();
        s.depth.shrink_to_fit();
        return;
    }
    // parent and depth are recomputed after sorting: their memory goes before the gathers
    // below double a column each (the import's peak).
    std::vector<SliceId>().swap(s.parent);
    std::vector<uint16_t>().swap(s.depth);
    runBoth(
        n >= kParallelSlices,
        [&] {
            gather(s.start, perm);
            gather(s.dur, perm);
            gather(s.track, perm);
            gather(s.name, perm);
            gather(s.category, perm);
        },
        [&] {
            gather(s.srcOffset, perm);
            gather(s.srcLength, perm);
            gather(s.correlation, perm);
            gather(s.extra, perm);
            gather(s.kind, perm);
            gather(s.flags, perm);
        });
    s.parent.assign(n, SliceId());
    s.depth.assign(n, 0);
}

void TraceFinalizer::computeNesting() {
    SliceTable& s = m_t.m_slices;
    std::vector<uint32_t> stack;
    for (auto& tr : m_t.m_tracks) {
        stack.clear();
        uint16_t maxDepth = 0;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            const int64_t start = s.start[i];
            // A slice that ends where this one starts is a sibling, not a parent.
            while (!stack.empty() && s.end(stack.back()) <= start)
                stack.pop_back();
            s.parent[i] = stack.empty() ? SliceId() : SliceId(stack.back());
            const size_t depth = std::min<size_t>(stack.size(), UINT16_MAX);
            s.depth[i] = static_cast<uint16_t>(depth);
            maxDepth = std::max<uint16_t>(maxDepth, static_cast<uint16_t>(depth));
            if (!stack.empty()) {
                const uint32_t p = stack.back();
                if (s.end(i) > s.end(p)) {
                    s.flags[i] |= kSliceCrossesParent;
                    // Kernels that overlap on one stream are real (programmatic dependent
                    // launch lets the next start before the last ends), not a broken file.
                    const bool pdl = tr.kind == TrackKind::GpuStream && isGpuWork(s.kind[i]) &&
                                     isGpuWork(s.kind[p]);
                    m_t.m_diagnostics.add(
                        pdl ? DiagnosticKind::OverlappingGpuWork : DiagnosticKind::CrossingSlices,
                        s.srcOffset[i], std::string(m_t.m_strings.view(s.name[i])));
                }
            }
            stack.push_back(i);
        }
        tr.maxDepth = maxDepth;
    }
}

void TraceFinalizer::buildEndIndex() {
    const SliceTable& s = m_t.m_slices;
    constexpr uint32_t kStride = Trace::kEndIndexStride;
    auto& idx = m_t.m_blockMaxEnd;
    idx.clear();
    for (auto& tr : m_t.m_tracks) {
        tr.endIndexBegin = static_cast<uint32_t>(idx.size());
        int64_t runningMax = INT64_MIN;
        for (uint32_t b = tr.sliceBegin; b < tr.sliceEnd; b += kStride) {
            const uint32_t e = std::min(tr.sliceEnd, b + kStride);
            for (uint32_t i = b; i < e; ++i) runningMax = std::max(runningMax, s.end(i));
            idx.push_back(runningMax);
        }
    }
}

void TraceFinalizer::sortInstants() {
    InstantTable& in = m_t.m_instants;
    const size_t n = in.size();
    const size_t tracks = m_t.m_tracks.size();
    std::vector<uint32_t> offsets(tracks + 1, 0);
    for (size_t i = 0; i < n; ++i) ++offsets[in.track[i].index() + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    for (size_t t = 0; t < tracks; ++t) {
        m_t.m_tracks[t].instantBegin = offsets[t];
        m_t.m_tracks[t].instantEnd = offsets[t + 1];
    }
    if (n == 0) return;
    std::vector<uint32_t> perm(n);
    std::vector<uint32_t> cursor(offsets.begin(), offsets.end() - 1);
    for (size_t i = 0; i < n; ++i) perm[cursor[in.track[i].index()]++] = static_cast<uint32_t>(i);
    for (size_t t = 0; t < tracks; ++t)
        std::stable_sort(perm.begin() + offsets[t], perm.begin() + offsets[t + 1],
                         [&in](uint32_t a, uint32_t b) { return in.ts[a] < in.ts[b]; });
    gather(in.ts, perm);
    gather(in.track, perm);
    gather(in.name, perm);
    gather(in.category, perm);
    gather(in.scope, perm);
    gather(in.srcOffset, perm);
    gather(in.srcLength, perm);
}

SliceId TraceFinalizer::enclosingSlice(TrackId track, int64_t ts) const {
    const TrackInfo& tr = m_t.m_tracks[track.index()];
    const SliceTable& s = m_t.m_slices;
    auto first = s.start.begin() + tr.sliceBegin;
    auto last = s.start.begin() + tr.sliceEnd;
    auto it = std::upper_bound(first, last, ts);
    if (it == first) return {};
    SliceId cand(static_cast<uint32_t>((it - s.start.begin()) - 1));
    while (cand.valid()) {
        if (s.start[cand.index()] <= ts && ts <= s.end(cand.index()))
            return cand;
        cand = s.parent[cand.index()];
    }
    return {};
}

SliceId TraceFinalizer::nextSlice(TrackId track, int64_t ts) const {
    const TrackInfo& tr = m_t.m_tracks[track.index()];
    const SliceTable& s = m_t.m_slices;
    auto first = s.start.begin() + tr.sliceBegin;
    auto last = s.start.begin() + tr.sliceEnd;
    auto it = std::lower_bound(first, last, ts);
    if (it == last) return {};
    return SliceId(static_cast<uint32_t>(it - s.start.begin()));
}

void TraceFinalizer::resolveFlows() {
    auto& eps = m_b.m_flowEndpoints;
    if (eps.empty()) return;
    auto phaseOrder = [](char p) { return p == 's' ? 0 : p == 't' ? 1 : 2; };
    std::sort(eps.begin(), eps.end(), [&](const FlowEndpoint& a, const FlowEndpoint& b) {
        if (a.category != b.category) return a.category < b.category;
        if (a.id != b.id) return a.id < b.id;
        if (a.ts != b.ts) return a.ts < b.ts;
        return phaseOrder(a.phase) < phaseOrder(b.phase);
    });
    auto flowKind = [this](StringId cat) {
        const std::string_view c = m_t.m_strings.view(cat);
        if (c == "ac2g" || c == "async_cpu_to_gpu" || c == "async" || c == "cpu_to_cuda")
            return FlowKind::Launch;
        if (c == "fwdbwd") return FlowKind::ForwardBackward;
        return FlowKind::Other;
    };
    auto bind = [this](const FlowEndpoint& e) {
        return e.bindEnclosing ? enclosingSlice(e.track, e.ts) : nextSlice(e.track, e.ts);
    };
    uint64_t unbound = 0;
    size_t i = 0;
    while (i < eps.size()) {
        size_t j = i;
        while (j < eps.size() && eps[j].category == eps[i].category && eps[j].id == eps[i].id) ++j;
        // Within one (category, id): chains s -> t* -> f, in time order.
        SliceId prev;
        bool open = false;
        for (size_t k = i; k < j; ++k) {
            const FlowEndpoint& e = eps[k];
            const SliceId bound = bind(e);
            if (e.phase == 's') {
                if (open) ++unbound;  // the previous chain never finished
                prev = bound;
                open = bound.valid();
                if (!bound.valid()) ++unbound;
                continue;
            }
            if (!open || !prev.valid() || !bound.valid()) {
                ++unbound;
                if (e.phase == 'f') open = false;
                else prev = bound;
                continue;
            }
            m_t.m_flows.push_back(Flow{prev, bound, e.category, flowKind(e.category)});
            prev = bound;
            if (e.phase == 'f') open = false;
        }
        if (open) ++unbound;
        i = j;
    }
    if (unbound) m_t.m_diagnostics.addCount(DiagnosticKind::UnboundFlow, unbound);
    eps.clear();
    eps.shrink_to_fit();
}

void TraceFinalizer::buildCorrelationIndex(Diagnostics& diagnostics) {
    const SliceTable& s = m_t.m_slices;
    auto& launch = m_t.m_launchByCorrelation;
    auto& gpu = m_t.m_gpuByCorrelation;
    for (uint32_t i = 0; i < s.size(); ++i) {
        const uint32_t c = s.correlation[i];
        if (c == SliceTable::kNoCorrelation) continue;
        const EventKind k = s.kind[i];
        if (isLaunchSide(k)) launch.push_back({c, SliceId(i)});
        else if (isGpuSide(k)) gpu.push_back({c, SliceId(i)});
    }
    if (!std::is_sorted(launch.begin(), launch.end())) std::sort(launch.begin(), launch.end());
    if (!std::is_sorted(gpu.begin(), gpu.end())) std::sort(gpu.begin(), gpu.end());
    for (size_t i = 1; i < launch.size(); ++i)
        if (launch[i].correlation == launch[i - 1].correlation)
            diagnostics.add(DiagnosticKind::DuplicateCorrelation,
                                  s.srcOffset[launch[i].slice.index()],
                                  "correlation " + std::to_string(launch[i].correlation));
    launch.shrink_to_fit();
    gpu.shrink_to_fit();
}

void TraceFinalizer::sortCounters() {
    auto& samples = m_t.m_counterSamples;
    auto& series = m_b.m_counterSampleSeries;
    const size_t n = samples.size();
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::stable_sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) {
        if (series[a] != series[b]) return series[a] < series[b];
        return samples.ts[a] < samples.ts[b];
    });
    gather(samples.ts, perm);
    gather(samples.value, perm);
    gather(series, perm);
    for (auto& cs : m_t.m_counterSeries) cs.sampleBegin = cs.sampleEnd = 0;
    for (size_t i = 0; i < n; ++i) {
        CounterSeries& cs = m_t.m_counterSeries[series[i]];
        if (cs.sampleEnd == 0) cs.sampleBegin = static_cast<uint32_t>(i);
        cs.sampleEnd = static_cast<uint32_t>(i + 1);
    }
    series.clear();
    series.shrink_to_fit();
}

void TraceFinalizer::computeSpan() {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    const SliceTable& s = m_t.m_slices;
    for (size_t i = 0; i < s.size(); ++i) {
        lo = std::min(lo, s.start[i]);
        hi = std::max(hi, s.end(i));
    }
    for (int64_t ts : m_t.m_instants.ts) lo = std::min(lo, ts), hi = std::max(hi, ts);
    for (int64_t ts : m_t.m_counterSamples.ts) lo = std::min(lo, ts), hi = std::max(hi, ts);
    for (const auto& m : m_t.m_memory) lo = std::min(lo, m.ts), hi = std::max(hi, m.ts);
    if (lo > hi) lo = hi = 0;
    m_t.m_startNs = lo;
    m_t.m_endNs = hi;
}

void TraceFinalizer::nameTracks() {
    for (auto& tr : m_t.m_tracks) {
        if (tr.name.valid() && tr.name.value != 0) continue;
        std::string name;
        if (tr.key.isString()) name = std::string(m_t.m_strings.view(tr.key.text));
        else if (tr.kind == TrackKind::GpuStream) name = "stream " + std::to_string(tr.key.number);
        else name = "thread " + std::to_string(tr.key.number);
        tr.name = m_t.m_strings.intern(name);
    }
    for (auto& p : m_t.m_processes) {
        if (p.name.valid() && p.name.value != 0) continue;
        if (p.key.isString()) p.name = p.key.text;
        else if (p.gpuDevice >= 0) p.name = m_t.m_strings.intern("GPU " + std::to_string(p.gpuDevice));
        else p.name = m_t.m_strings.intern("process " + std::to_string(p.key.number));
    }
}

void TraceFinalizer::buildDisplayOrder() {
    // Processes: CPU processes first, then GPUs by device, then string-keyed rows
    // (Spans, Traces); an explicit sort index wins within each group.
    auto processRank = [](const ProcessInfo& p) {
        int group = p.gpuDevice >= 0 ? 1 : (p.key.isString() || p.key.number < 0) ? 2 : 0;
        const int64_t idx = p.hasSortIndex ? p.sortIndex
                            : p.gpuDevice >= 0 ? p.gpuDevice
                                               : (p.key.isString() ? 0 : p.key.number);
        return std::pair<int, int64_t>(group, idx);
    };
    std::vector<TrackId> order(m_t.m_tracks.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = TrackId(i);
    std::stable_sort(order.begin(), order.end(), [&](TrackId a, TrackId b) {
        const TrackInfo& ta = m_t.m_tracks[a.index()];
        const TrackInfo& tb = m_t.m_tracks[b.index()];
        if (ta.process != tb.process) {
            auto ra = processRank(m_t.m_processes[ta.process.index()]);
            auto rb = processRank(m_t.m_processes[tb.process.index()]);
            if (ra != rb) return ra < rb;
            return ta.process < tb.process;
        }
        // A stream's sync row sorts with its stream, right after it.
        const TrackInfo& sa = ta.syncOf.valid() ? m_t.m_tracks[ta.syncOf.index()] : ta;
        const TrackInfo& sb = tb.syncOf.valid() ? m_t.m_tracks[tb.syncOf.index()] : tb;
        const int64_t ka = sa.hasSortIndex ? sa.sortIndex : sa.key.number;
        const int64_t kb = sb.hasSortIndex ? sb.sortIndex : sb.key.number;
        if (ka != kb) return ka < kb;
        return !ta.syncOf.valid() && tb.syncOf.valid();
    });
    m_t.m_displayOrder = std::move(order);
}

} // namespace stallscope::model
