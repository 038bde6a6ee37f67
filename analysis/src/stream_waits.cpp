// Stream waits resolved to the work they waited for (stream_waits.h).
#include "stream_waits.h"

#include "analysis_context.h"
#include "arg_values.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

/// The launch-side slice with correlation `corr` in `process` (the only one when the trace
/// has one: a wait's own call may be missing).
SliceId callWith(const Context& c, uint32_t corr, ProcessId process) {
    const auto calls = c.launchesWith(corr);
    for (const CorrelationEntry& e : calls)
        if (c.trace.track(c.trace.slices().track[e.slice.index()]).process == process)
            return e.slice;
    return calls.size() == 1 ? calls.front().slice : SliceId();
}

} // namespace

std::vector<StreamWait> findStreamWaits(const Context& c) {
    std::vector<StreamWait> out;
    const StringId name = c.trace.strings().find("Stream Wait Event");
    if (!name.valid()) return out;
    const Trace& t = c.trace;
    const SliceTable& s = t.slices();
    std::vector<SliceId> syncs;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
            if (s.kind[i] == EventKind::CudaSync && s.name[i] == name) syncs.emplace_back(i);
    }
    struct Read {
        int64_t onStream = -1, record = -1;
    };
    std::vector<Read> read(syncs.size());
    t.slicesArgs(syncs, [&](size_t k, bool ok, std::vector<ArgValue>& args) {
        if (!ok) return;
        for (const ArgValue& a : args) {
            // -1 (Kineto before its fix, or a wait it could not resolve) reads as absent.
            if (a.key == "wait_on_stream") read[k].onStream = argInteger(a.json).value_or(-1);
            if (a.key == "wait_on_cuda_event_record_corr_id")
                read[k].record = argInteger(a.json).value_or(-1);
        }
    });
    // The work of each stream a wait names, by launch start: (stream id, host process).
    std::map<std::pair<int64_t, uint32_t>, std::vector<std::pair<int64_t, uint32_t>>> launched;
    for (size_t k = 0; k < syncs.size(); ++k) {
        const uint32_t i = syncs[k].index();
        if (read[k].onStream < 0 || read[k].record < 0) continue;
        const TrackInfo& tr = t.track(s.track[i]);
        StreamWait w;
        w.sync = i;
        w.waiting = tr.syncOf.valid() ? tr.syncOf : s.track[i];
        w.atNs = s.start[i];
        w.onStream = read[k].onStream;
        const SliceId own = c.launchOf(i); // the cudaStreamWaitEvent call
        w.record = callWith(c, uint32_t(read[k].record),
                            own.valid() ? t.track(s.track[own.index()]).process : ProcessId());
        if (w.record.valid())
            launched[{w.onStream, t.track(s.track[w.record.index()]).process.index()}];
        out.push_back(w);
    }
    for (uint32_t ti = 0; ti < t.tracks().size() && !launched.empty(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream || tr.syncOf.valid() || tr.key.isString()) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!isGpuWork(s.kind[i])) continue;
            const SliceId l = c.launchOf(i);
            if (!l.valid()) continue;
            const auto it =
                launched.find({tr.key.number, t.track(s.track[l.index()]).process.index()});
            if (it != launched.end()) it->second.emplace_back(s.start[l.index()], i);
        }
    }
    for (auto& [key, v] : launched) std::sort(v.begin(), v.end());
    for (StreamWait& w : out) {
        if (!w.record.valid()) continue;
        const auto it =
            launched.find({w.onStream, t.track(s.track[w.record.index()]).process.index()});
        if (it == launched.end()) continue;
        const int64_t recorded = s.start[w.record.index()];
        const auto after = std::lower_bound(it->second.begin(), it->second.end(),
                                            std::pair<int64_t, uint32_t>(recorded, 0));
        if (after != it->second.begin()) w.awaited = SliceId(std::prev(after)->second);
    }
    std::sort(out.begin(), out.end(), [](const StreamWait& a, const StreamWait& b) {
        return a.waiting != b.waiting ? a.waiting.index() < b.waiting.index() : a.atNs < b.atNs;
    });
    return out;
}

const StreamWait* waitEndingIn(const Context& c, uint32_t work, SliceId launch, int64_t lo,
                               int64_t hi) {
    const std::vector<StreamWait>& waits = c.streamWaits;
    if (waits.empty() || !launch.valid()) return nullptr;
    const SliceTable& s = c.trace.slices();
    const TrackId stream = s.track[work];
    const int64_t launchedAt = s.start[launch.index()];
    auto it = std::upper_bound(waits.begin(), waits.end(), std::make_pair(stream, launchedAt),
                               [](const std::pair<TrackId, int64_t>& k, const StreamWait& w) {
                                   return k.first != w.waiting ? k.first.index() < w.waiting.index()
                                                               : k.second < w.atNs;
                               });
    const StreamWait* best = nullptr;
    for (int n = 0; n < 8 && it != waits.begin(); ++n) {
        --it;
        if (it->waiting != stream) break;
        if (!it->awaited.valid()) continue;
        const int64_t end = s.end(it->awaited.index());
        if (end > lo && end <= hi && (!best || end > s.end(best->awaited.index()))) best = &*it;
    }
    return best;
}

} // namespace stallscope::analysis::detail
