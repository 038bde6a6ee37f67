// Warm-up: leading steps (or a leading stretch) whose GPU idle time is one-off work. The
// rules and why are in docs/analysis.md "Warm-up".
#include "warmup.h"

#include <algorithm>
#include <array>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

constexpr size_t idx(IdleCause c) {
    return static_cast<size_t>(c);
}

/// One-off idle of one step (set-up, code generation, allocator): set-up and code
/// generation always; allocator time when it is growth (the last step spends under a tenth of
/// it in the allocator).
std::array<int64_t, 3> oneOffIn(const StepMetrics& st, int64_t lastAllocator) {
    const int64_t alloc = st.idleByCause[idx(IdleCause::Allocator)];
    const bool growth = model::satMul(lastAllocator, 10) <= alloc;
    return {st.idleByCause[idx(IdleCause::Setup)], st.idleByCause[idx(IdleCause::Jit)],
            growth ? alloc : 0};
}

/// The GPU idle charged to set-up, code generation and allocation inside [lo, hi).
std::array<int64_t, 3> oneOffWithin(const DeviceMetrics& d, int64_t lo, int64_t hi) {
    std::array<int64_t, 3> out{};
    size_t k = 0;
    for (IdleCause cause : {IdleCause::Setup, IdleCause::Jit, IdleCause::Allocator})
        out[k++] = lengthWithin(d.idle.intervals[idx(cause)], lo, hi);
    return out;
}

struct Found {
    int64_t endNs = 0;
    std::vector<int64_t> steps;
    bool whole = false;
    std::array<int64_t, 3> oneOff{}; // idle in it: set-up, code generation, allocation
};

std::optional<Found> fromSteps(const Context& c, const DeviceMetrics& d, const Intervals& busy) {
    if (d.steps.empty()) return std::nullopt;
    const int64_t lastAlloc = d.steps.size() > 1
                                  ? d.steps.back().idleByCause[idx(IdleCause::Allocator)]
                                  : INT64_MAX / 16; // one step: no growth to tell
    Found f;
    size_t w = 0;
    for (; w < d.steps.size(); ++w) {
        const StepMetrics& st = d.steps[w];
        const int64_t len = st.endNs - st.startNs;
        const std::array<int64_t, 3> o = oneOffIn(st, lastAlloc);
        if (len <= 0 || double(o[0] + o[1] + o[2]) < kWarmupStepShare * double(len)) break;
        f.steps.push_back(st.number);
    }
    if (w == 0) return std::nullopt;
    // Any step after the warm-up is a steady part to analyse, however short, when the GPU
    // works in it: a steady part without GPU work has nothing to measure.
    f.whole = w == d.steps.size() || lengthWithin(busy, d.steps[w].startNs, c.window.endNs) == 0;
    f.endNs = f.whole ? c.window.endNs : d.steps[w].startNs;
    f.oneOff = oneOffWithin(d, c.window.startNs, f.endNs);
    return f;
}

std::optional<Found> fromStretch(const Context& c, const DeviceMetrics& d) {
    Intervals oneOff;
    for (IdleCause k : {IdleCause::Setup, IdleCause::Jit, IdleCause::Allocator})
        oneOff.insert(oneOff.end(), d.idle.intervals[idx(k)].begin(),
                      d.idle.intervals[idx(k)].end());
    oneOff = mergeIntervals(std::move(oneOff));
    const int64_t w0 = c.window.startNs;
    int64_t covered = 0, best = INT64_MIN, bestCovered = 0;
    for (const Interval& iv : oneOff) {
        covered += iv.length();
        if (double(covered) >= kWarmupStretchCover * double(iv.end - w0))
            best = iv.end, bestCovered = covered;
    }
    if (best == INT64_MIN || double(bestCovered) < kWarmupMinShare * double(c.window.length()))
        return std::nullopt;
    Found f;
    f.whole = double(c.window.endNs - best) < kWarmupMinSteadyShare * double(c.window.length());
    f.endNs = f.whole ? c.window.endNs : best;
    f.oneOff = oneOffWithin(d, w0, f.endNs);
    return f;
}

/// The one-off calls starting inside [lo, hi) on the host: allocation, set-up and code
/// generation calls by name, and first launches that took long (Context::slowFirstUses).
std::vector<Warmup::Calls> oneOffCalls(const Context& c, int64_t lo, int64_t hi) {
    const SliceTable& s = c.trace.slices();
    std::map<std::pair<StringId, IdleCause>, Warmup::Calls> byName;
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(TrackId(ti), lo);
             i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (s.start[i] < lo) continue;
            IdleCause k;
            if (c.is(i, kNcAlloc))
                k = IdleCause::Allocator;
            else if (c.is(i, kNcSetupCall) || c.isSlowFirstUse(i))
                k = IdleCause::Setup;
            else if (c.is(i, kNcCompile) || (c.is(i, kNcJit) && isLaunchSide(s.kind[i])))
                k = IdleCause::Jit;
            else
                continue;
            Warmup::Calls& e = byName[{s.name[i], k}];
            if (e.count == 0) e.name = std::string(c.trace.str(s.name[i])), e.cause = k;
            ++e.count;
            e.ns += s.dur[i];
        }
    }
    std::vector<Warmup::Calls> out;
    for (auto& [key, e] : byName) out.push_back(std::move(e));
    std::stable_sort(out.begin(), out.end(),
                     [](const Warmup::Calls& a, const Warmup::Calls& b) { return a.ns > b.ns; });
    if (out.size() > 8) out.resize(8);
    return out;
}

} // namespace

std::optional<Warmup> findWarmup(const Context& c, const AnalysisResult& r) {
    if (c.options.window.kind != WindowKind::Steps || !c.options.excludeWarmup ||
        c.options.window.fromNs != INT64_MIN || c.window.length() <= 0)
        return std::nullopt;
    std::optional<Warmup> best;
    for (const DeviceMetrics& d : r.devices) {
        const DeviceActivity* act = nullptr;
        for (const DeviceActivity& a : c.devices)
            if (a.device == d.device) act = &a;
        if (!act) continue;
        const std::optional<Found> f =
            c.steps.empty() ? fromStretch(c, d) : fromSteps(c, d, act->busy);
        if (!f) continue;
        Warmup w;
        w.device = d.device;
        w.startNs = c.window.startNs;
        w.endNs = f->endNs;
        w.wholeStartNs = c.window.startNs;
        w.wholeEndNs = c.window.endNs;
        w.wholeDescription = c.window.description;
        w.steps = f->steps;
        w.wholeWindow = f->whole;
        w.oneOffNs = f->oneOff;
        const auto total = [](const Warmup& x) {
            return x.oneOffNs[0] + x.oneOffNs[1] + x.oneOffNs[2];
        };
        if (!best || total(w) > total(*best)) best = std::move(w);
    }
    if (best) best->calls = oneOffCalls(c, best->startNs, best->endNs);
    return best;
}

} // namespace stallscope::analysis::detail
