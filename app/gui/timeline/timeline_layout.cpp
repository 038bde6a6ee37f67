#include "timeline_layout.h"

#include "stallscope/analysis/gpu_metrics.h"
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <map>

namespace stallscope::gui {

using namespace model;

namespace {

QString groupLabel(const Trace& t, const ProcessInfo& p) {
    if (p.gpuDevice >= 0) {
        QString l = QString("GPU %1").arg(p.gpuDevice);
        for (const auto& d : t.metadata().devices)
            if (d.id == p.gpuDevice && !d.name.empty()) l += " · " + QString::fromStdString(d.name);
        return l;
    }
    const QString name = QString::fromStdString(std::string(t.str(p.name)));
    if (p.key.isString()) return name.isEmpty() ? QString("(unnamed)") : name;
    return QString("%1 (pid %2)").arg(name.isEmpty() ? QString("process") : name).arg(p.key.number);
}

} // namespace

const std::vector<uint32_t>& TimelineLayout::lane(TrackId track, int depth) const {
    if (!m_index || !track.valid() || track.index() >= m_index->lanes.size()) return m_empty;
    const auto& lanes = m_index->lanes[track.index()];
    if (depth < 0 || static_cast<size_t>(depth) >= lanes.size()) return m_empty;
    return lanes[static_cast<size_t>(depth)];
}

size_t TimelineLayout::seek(TrackId track, int depth, size_t from, int64_t t) const {
    const auto& lane = this->lane(track, depth);
    if (from >= lane.size()) return lane.size();
    const auto& smp = m_index->samples[track.index()][static_cast<size_t>(depth)];
    const auto& start = m_trace->slices().start;
    constexpr size_t K = TimelineIndex::kSample;
    // The first sampled block that starts at or after t; the answer is in the block before.
    const size_t b = gallop(from / K + 1, smp.size(), [&](size_t k) { return smp[k] < t; });
    size_t lo = std::max(from, (b - 1) * K), hi = std::min(lane.size(), b * K);
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (start[lane[mid]] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

size_t TimelineLayout::firstVisible(TrackId track, int depth, int64_t t) const {
    const auto& lane = this->lane(track, depth);
    if (lane.empty()) return 0;
    const auto& me = m_index->maxEnds[track.index()][static_cast<size_t>(depth)];
    const SliceTable& s = m_trace->slices();
    constexpr size_t K = TimelineIndex::kSample;
    // The first block whose running maximum end reaches t; the answer is inside it.
    const size_t b = static_cast<size_t>(std::partition_point(me.begin(), me.end(), [t](int64_t v) { return v < t; }) -
                                         me.begin());
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
    for (size_t i = 0; i < busy.size(); ++i) m_busyBefore[i + 1] = m_busyBefore[i] + busy[i].length();
    auto maxima = [this](size_t block, std::vector<double>& out) {
        out.assign((steps.size() + block - 1) / block, 0);
        for (size_t i = 0; i < steps.size(); ++i)
            out[i / block] = i % block ? std::max(out[i / block], steps[i].second) : steps[i].second;
    };
    maxima(kBlock, m_blockMax);
    maxima(kSuper, m_superMax);
}

int64_t CounterSeries::busyBefore(int64_t t, size_t& hint) const {
    if (hint > busy.size() || (hint > 0 && busy[hint - 1].end > t)) hint = 0;  // moved backwards
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
    hint = end;  // a sweep's next range starts at hi
    for (; k < end && k % kBlock; ++k) v = std::max(v, steps[k].second);
    for (; k + kBlock <= end && k % kSuper; k += kBlock) v = std::max(v, m_blockMax[k / kBlock]);
    for (; k + kSuper <= end; k += kSuper) v = std::max(v, m_superMax[k / kSuper]);
    for (; k + kBlock <= end; k += kBlock) v = std::max(v, m_blockMax[k / kBlock]);
    for (; k < end; ++k) v = std::max(v, steps[k].second);
    return v;
}

// ---------------------------------------------------------------- index

namespace {

void buildLanes(const Trace& t, TimelineIndex& x) {
    const SliceTable& s = t.slices();
    x.lanes.assign(t.tracks().size(), {});
    x.samples.reserve(t.tracks().size());
    x.maxEnds.reserve(t.tracks().size());
    std::vector<size_t> counts;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        auto& lanes = x.lanes[ti];
        const size_t n = std::clamp<size_t>(size_t(tr.maxDepth) + 1, 1, TimelineIndex::kMaxLanes);
        lanes.resize(n);
        counts.assign(n, 0);
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) ++counts[std::min<size_t>(s.depth[i], n - 1)];
        for (size_t d = 0; d < n; ++d) lanes[d].reserve(counts[d]);
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) lanes[std::min<size_t>(s.depth[i], n - 1)].push_back(i);
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

void buildCounters(const Trace& t, TimelineIndex& x) {
    const SliceTable& s = t.slices();
    std::map<int32_t, bool> devices;
    for (const TrackInfo& tr : t.tracks())
        if (tr.kind == TrackKind::GpuStream) devices[t.process(tr.process).gpuDevice] = true;
    for (const auto& [dev, unused] : devices) {
        (void)unused;
        CounterSeries util;
        util.kind = CounterKind::Utilization;
        util.device = dev;
        util.busy = analysis::gpuBusyIntervals(t, dev, false);
        util.unit = "%";
        x.counters.push_back(std::move(util));
        // Launch queue: +1 when a launch call returns, -1 when its work starts.
        std::vector<std::pair<int64_t, int>> ev;
        for (const TrackInfo& tr : t.tracks()) {
            if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != dev) continue;
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
            if (!q.steps.empty() && q.steps.back().first == ts) q.steps.back().second = depth;
            else q.steps.emplace_back(ts, depth);
            q.maxValue = std::max(q.maxValue, double(depth));
        }
        if (!q.steps.empty()) x.counters.push_back(std::move(q));
    }
    // Allocator memory, per device (CUDA) and for the host.
    std::map<std::pair<int, int>, CounterSeries> mem;
    for (const MemorySample& m : t.memorySamples()) {
        if (m.totalAllocated < 0) continue;
        const int dev = m.deviceType == 1 ? m.deviceId : -1;
        CounterSeries& cs = mem[{m.deviceType, dev}];
        cs.kind = CounterKind::Memory;
        cs.device = dev;
        cs.unit = "MB";
        cs.steps.emplace_back(m.ts, double(m.totalAllocated) / 1e6);
        cs.maxValue = std::max(cs.maxValue, double(m.totalAllocated) / 1e6);
    }
    for (auto& [k, cs] : mem) x.counters.push_back(std::move(cs));
    for (CounterSeries& c : x.counters) c.prepare();
}

} // namespace

std::shared_ptr<const TimelineIndex> TimelineIndex::build(const Trace& t) {
    auto x = std::make_shared<TimelineIndex>();
    buildLanes(t, *x);
    buildCounters(t, *x);
    return x;
}

// ---------------------------------------------------------------- layout

void TimelineLayout::build(std::shared_ptr<const Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
                           std::shared_ptr<const TimelineIndex> index) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_rows.clear();
    m_groups.clear();
    m_index.reset();
    if (!m_trace) return;
    const Trace& t = *m_trace;
    m_index = index ? std::move(index) : TimelineIndex::build(t);
    m_startNs = t.startNs();
    m_endNs = t.endNs();
    const std::vector<CounterSeries>& counters = m_index->counters;

