#include "stallscope/analysis/operator_groups.h"

#include "arg_values.h"
#include "args_reader.h"
#include "stats_tables.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;

namespace {

/// Frames of a "Call stack" argument ("a.py(12): f;b.py(3): g"), innermost first.
std::string framesOf(std::string_view stack) {
    std::string out;
    size_t at = 0;
    while (at < stack.size()) {
        size_t end = stack.find(';', at);
        if (end == std::string_view::npos) end = stack.size();
        std::string_view f = stack.substr(at, end - at);
        while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
        if (!f.empty()) out += (out.empty() ? "" : "\n") + std::string(f);
        at = end + 1;
    }
    return out;
}

constexpr size_t kMaxFrames = 64;

} // namespace

OperatorGroups groupOperators(const Trace& t, const AnalysisResult& r, OperatorGrouping g,
                              const std::atomic<bool>* cancel) {
    OperatorGroups out;
    const SliceTable& s = t.slices();
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    const detail::StepRanges isStepRange(t);
    std::set<int32_t> devices;
    for (const DeviceMetrics& d : r.devices) devices.insert(d.device);

    // GPU work of the analysed devices, charged to the operators around its launch.
    detail::LaunchedGpu launched(s.size());
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream || !devices.count(t.process(tr.process).gpuDevice))
            continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
            if (isGpuWork(s.kind[i]) && detail::startsInWindow(s, i, lo, hi))
                launched.charge(s, t.launchOf(SliceId(i)), s.dur[i], isStepRange);
    }

    // Each operator's detail, read once, on several threads: reading the args back from the
    // file is most of the cost (the table then asks for a parent again for its self time).
    auto detailOfArgs = [&](uint32_t i, bool ok, const std::vector<ArgValue>& args) -> std::string {
        if (g == OperatorGrouping::Name) return {};
        if (ok) {
            if (g == OperatorGrouping::InputShapesAndTypes) {
                std::string dims, types;
                for (const ArgValue& a : args) {
                    if (a.key == "Input Dims" || a.key == "Input dims")
                        dims = detail::compactJson(a.json);
                    if (a.key == "Input type") types = detail::compactJson(a.json);
                }
                return dims.empty() && types.empty() ? std::string() : dims + "\n" + types;
            }
            for (const ArgValue& a : args) {
                if (g == OperatorGrouping::InputShapes &&
                    (a.key == "Input Dims" || a.key == "Input dims"))
                    return detail::compactJson(a.json);
                if (g == OperatorGrouping::CallStack && a.key == "Call stack")
                    if (auto v = detail::argString(a.json)) return framesOf(*v);
            }
        }
        if (g != OperatorGrouping::CallStack) return {};
        std::string frames; // the python_function frames around it, innermost first
        size_t n = 0;
        for (SliceId p = s.parent[i]; p.valid() && n < kMaxFrames; p = s.parent[p.index()]) {
            if (s.kind[p.index()] != EventKind::PythonFunction) continue;
            frames += (frames.empty() ? "" : "\n") + std::string(t.str(s.name[p.index()]));
            ++n;
        }
        return frames;
    };
    auto detailText = [&](uint32_t i, std::vector<ArgValue>& args, std::string& error) {
        const bool ok = g != OperatorGrouping::Name && t.sliceArgs(SliceId(i), args, error);
        return detailOfArgs(i, ok, args);
    };
    std::unordered_map<std::string, uint32_t> detailIds{{std::string(), 0}};
    std::vector<const std::string*> details{&detailIds.begin()->first};
    std::unordered_map<uint32_t, uint32_t> detailOf; // slice -> detail id
    if (g != OperatorGrouping::Name) {
        std::vector<uint32_t> opSlices; // the operators starting in the window
        for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
            const TrackInfo& tr = t.tracks()[ti];
            if (tr.kind != TrackKind::CpuThread) continue;
            for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo);
                 i < tr.sliceEnd && s.start[i] < hi; ++i)
                if (s.kind[i] == EventKind::CpuOp && detail::startsInWindow(s, i, lo, hi) &&
                    !isStepRange(s.name[i]))
                    opSlices.push_back(i);
        }
        std::vector<std::string> texts(opSlices.size());
        const bool done = detail::readArgsInFileOrder(
            t, opSlices,
            [&](size_t k, bool ok, std::vector<ArgValue>& args) {
                texts[k] = detailOfArgs(opSlices[k], ok, args);
            },
            cancel);
        if (!done) {
            out.cancelled = true;
            return out;
        }
        detailOf.reserve(opSlices.size());
        for (size_t k = 0; k < opSlices.size(); ++k) {
            auto [d, added] = detailIds.try_emplace(std::move(texts[k]), uint32_t(details.size()));
            if (added) details.push_back(&d->first);
            detailOf.emplace(opSlices[k], d->second);
        }
    }
    std::vector<ArgValue> args;
    std::string error;
    auto key = [&](uint32_t i) -> uint64_t {
        if (g == OperatorGrouping::Name) return uint64_t(s.name[i].value); // detail 0: ""
        auto [it, fresh] = detailOf.try_emplace(i, 0);
        if (fresh) { // not among the window's operators (cannot happen): read it now
            auto [d, added] =
                detailIds.try_emplace(detailText(i, args, error), uint32_t(details.size()));
            if (added) details.push_back(&d->first);
            it->second = d->second;
        }
        return (uint64_t(it->second) << 32) | s.name[i].value;
    };
    bool stopped = false;
    detail::OperatorTable ops =
        detail::operatorTable(t, lo, hi, launched, isStepRange, [&](uint32_t i) {
            if (!stopped && cancel && cancel->load(std::memory_order_relaxed)) stopped = true;
            return stopped ? uint64_t(s.name[i].value) : key(i);
        });
    if (stopped) {
        out.cancelled = true;
        return out;
    }
    std::vector<OperatorStat> stats;
    std::vector<uint64_t> keys;
    for (auto& [k, o] : ops) {
        stats.push_back(o);
        keys.push_back(k);
    }
    std::vector<size_t> order(stats.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (stats[a].selfNs != stats[b].selfNs) return stats[a].selfNs > stats[b].selfNs;
        if (stats[a].count != stats[b].count) return stats[a].count > stats[b].count;
        return keys[a] < keys[b];
    });
    out.rows.reserve(order.size());
    for (size_t i : order) {
        const std::string& d = *details[keys[i] >> 32];
        out.calls += stats[i].count;
        if (!d.empty()) out.callsWithDetail += stats[i].count;
        out.rows.push_back({stats[i], d});
    }
    return out;
}

} // namespace stallscope::analysis
