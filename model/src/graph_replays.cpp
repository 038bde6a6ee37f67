// Graph replays from the correlation index (graph_replays.h).
#include "stallscope/model/graph_replays.h"

#include "stallscope/model/trace.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>

namespace stallscope::model {

namespace {

/// "3", "3.0" -> 3; anything else (-1, a string) -> -1.
int64_t nonNegative(const std::string& json) {
    int64_t v = -1;
    const char* b = json.data();
    const auto [p, ec] = std::from_chars(b, b + json.size(), v);
    return ec == std::errc() && p != b && v >= 0 ? v : -1;
}

} // namespace

std::vector<GraphReplay> graphReplays(const Trace& t) {
    std::vector<GraphReplay> out;
    const SliceTable& s = t.slices();
    std::unordered_map<uint32_t, bool> isGraphLaunch;   // by name id
    std::map<std::pair<uint32_t, uint32_t>, size_t> at; // (launch, stream) -> entry
    for (const CorrelationEntry& e : t.launchIndex()) {
        const uint32_t l = e.slice.index();
        auto [it, fresh] = isGraphLaunch.try_emplace(s.name[l].index(), false);
        if (fresh) it->second = t.str(s.name[l]).find("GraphLaunch") != std::string_view::npos;
        if (!it->second) continue;
        for (const CorrelationEntry& w : t.gpuWorkOf(e.slice)) {
            const uint32_t i = w.slice.index();
            if (!isGpuWork(s.kind[i]) || t.track(s.track[i]).kind != TrackKind::GpuStream) continue;
            const auto [pos, added] = at.try_emplace({l, s.track[i].index()}, out.size());
            if (added) {
                out.push_back({e.slice, s.track[i], -1, s.start[i], s.end(i), 0, w.slice});
            }
            GraphReplay& r = out[pos->second];
            ++r.items;
            if (s.start[i] < r.startNs) r.startNs = s.start[i], r.first = w.slice;
            r.endNs = std::max(r.endNs, s.end(i));
        }
    }
    // Graph ids: the first item's args of each launch (all streams of a launch share it).
    std::map<uint32_t, int64_t> idOf; // launch -> graph id
    for (const GraphReplay& r : out) idOf.try_emplace(r.launch.index(), -1);
    std::vector<SliceId> firsts;
    std::vector<uint32_t> launches;
    for (const GraphReplay& r : out)
        if (r.first.valid() && (launches.empty() || launches.back() != r.launch.index())) {
            firsts.push_back(r.first);
            launches.push_back(r.launch.index());
        }
    bool any = false;
    for (size_t from = 0; from < firsts.size();) {
        const size_t n = any ? firsts.size() - from : std::min<size_t>(16, firsts.size() - from);
        const std::vector<SliceId> batch(firsts.begin() + long(from),
                                         firsts.begin() + long(from + n));
        t.slicesArgs(batch, [&](size_t k, bool ok, std::vector<ArgValue>& args) {
            if (!ok) return;
            for (const ArgValue& a : args)
                if (a.key == "graph id") {
                    const int64_t id = nonNegative(a.json);
                    if (id >= 0) idOf[launches[from + k]] = id, any = true;
                }
        });
        from += n;
        if (!any) break;
    }
    for (GraphReplay& r : out) r.graphId = idOf[r.launch.index()];
    std::sort(out.begin(), out.end(), [](const GraphReplay& a, const GraphReplay& b) {
        return a.stream != b.stream ? a.stream.index() < b.stream.index() : a.startNs < b.startNs;
    });
    return out;
}

const GraphReplay* replayHolding(const std::vector<GraphReplay>& replays, const Trace& t,
                                 SliceId work) {
    if (replays.empty() || !work.valid()) return nullptr;
    const SliceTable& s = t.slices();
    const TrackId stream = s.track[work.index()];
    const int64_t at = s.start[work.index()];
    auto it = std::upper_bound(replays.begin(), replays.end(), std::make_pair(stream, at),
                               [](const std::pair<TrackId, int64_t>& k, const GraphReplay& r) {
                                   return k.first != r.stream ? k.first.index() < r.stream.index()
                                                              : k.second < r.startNs;
                               });
    if (it == replays.begin()) return nullptr;
    --it;
    if (it->stream != stream) return nullptr;
    const SliceId l = t.launchOf(work);
    return l == it->launch ? &*it : nullptr;
}

} // namespace stallscope::model