    ProcessId current;
    for (TrackId tid : t.displayOrder()) {
        const TrackInfo& tr = t.track(tid);
        if (tr.sliceEnd == tr.sliceBegin) continue;  // metadata-only threads
        if (tr.process != current) {
            current = tr.process;
            const ProcessInfo& p = t.process(current);
            TimelineGroup g;
            g.label = groupLabel(t, p);
            g.process = current;
            g.device = p.gpuDevice;
            g.collapsed = tr.kind == TrackKind::Other;
            m_groups.push_back(g);
            TimelineRow header;
            header.kind = RowKind::Group;
            header.group = static_cast<int>(m_groups.size()) - 1;
            header.label = g.label;
            m_rows.push_back(header);
            // Counter tracks of this group.
            for (size_t ci = 0; ci < counters.size(); ++ci) {
                const CounterSeries& cs = counters[ci];
                const bool gpuCounter = cs.kind != CounterKind::Memory || cs.device >= 0;
                const bool mine = gpuCounter ? (p.gpuDevice >= 0 && cs.device == p.gpuDevice)
                                             : (p.gpuDevice < 0 && !p.key.isString() && p.key.number >= 0);
                if (!mine) continue;
                TimelineRow r;
                r.kind = RowKind::Counter;
                r.group = header.group;
                r.counter = static_cast<int>(ci);
                r.label = cs.kind == CounterKind::Utilization ? "GPU utilisation"
                          : cs.kind == CounterKind::QueueDepth ? "Launch queue depth"
                          : cs.device >= 0                     ? "GPU memory allocated"
                                                               : "Host memory allocated";
                m_rows.push_back(r);
            }
        }
        TimelineRow r;
        r.kind = RowKind::Slices;
        r.group = static_cast<int>(m_groups.size()) - 1;
        r.track = tid;
        r.lanes = std::clamp<int>(tr.maxDepth + 1, 1, kMaxLanes);
        r.label = QString::fromStdString(std::string(t.str(tr.name))).trimmed();
        if (tr.kind == TrackKind::CpuThread && !tr.key.isString()) r.sublabel = QString("tid %1").arg(tr.key.number);
        m_rows.push_back(r);
    }
    relayout();
}

