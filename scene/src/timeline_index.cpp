#include "stallscope/scene/timeline_index.h"

#include "stallscope/model/intervals.h"
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stallscope::scene {

using namespace model;

// ---------------------------------------------------------------- lanes

const TimelineIndex::Lane& TimelineIndex::lane(TrackId track, int depth) const {
    static const Lane empty;
    if (!track.valid() || track.index() >= lanes.size()) return empty;
    const auto& perDepth = lanes[track.index()];
    if (depth < 0 || static_cast<size_t>(depth) >= perDepth.size()) return empty;
    return perDepth[static_cast<size_t>(depth)];
}

int TimelineIndex::laneCount(TrackId track) const {
    return track.valid() && track.index() < lanes.size()
               ? static_cast<int>(lanes[track.index()].size())
               : 0;
}

TrackId TimelineIndex::operatorsOnly(TrackId track) const {
    return track.valid() && track.index() < operatorViews.size() ? operatorViews[track.index()]
                                                                 : TrackId();
}

int TimelineIndex::laneOf(const SliceTable& s, TrackId laneTrack, uint32_t slice) const {
    if (slice >= s.size()) return -1;
    const int n = laneCount(laneTrack);
    if (n == 0) return -1;
    int depth = s.depth[slice];
    if (laneTrack != s.track[slice]) { // an operators-only view
        if (laneTrack != operatorsOnly(s.track[slice]) || slice >= operatorDepth.size() ||
            operatorDepth[slice] == kNotShown)
            return -1;
        depth = operatorDepth[slice];
    }
    return std::min(depth, n - 1);
}

size_t TimelineIndex::seek(const SliceTable& s, TrackId track, int depth, size_t from,
                           int64_t t) const {
    const auto& lane = this->lane(track, depth);
    if (from >= lane.size()) return lane.size();
    const auto& smp = samples[track.index()][static_cast<size_t>(depth)];
    constexpr size_t K = kSample;
    // The first sampled block that starts at or after t; the answer is in the block before.
    const size_t b = gallop(from / K + 1, smp.size(), [&](size_t k) { return smp[k] < t; });
    size_t lo = std::max(from, (b - 1) * K), hi = std::min(lane.size(), b * K);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (s.start[lane[mid]] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t TimelineIndex::firstVisible(const SliceTable& s, TrackId track, int depth, int64_t t) const {
    const auto& lane = this->lane(track, depth);
    if (lane.empty()) return 0;
    const auto& me = maxEnds[track.index()][static_cast<size_t>(depth)];
    constexpr size_t K = kSample;
    // The first block whose running maximum end reaches t; the answer is inside it.
    const size_t b = static_cast<size_t>(
        std::partition_point(me.begin(), me.end(), [t](int64_t v) { return v < t; }) - me.begin());
    if (b >= me.size()) return lane.size();
    int64_t running = b ? me[b - 1] : kMinNs;
    const size_t end = std::min(lane.size(), (b + 1) * K);
    for (size_t p = b * K; p < end; ++p) {
        running = std::max(running, satAdd(s.start[lane[p]], s.dur[lane[p]]));
        if (running >= t) return p;
    }
    return end;
}

// ---------------------------------------------------------------- counters

void CounterSeries::prepare() {
    m_busyBefore.assign(busy.size() + 1, 0);
    for (size_t i = 0; i < busy.size(); ++i)
        m_busyBefore[i + 1] = m_busyBefore[i] + busy[i].length();
    auto maxima = [this](size_t block, std::vector<double>& out) {
        out.assign((steps.size() + block - 1) / block, 0);
        for (size_t i = 0; i < steps.size(); ++i)
            out[i / block] =
                i % block ? std::max(out[i / block], steps[i].second) : steps[i].second;
    };
    maxima(kBlock, m_blockMax);
    maxima(kSuper, m_superMax);
}

int64_t CounterSeries::busyBefore(int64_t t, size_t& hint) const {
    if (hint > busy.size() || (hint > 0 && busy[hint - 1].end > t)) hint = 0; // moved backwards
    // The first interval that ends after t.
    const size_t i = gallop(hint, busy.size(), [&](size_t k) { return busy[k].end <= t; });
    hint = i;
    return m_busyBefore[i] + (i < busy.size() ? std::max<int64_t>(0, t - busy[i].start) : 0);
}

int64_t CounterSeries::busyWithin(int64_t lo, int64_t hi) const {
    if (hi <= lo) return 0;
    size_t hint = 0;
    const int64_t a = busyBefore(lo, hint);
    return busyBefore(hi, hint) - a;
}

double CounterSeries::valueAt(int64_t t) const {
    const auto it = std::upper_bound(
        steps.begin(), steps.end(), t,
        [](int64_t v, const std::pair<int64_t, double>& s) { return v < s.first; });
    return it == steps.begin() ? 0.0 : std::prev(it)->second;
}

double CounterSeries::maxWithin(int64_t lo, int64_t hi) const {
    size_t hint = 0;
    return maxWithin(lo, hi, hint);
}

double CounterSeries::maxWithin(int64_t lo, int64_t hi, size_t& hint) const {
    if (hint > steps.size() || (hint > 0 && steps[hint - 1].first > lo)) hint = 0;
    // k: the first sample after lo; the one before it is in force at lo.
    size_t k = gallop(hint, steps.size(), [&](size_t i) { return steps[i].first <= lo; });
    double v = k > 0 ? steps[k - 1].second : 0;
    const size_t end = gallop(k, steps.size(), [&](size_t i) { return steps[i].first < hi; });
    hint = end; // a sweep's next range starts at hi
    for (; k < end && k % kBlock; ++k) v = std::max(v, steps[k].second);
    for (; k + kBlock <= end && k % kSuper; k += kBlock) v = std::max(v, m_blockMax[k / kBlock]);
    for (; k + kSuper <= end; k += kSuper) v = std::max(v, m_superMax[k / kSuper]);
    for (; k + kBlock <= end; k += kBlock) v = std::max(v, m_blockMax[k / kBlock]);
    for (; k < end; ++k) v = std::max(v, steps[k].second);
    return v;
}

// ---------------------------------------------------------------- index

namespace {
struct IndexBuilder {
    static void lanes(const Trace& t, TimelineIndex& x) {
        const SliceTable& s = t.slices();
        const size_t tracks = t.tracks().size();
        x.lanes.assign(tracks, {});
        x.samples.reserve(tracks);
        x.maxEnds.reserve(tracks);
        x.operatorViews.assign(tracks, TrackId());
        for (uint32_t ti = 0; ti < tracks; ++ti) {
            const TrackInfo& tr = t.tracks()[ti];
            laneSet(s, x, ti, tr.sliceBegin, tr.sliceEnd, tr.maxDepth,
                    [&s](uint32_t i) { return int(s.depth[i]); });
        }
        // Operators-only views of the threads with Python frames: each other slice's depth
        // counts its enclosing slices that are not frames (a stack of their ends, in start order).
        std::vector<int64_t> open;
        for (uint32_t ti = 0; ti < tracks; ++ti) {
            const TrackInfo& tr = t.tracks()[ti];
            bool frames = false;
            for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd && !frames; ++i)
                frames = s.kind[i] == EventKind::PythonFunction;
            if (!frames) continue;
            if (x.operatorDepth.empty()) x.operatorDepth.assign(s.size(), TimelineIndex::kNotShown);
            open.clear();
            int maxDepth = 0;
            for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
                if (s.kind[i] == EventKind::PythonFunction) continue;
                while (!open.empty() && open.back() <= s.start[i]) open.pop_back();
                const int d = std::min<int>(int(open.size()), TimelineIndex::kMaxLanes - 1);
                x.operatorDepth[i] = static_cast<uint8_t>(d);
                maxDepth = std::max(maxDepth, d);
                open.push_back(satAdd(s.start[i], s.dur[i]));
            }
            x.operatorViews[ti] = TrackId(static_cast<uint32_t>(x.lanes.size()));
            x.lanes.emplace_back();
            laneSet(s, x, static_cast<uint32_t>(x.lanes.size() - 1), tr.sliceBegin, tr.sliceEnd,
                    maxDepth, [&x](uint32_t i) {
                        const uint8_t d = x.operatorDepth[i];
                        return d == TimelineIndex::kNotShown ? -1 : int(d);
                    });
        }
    }

    /// Fills lanes[at] with the slices [begin, end) by `depthOf` (-1: left out), and
    /// its search samples.
    template <class DepthOf>
    static void laneSet(const SliceTable& s, TimelineIndex& x, uint32_t at, uint32_t begin,
                        uint32_t end, int maxDepth, DepthOf depthOf) {
        {
            auto& lanes = x.lanes[at];
            const size_t n =
                std::clamp<size_t>(size_t(std::max(0, maxDepth)) + 1, 1, TimelineIndex::kMaxLanes);
            lanes.resize(n);
            std::vector<size_t> counts(n, 0);
            for (uint32_t i = begin; i < end; ++i)
                if (const int d = depthOf(i); d >= 0) ++counts[std::min<size_t>(size_t(d), n - 1)];
            for (size_t d = 0; d < n; ++d) lanes[d].reserve(counts[d]);
            for (uint32_t i = begin; i < end; ++i)
                if (const int d = depthOf(i); d >= 0)
                    lanes[std::min<size_t>(size_t(d), n - 1)].push_back(i);
            auto& samples = x.samples.emplace_back(n);
            auto& maxEnds = x.maxEnds.emplace_back(n);
            for (size_t d = 0; d < n; ++d) {
                const auto& lane = lanes[d];
                constexpr size_t K = TimelineIndex::kSample;
                samples[d].reserve((lane.size() + K - 1) / K);
                maxEnds[d].reserve((lane.size() + K - 1) / K);
                int64_t running = kMinNs;
                for (size_t k = 0; k < lane.size(); ++k) {
                    if (k % K == 0) samples[d].push_back(s.start[lane[k]]);
                    running = std::max(running, satAdd(s.start[lane[k]], s.dur[lane[k]]));
                    if (k % K == K - 1 || k + 1 == lane.size()) maxEnds[d].push_back(running);
                }
            }
        }
    }

    static void counters(const Trace& t, TimelineIndex& x) {
        const SliceTable& s = t.slices();
        std::map<int32_t, bool> devices;
        for (const TrackInfo& tr : t.tracks())
            if (tr.kind == TrackKind::GpuStream) devices[t.process(tr.process).gpuDevice] = true;
        for (const auto& [dev, unused] : devices) {
            (void)unused;
            CounterSeries util;
            util.kind = CounterKind::Utilization;
            util.device = dev;
            util.busy = model::gpuBusyIntervals(t, dev, false);
            util.unit = "%";
            x.counters.push_back(std::move(util));
            // Launch queue: +1 when a launch call returns, -1 when its work starts.
            std::vector<std::pair<int64_t, int>> ev;
            for (const TrackInfo& tr : t.tracks()) {
                if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != dev)
                    continue;
                for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
                    if (!isGpuWork(s.kind[i])) continue;
                    const SliceId l = t.launchOf(SliceId(i));
                    if (!l.valid()) continue;
                    const int64_t queued = s.start[l.index()] + s.dur[l.index()];
                    if (queued >= s.start[i]) continue;
                    ev.emplace_back(queued, +1);
                    ev.emplace_back(s.start[i], -1);
                }
            }
            std::sort(ev.begin(), ev.end());
            CounterSeries q;
            q.kind = CounterKind::QueueDepth;
            q.device = dev;
            q.unit = "queued";
            int depth = 0;
            for (const auto& [ts, d] : ev) {
                depth += d;
                if (!q.steps.empty() && q.steps.back().first == ts)
                    q.steps.back().second = depth;
                else
                    q.steps.emplace_back(ts, depth);
                q.maxValue = std::max(q.maxValue, double(depth));
            }
            if (!q.steps.empty()) x.counters.push_back(std::move(q));
        }
        // Allocator memory, per device (CUDA) and for the host: allocated, then reserved
        // (a host's reserved total is 0: left out).
        std::map<std::tuple<int, int, bool>, CounterSeries> mem;
        for (const MemorySample& m : t.memorySamples()) {
            const int dev = m.deviceType == 1 ? m.deviceId : -1;
            for (const bool reserved : {false, true}) {
                const int64_t v = reserved ? m.totalReserved : m.totalAllocated;
                if (v < 0 || (reserved && m.deviceType != 1)) continue;
                CounterSeries& cs = mem[{m.deviceType, dev, reserved}];
                cs.kind = CounterKind::Memory;
                cs.device = dev;
                cs.reserved = reserved;
                cs.unit = "MB";
                cs.steps.emplace_back(m.ts, double(v) / 1e6);
                cs.maxValue = std::max(cs.maxValue, double(v) / 1e6);
            }
        }
        for (auto& [k, cs] : mem) x.counters.push_back(std::move(cs));
        for (CounterSeries& c : x.counters) c.prepare();
    }
};
} // namespace

std::shared_ptr<const TimelineIndex> TimelineIndex::build(const Trace& t) {
    auto x = std::make_shared<TimelineIndex>();
    IndexBuilder::lanes(t, *x);
    IndexBuilder::counters(t, *x);
    x->graphReplays = model::graphReplays(t);
    return x;
}

} // namespace stallscope::scene
