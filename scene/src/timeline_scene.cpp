#include "stallscope/scene/timeline_scene.h"

#include "stallscope/base/text_format.h"

#include <map>

namespace stallscope::scene {

using namespace model;

Ticks placeTicks(const SceneViewport& vp, int64_t origin, double minPx) {
    Ticks out;
    const int64_t step = std::max<int64_t>(1, base::tickStep(vp.scale(), minPx));
    out.step = step;
    const int64_t fromOrigin = satSub(vp.startNs, origin);
    int64_t q = fromOrigin / step; // floor division, without overflow at INT64_MIN
    if (fromOrigin % step < 0 && q > kMinNs / step) --q;
    const int64_t t1 = vp.endNs();
    // Ticks are counted, not walked to a time: at the ends of int64 `rel += step` would wrap.
    const double width = std::max(0.0, vp.right - vp.left);
    const int ticks = static_cast<int>(std::min(width * vp.scale() / double(step), 4000.0)) + 2;
    int64_t rel = q * step;
    for (int k = 0; k < ticks; ++k) {
        const int64_t at = satAdd(origin, rel);
        if (at > t1) break;
        const double x = vp.xOf(at);
        if (x >= vp.left && x <= vp.right) out.major.push_back({x, rel});
        for (int m = 1; m < kMinorTicks && step >= kMinorTicks; ++m) {
            const double xm = vp.xOf(satAdd(at, step / kMinorTicks * m));
            if (xm >= vp.left && xm <= vp.right) out.minor.push_back(xm);
        }
        int64_t next;
        if (__builtin_add_overflow(rel, step, &next)) break; // no later tick is representable
        if (!STALLSCOPE_ADVANCED(rel, next)) break;
        rel = next;
    }
    return out;
}

std::vector<Shade> placeShades(const model::Intervals& ranges, const SceneViewport& vp) {
    std::vector<Shade> out;
    const int64_t t1 = vp.endNs();
    for (const auto& iv : ranges) {
        if (iv.end < vp.startNs || iv.start > t1) continue;
        const double a = std::max(vp.xOf(iv.start), vp.left);
        const double b = std::min(vp.xOf(iv.end), vp.right);
        if (b < a) continue;
        const double w = std::max(kMinShadeWidth, b - a);
        out.push_back({a, a + w, w > kShadeLabelWidth});
    }
    return out;
}

namespace {

/// Slices of `track` overlapping [lo, hi), and the position range in its slice table.
std::pair<uint32_t, uint32_t> within(const Trace& t, TrackId track, int64_t lo, int64_t hi) {
    const uint32_t a = t.firstSliceEndingAtOrAfter(track, lo),
                   b = t.firstSliceStartingAfter(track, hi);
    return {a, std::max(a, b)};
}

bool onDevice(const Trace& t, const TrackInfo& tr, int32_t device) {
    return tr.kind == TrackKind::GpuStream &&
           (device < 0 || t.process(tr.process).gpuDevice == device);
}

std::vector<TrackId> topTracks(std::map<uint32_t, size_t> counts, size_t max) {
    std::vector<std::pair<size_t, uint32_t>> order;
    for (const auto& [ti, n] : counts)
        if (n > 0) order.emplace_back(n, ti);
    // Most first; equal counts in track order.
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<TrackId> out;
    for (size_t i = 0; i < order.size() && i < max; ++i) out.push_back(TrackId(order[i].second));
    return out;
}

} // namespace

std::vector<TrackId> launchingThreads(const Trace& t, int32_t device, int64_t lo, int64_t hi,
                                      size_t max) {
    std::map<uint32_t, size_t> launches, busy;
    const SliceTable& s = t.slices();
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        const auto [a, b] = within(t, TrackId(ti), lo, hi);
        if (onDevice(t, tr, device)) {
            for (uint32_t i = a,
                          e = std::min<uint32_t>(b, a + static_cast<uint32_t>(kRowScanLimit));
                 i < e; ++i) {
                const SliceId l = t.launchOf(SliceId(i));
                if (l.valid()) ++launches[s.track[l.index()].index()];
            }
        } else if (tr.kind == TrackKind::CpuThread) {
            busy[ti] = b - a;
        }
    }
    return topTracks(launches.empty() ? busy : launches, max);
}

std::vector<TrackId> deviceStreams(const Trace& t, int32_t device, int64_t lo, int64_t hi,
                                   size_t max) {
    std::vector<std::pair<size_t, uint32_t>> order;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (!onDevice(t, tr, device)) continue;
        const auto [a, b] = within(t, TrackId(ti), lo, hi);
        if (b > a || device >= 0) order.emplace_back(b - a, ti);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<TrackId> out;
    for (size_t i = 0; i < order.size() && i < max; ++i) out.push_back(TrackId(order[i].second));
    std::sort(out.begin(), out.end());
    return out;
}

DrawList buildScene(const Trace& t, const TimelineIndex& index, const SceneRequest& rq) {
    DrawList dl;
    const SliceTable& sl = t.slices();
    for (uint32_t ri = 0; ri < rq.rows.size() && !dl.truncated; ++ri) {
        const SceneRow& row = rq.rows[ri];
        const int lanes = std::min(row.lanes, index.laneCount(row.track));
        for (int d = std::max(0, row.firstLane); d < lanes && !dl.truncated; ++d) {
            const TimelineIndex::Lane& lane = index.lane(row.track, d);
            if (lane.empty()) continue;
            ++dl.lanesVisited;
            walkLane(index, sl, row.track, d, rq.viewport, [&](const LaneItem& it) {
                if (dl.items.size() >= rq.maxItems) {
                    dl.truncated = true;
                    return;
                }
                LaneDraw draw;
                draw.row = ri;
                draw.lane = static_cast<uint16_t>(d);
                draw.merged = it.merged;
                draw.labelled = !it.merged && it.x1 - it.x0 >= kMinLabelWidth;
                draw.slice = lane[it.first];
                draw.first = it.first;
                draw.last = it.last;
                draw.x0 = it.x0;
                draw.x1 = it.x1;
                (it.merged ? dl.runs : dl.slices) += 1;
                dl.labels += draw.labelled;
                dl.items.push_back(draw);
            });
        }
    }
    dl.ticks = placeTicks(rq.viewport, rq.origin, rq.tickMinPx);
    if (rq.shaded) dl.shades = placeShades(*rq.shaded, rq.viewport);
    return dl;
}

std::vector<ReplayDraw> placeReplays(const TimelineIndex& index, model::TrackId stream,
                                     const SceneViewport& vp) {
    std::vector<ReplayDraw> out;
    const auto& all = index.graphReplays;
    const int64_t t0 = vp.startNs, t1 = vp.endNs();
    // A stream runs its replays one after another: from the last one starting before t0.
    auto it = std::lower_bound(
        all.begin(), all.end(), std::make_pair(stream, t0),
        [](const model::GraphReplay& r, std::pair<model::TrackId, int64_t> k) {
            return r.stream != k.first ? r.stream.index() < k.first.index() : r.startNs < k.second;
        });
    if (it != all.begin() && std::prev(it)->stream == stream) --it;
    for (; it != all.end() && it->stream == stream && it->startNs < t1; ++it) {
        if (it->endNs <= t0) continue;
        const double x0 = std::max(vp.xOf(it->startNs), vp.left - 2.0);
        const double x1 = std::min(vp.xOf(it->endNs), vp.right + 2.0);
        if (x1 - x0 >= kMinSliceWidth) out.push_back({size_t(it - all.begin()), x0, x1});
    }
    return out;
}

} // namespace stallscope::scene