void TimelineLayout::setCollapsed(int group, bool collapsed) {
    if (group < 0 || static_cast<size_t>(group) >= m_groups.size()) return;
    m_groups[static_cast<size_t>(group)].collapsed = collapsed;
    relayout();
}

void TimelineLayout::relayout() {
    int y = 0;
    for (TimelineRow& r : m_rows) {
        const bool collapsed = r.group >= 0 && m_groups[static_cast<size_t>(r.group)].collapsed;
        r.visible = r.kind == RowKind::Group || !collapsed;
        r.y = y;
        r.height = !r.visible                   ? 0
                   : r.kind == RowKind::Group   ? kGroupHeight
                   : r.kind == RowKind::Counter ? kCounterHeight
                                                : r.lanes * kLaneHeight + 4;
        y += r.height;
    }
    m_totalHeight = y;
}

int TimelineLayout::rowAt(int y) const {
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const TimelineRow& r) { return v < r.y; });
    while (it != m_rows.begin()) {
        --it;
        if (it->visible && y < it->y + it->height) return static_cast<int>(it - m_rows.begin());
        if (it->visible) break;
    }
    return -1;
}

int TimelineLayout::rowOfTrack(TrackId track) const {
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].kind == RowKind::Slices && m_rows[i].track == track) return static_cast<int>(i);
    return -1;
}

std::vector<int> TimelineLayout::rowsForDevice(int32_t device) const {
    std::vector<int> out;
    const analysis::AnalysisResult* a = m_analysis.get();
    std::vector<TrackId> launchThreads;
    if (a && m_trace) {
        for (const auto& d : a->devices)
            if (d.device == device)
                for (const auto& g : d.idle.gaps)
                    if (g.launch.valid()) {
                        const TrackId th = m_trace->slices().track[g.launch.index()];
                        if (std::find(launchThreads.begin(), launchThreads.end(), th) == launchThreads.end())
                            launchThreads.push_back(th);
                    }
    }
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const TimelineRow& r = m_rows[i];
        const int32_t gd = r.group >= 0 ? m_groups[static_cast<size_t>(r.group)].device : -1;
        if (r.kind != RowKind::Group && (gd == device || device < 0) && gd >= 0) out.push_back(static_cast<int>(i));
        else if (r.kind == RowKind::Slices &&
                 std::find(launchThreads.begin(), launchThreads.end(), r.track) != launchThreads.end())
            out.push_back(static_cast<int>(i));
    }
    return out;
}

} // namespace stallscope::gui
