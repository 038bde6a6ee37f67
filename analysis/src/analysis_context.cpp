#include "analysis_context.h"
#include "huge_pages.h"

#include "stallscope/analysis/call_catalogue.h"
#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/analysis/name_rules.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

void ByCorrelation::build(const std::vector<CorrelationEntry>& index) {
    m_index = &index;
    m_first.clear();
    // Sorted by correlation; kNoCorrelation is never in it.
    if (index.empty() || index.back().correlation >= 4 * index.size() + 4096) return;
    assignHuge(m_first, size_t(index.back().correlation) + 1, uint32_t(UINT32_MAX));
    for (size_t i = index.size(); i-- > 0;) m_first[index[i].correlation] = uint32_t(i);
}

std::span<const CorrelationEntry> ByCorrelation::find(uint32_t corr) const {
    if (corr == SliceTable::kNoCorrelation || !m_index) return {};
    const std::vector<CorrelationEntry>& index = *m_index;
    size_t lo = 0;
    if (!m_first.empty()) {
        if (corr >= m_first.size() || m_first[corr] == UINT32_MAX) return {};
        lo = m_first[corr];
    } else {
        lo = size_t(
            std::lower_bound(index.begin(), index.end(), CorrelationEntry{corr, SliceId(0)}) -
            index.begin());
    }
    size_t hi = lo;
    while (hi < index.size() && index[hi].correlation == corr) ++hi;
    return {index.data() + lo, hi - lo};
}

Context::Context(const Trace& t, const AnalysisOptions& o) : trace(t), options(o) {
    m_launches.build(t.launchIndex());
    m_gpuWork.build(t.gpuIndex());
    classifyNames();
    collectDevices();
    streamWaits = findStreamWaits(*this);
    if (anyNamed(kNcGraphLaunch)) graphReplays = model::graphReplays(t);
    findSlowFirstUses();
    findSteps();
    resolveWindow();
    markLaunchers();
}

bool Context::anyNamed(NameClass c) const {
    return (m_namedClasses & c) != 0;
}

namespace {
uint32_t classifyName(std::string_view n, CallFamily call) {
    uint32_t c = kNcKnown;
    if (names::isDataLoader(n)) c |= kNcDataLoader;
    if (names::isInputPreparation(n)) c |= kNcInputPrep;
    if (names::isOptimizer(n)) c |= kNcOptimizer;
    if (names::isIoLoggingCheckpoint(n)) c |= kNcIo;
    switch (call) {
    case CallFamily::Sync: c |= kNcSync; break;
    case CallFamily::CopySync: c |= kNcSyncCopy | kNcCopy; break;
    case CallFamily::Copy: c |= kNcCopy | kNcLaunch; break; // an async copy enqueues work
    case CallFamily::Launch: c |= kNcLaunch; break;
    case CallFamily::Stream: c |= kNcStream; break;
    case CallFamily::Alloc: c |= kNcAlloc; break;
    case CallFamily::Resource:
    case CallFamily::Module:
    case CallFamily::Capture: c |= kNcSetupCall; break;
    case CallFamily::Jit: c |= kNcJit; break;
    case CallFamily::Compile: c |= kNcJit | kNcCompile; break;
    case CallFamily::Query: c |= kNcQuery; break;
    case CallFamily::None:
    case CallFamily::Count: break;
    }
    if (n.find("GraphLaunch") != std::string_view::npos) c |= kNcGraphLaunch;
    const KernelClass k = classifyKernel(n);
    if (k.family == KernelFamily::Comm) c |= kNcComm;
    if (k.matmul()) c |= kNcGemm;
    if (k.tensorCore == TensorCoreUse::Yes) c |= kNcTensorCore;
    if (k.precision != Precision::Unknown) c |= kNcPrecisionNamed;
    if (k.matmul() && k.precision == Precision::FP32 && k.tensorCore != TensorCoreUse::Yes)
        c |= kNcFp32Matmul;
    if (k.library) c |= kNcLibraryKernel;
    if (names::isProfilerStep(n)) c |= kNcProfilerStep;
    if (names::isCompiledRegion(n)) c |= kNcCompiledRegion;
    if (names::isCaptureBegin(n)) c |= kNcCaptureBegin;
    if (names::isCaptureEnd(n)) c |= kNcCaptureEnd;
    if (names::isBackward(n)) c |= kNcBackward;
    return c;
}
} // namespace

// Every name a slice has, classified once: the string pool also holds categories, process
// and thread names, which no rule is asked about.
void Context::classifyNames() {
    m_nameClass.assign(trace.strings().size(), 0);
    m_callFamily.assign(trace.strings().size(), uint8_t(CallFamily::None));
    for (const StringId id : trace.slices().name) m_nameClass[id.index()] = 1;
    m_namedClasses = 0;
    for (uint32_t i = 0; i < m_nameClass.size(); ++i) {
        if (!m_nameClass[i]) continue;
        const std::string_view n = trace.str(StringId(i));
        const CallFamily call = classifyCall(n);
        m_callFamily[i] = uint8_t(call);
        m_nameClass[i] = classifyName(n, call);
        m_namedClasses |= m_nameClass[i];
    }
}

/// Calls that took long the first time: the first launch of each kernel (the launch of the
/// earliest GPU work of that name: a stream runs its work in launch order) and the first call
/// of each query or unknown runtime call, when it lasted kSlowFirstUseNs or more (lazy module
/// loading, context creation, library initialisation on first use). From the devices' work
/// and its launches (collectDevices), without a correlation lookup per call.
void Context::findSlowFirstUses() {
    const SliceTable& s = trace.slices();
    // By name (a StringId's index): the earliest work of that name and its launch, and the
    // earliest query or unknown runtime call of that name.
    const size_t names = trace.strings().size();
    std::vector<uint32_t> firstWork(names, UINT32_MAX), firstLaunch(names, UINT32_MAX);
    for (const DeviceActivity& d : devices)
        for (size_t k = 0; k < d.work.size(); ++k) {
            const uint32_t w = d.work[k];
            uint32_t& f = firstWork[s.name[w].index()];
            if (f == UINT32_MAX || s.start[w] < s.start[f]) {
                f = w;
                firstLaunch[s.name[w].index()] =
                    d.launch[k].valid() ? d.launch[k].index() : UINT32_MAX;
            }
        }
    for (uint32_t l : firstLaunch)
        if (l != UINT32_MAX && s.dur[l] >= kSlowFirstUseNs && callFamily(l) == CallFamily::Launch)
            slowFirstUses.push_back(l);
    std::vector<uint32_t> firstCall(names, UINT32_MAX);
    for (uint32_t ti = 0; ti < trace.tracks().size(); ++ti) {
        const TrackInfo& tr = trace.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!isLaunchSide(s.kind[i])) continue;
            const CallFamily f = callFamily(i);
            if (f != CallFamily::Query && f != CallFamily::None) continue;
            uint32_t& first = firstCall[s.name[i].index()];
            if (first == UINT32_MAX || s.start[i] < s.start[first]) first = i;
        }
    }
    for (uint32_t c : firstCall)
        if (c != UINT32_MAX && s.dur[c] >= kSlowFirstUseNs) slowFirstUses.push_back(c);
    std::sort(slowFirstUses.begin(), slowFirstUses.end());
}

int32_t Context::deviceOf(uint32_t slice) const {
    const TrackInfo& tr = trace.track(trace.slices().track[slice]);
    if (tr.kind != TrackKind::GpuStream) return -1;
    return trace.process(tr.process).gpuDevice;
}

const Step* Context::stepAt(int64_t ns) const {
    auto it = std::upper_bound(steps.begin(), steps.end(), ns,
                               [](int64_t v, const Step& s) { return v < s.startNs; });
    if (it == steps.begin()) return nullptr;
    --it;
    return ns < it->endNs ? &*it : nullptr;
}

void Context::collectDevices() {
    const SliceTable& s = trace.slices();
    std::map<int32_t, DeviceActivity> byDevice;
    for (uint32_t ti = 0; ti < trace.tracks().size(); ++ti) {
        const TrackInfo& tr = trace.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream) continue;
        const int32_t dev = trace.process(tr.process).gpuDevice;
        if (options.device >= 0 && dev != options.device) continue;
        DeviceActivity* d = nullptr; // created by the track's first GPU work
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!isGpuWork(s.kind[i])) continue;
            if (!d) {
                d = &byDevice[dev];
                d->device = dev;
                // At most this many more; grown geometrically (an exact reserve per stream
                // copied all the device's work again for each of 10^6 streams: quadratic).
                growHuge(d->work, d->work.size() + (tr.sliceEnd - i));
            }
            d->work.push_back(i);
        }
        if (d) d->streams.push_back(TrackId(ti));
    }
    std::vector<size_t> launchesPerThread(trace.tracks().size(), 0);
    for (auto& [dev, d] : byDevice) {
        // By start, then slice: one stream's work is in start order already.
        auto byStart = [&s](uint32_t a, uint32_t b) {
            return s.start[a] != s.start[b] ? s.start[a] < s.start[b] : a < b;
        };
        if (!std::is_sorted(d.work.begin(), d.work.end(), byStart))
            std::sort(d.work.begin(), d.work.end(), byStart);
        reserveHuge(d.launch, d.work.size());
        // Merged, the lists are at most this long: reserved, not grown by copies (pages
        // never written cost nothing).
        reserveHuge(d.busy, d.work.size());
        reserveHuge(d.kernelBusy, d.work.size());
        std::fill(launchesPerThread.begin(), launchesPerThread.end(), 0);
        for (uint32_t w : d.work) { // in start order: merged as they come
            const Interval iv{s.start[w], s.start[w] + s.dur[w]};
            appendMerged(d.busy, iv);
            if (s.kind[w] == EventKind::Kernel) appendMerged(d.kernelBusy, iv);
            const SliceId l = launchOf(w);
            d.launch.push_back(l);
            if (l.valid()) ++launchesPerThread[s.track[l.index()].index()];
        }
        size_t best = 0; // the first thread (by track) with the most launches
        for (uint32_t track = 0; track < launchesPerThread.size(); ++track)
            if (launchesPerThread[track] > best)
                best = launchesPerThread[track], d.mainLaunchThread = TrackId(track);
        devices.push_back(std::move(d));
    }
}

void Context::findSteps() {
    const SliceTable& s = trace.slices();
    std::map<int64_t, Step> byNumber;
    for (uint32_t ti = 0; ti < trace.tracks().size(); ++ti) {
        const TrackInfo& tr = trace.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!(nameClass(i) & kNcProfilerStep)) continue; // profilerStepNumber() >= 0
            const int64_t n = names::profilerStepNumber(trace.str(s.name[i]));
            if (n < 0) continue;
            auto [it, inserted] = byNumber.try_emplace(n);
            if (inserted || s.start[i] < it->second.startNs)
                it->second = Step{n, SliceId(i), s.start[i], s.start[i] + s.dur[i], s.start[i] + s.dur[i]};
        }
    }
    for (auto& [n, st] : byNumber) steps.push_back(st);
    if (steps.empty()) findIterations();
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.startNs < b.startNs; });
    // Kineto marks where it stopped recording ("Record Window End"); a step range still open
    // then is written out to some later time, and nothing was recorded after the mark. The
    // step ends at the mark (or its last recorded event, if later): the rest is not waiting.
    if (const StringId mark = trace.strings().find("Record Window End"); mark.valid()) {
        const InstantTable& in = trace.instants();
        int64_t recordEnd = INT64_MAX;
        for (size_t i = 0; i < in.size(); ++i)
            if (in.name[i] == mark) recordEnd = std::min(recordEnd, in.ts[i]);
        for (Step& st : steps) {
            if (recordEnd == INT64_MAX || st.startNs >= recordEnd || st.endNs <= recordEnd)
                continue;
            int64_t lastInside = recordEnd;
            for (uint32_t ti = 0; ti < trace.tracks().size(); ++ti) {
                const TrackInfo& tr = trace.tracks()[ti];
                for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
                    if (i != st.slice.index() && s.start[i] >= st.startNs && s.start[i] < st.endNs)
                        lastInside = std::max(lastInside, std::min(st.endNs, s.end(i)));
            }
            st.endNs = lastInside;
            clippedAtRecordEnd = true;
        }
    }
    for (Step& st : steps) st.gpuEndNs = gpuEndOfLaunchesIn(st.startNs, st.endNs);
}

namespace {
/// "step[DECODE bs=32]" -> "step[...]", "execute_32_context_0(sq0)_generation_32" ->
/// "execute_#_context_#(...)_generation_#": instances of one loop body share the key.
std::string iterationKey(std::string_view name) {
    std::string k;
    int depth = 0;
    for (size_t i = 0; i < name.size(); ++i) {
        const char ch = name[i];
        if (ch == '[' || ch == '(' || ch == '{') {
            if (depth++ == 0) k += ch, k += "...";
            continue;
        }
        if ((ch == ']' || ch == ')' || ch == '}') && depth > 0) {
            if (--depth == 0) k += ch;
            continue;
        }
        if (depth > 0) continue;
        if (ch >= '0' && ch <= '9') {
            if (k.empty() || k.back() != '#') k += '#';
            continue;
        }
        k += ch;
    }
    return k;
}
} // namespace

// No ProfilerStep: a serving loop (vLLM, SGLang, a generate loop) marks its iterations with
// user annotations. The outermost user annotations that launch most of the GPU work, grouped
// by their name with the numbers and bracketed parts taken out, are the iterations: the
// group holding the most launches, if it holds at least half of them and repeats.
void Context::findIterations() {
    const SliceTable& s = trace.slices();
    std::map<std::string, std::pair<size_t, std::vector<uint32_t>>>
        groups;                            // key -> launches, instances
    std::map<uint32_t, std::string> keyOf; // instance -> key
    size_t launches = 0;
    for (const CorrelationEntry& e : trace.launchIndex()) {
        if (trace.gpuWorkOf(e.slice).empty()) continue;
        ++launches;
        SliceId outer;
        for (SliceId p = s.parent[e.slice.index()]; p.valid(); p = s.parent[p.index()])
            if (s.kind[p.index()] == EventKind::UserAnnotation) outer = p;
        if (!outer.valid()) continue;
        auto [it, added] = keyOf.try_emplace(outer.index());
        if (added) {
            it->second = iterationKey(trace.str(s.name[outer.index()]));
            groups[it->second].second.push_back(outer.index());
        }
        ++groups[it->second].first;
    }
    const std::pair<size_t, std::vector<uint32_t>>* best = nullptr;
    std::string bestKey;
    for (const auto& [key, g] : groups)
        if (!best || g.first > best->first) best = &g, bestKey = key;
    // One instance is not a loop (a range around a whole program would take its start-up in).
    if (!best || 2 * best->first < launches || best->second.size() < 2) return;
    iterationName = bestKey;
    int64_t n = 0;
    std::vector<uint32_t> inst = best->second;
    std::sort(inst.begin(), inst.end(),
              [&s](uint32_t a, uint32_t b) { return s.start[a] < s.start[b]; });
    for (uint32_t i : inst) {
        Step st{n++, SliceId(i), s.start[i], s.end(i), s.end(i)};
        st.label = std::string(trace.str(s.name[i]));
        steps.push_back(std::move(st));
    }
}

/// End of the GPU work (on the analysed device, or any) launched by calls starting inside
/// [lo, hi]; at least hi.
int64_t Context::gpuEndOfLaunchesIn(int64_t lo, int64_t hi) const {
    const Trace& t = trace;
    const int32_t device = options.device;
    const SliceTable& s = t.slices();
    int64_t end = hi;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        auto first = s.start.begin() + tr.sliceBegin, last = s.start.begin() + tr.sliceEnd;
        const auto b = static_cast<uint32_t>(std::lower_bound(first, last, lo) - s.start.begin());
        const auto e = static_cast<uint32_t>(std::upper_bound(first, last, hi) - s.start.begin());
        for (uint32_t i = b; i < e; ++i) {
            if (!isLaunchSide(s.kind[i])) continue;
            for (const CorrelationEntry& g : gpuWorkOf(i)) {
                const uint32_t w = g.slice.index();
                if (!isGpuWork(s.kind[w])) continue;
                if (device >= 0) {
                    const TrackInfo& gt = t.track(s.track[w]);
                    if (t.process(gt.process).gpuDevice != device) continue;
                }
                end = std::max(end, s.start[w] + s.dur[w]);
            }
        }
    }
    return end;
}

void Context::resolveWindow() {
    Window& w = window;
    w.kind = options.window.kind;
    auto gpuSpan = [this](int64_t& lo, int64_t& hi) {
        bool any = false;
        for (const DeviceActivity& d : devices) {
            if (d.busy.empty()) continue;
            lo = any ? std::min(lo, d.busy.front().start) : d.busy.front().start;
            hi = any ? std::max(hi, d.busy.back().end) : d.busy.back().end;
            any = true;
        }
        return any;
    };
    switch (options.window.kind) {
    case WindowKind::Range:
        w.startNs = options.window.startNs;
        w.endNs = options.window.endNs;
        w.description = "selected range";
        return;
    case WindowKind::All:
        w.startNs = trace.startNs();
        w.endNs = trace.endNs();
        w.description = "the whole trace";
        return;
    case WindowKind::Step:
        for (const Step& st : steps)
            if (st.number == options.window.step) {
                w.startNs = st.startNs;
                w.endNs = std::max(st.endNs, st.gpuEndNs);
                w.description = "ProfilerStep#" + std::to_string(st.number) + " and its GPU work";
                return;
            }
        w.kind = WindowKind::Steps;  // unknown step: fall back, and say so
        w.description = "ProfilerStep#" + std::to_string(options.window.step) + " not found; ";
        [[fallthrough]];
    case WindowKind::Steps:
    case WindowKind::Hta: {
        // Steps window past a warm-up (WindowSpec::fromNs): from the first step starting at
        // or after it, or without steps from there.
        const int64_t from = w.kind == WindowKind::Steps ? options.window.fromNs : INT64_MIN;
        if (!steps.empty()) {
            size_t first = 0;
            while (first + 1 < steps.size() && steps[first].startNs < from) ++first;
            w.startNs = steps[first].startNs;
            int64_t end = 0;
            for (const Step& st : steps) end = std::max({end, st.endNs, st.gpuEndNs});
            w.endNs = end;
            const size_t n = steps.size() - first;
            if (!iterationName.empty())
                w.description +=
                    n == 1 ? "the iteration `" + steps[first].label +
                                 "` (a user annotation; no ProfilerStep) and its GPU work"
                           : std::to_string(n) + " iterations `" + iterationName +
                                 "` (user annotations; no ProfilerStep) and their GPU work";
            else
                w.description += n == 1 ? "ProfilerStep#" + std::to_string(steps[first].number) +
                                              " and its GPU work"
                                        : "ProfilerStep#" + std::to_string(steps[first].number) +
                                              "..#" + std::to_string(steps.back().number) +
                                              " and their GPU work";
            if (first > 0)
                w.description += ", after " + std::to_string(first) + " warm-up " +
                                 (iterationName.empty() ? "step" : "iteration") +
                                 (first == 1 ? "" : "s");
            return;
        }
        if (gpuSpan(w.startNs, w.endNs)) {
            w.description += "first to last GPU activity (no ProfilerStep ranges)";
            if (from != INT64_MIN && from > w.startNs && from < w.endNs) {
                w.description += ", after its first " +
                                 base::formatDuration(from - w.startNs, base::kDurationCompact) +
                                 " of warm-up";
                w.startNs = from;
            }
            return;
        }
        w.startNs = trace.startNs();
        w.endNs = trace.endNs();
        w.description += "the whole trace (no ProfilerStep ranges, no GPU work)";
        return;
    }
    }
}

void Context::markLaunchers() {
    const SliceTable& s = trace.slices();
    launchesGpu.assign(s.size(), false);
    // Both indexes are sorted by correlation: a launch started GPU work when the GPU index
    // holds its correlation (what gpuWorkOf() finds), found by walking the two together.
    const std::vector<CorrelationEntry>& gpu = trace.gpuIndex();
    size_t g = 0;
    for (const CorrelationEntry& e : trace.launchIndex()) {
        while (g < gpu.size() && gpu[g].correlation < e.correlation) ++g;
        if (g == gpu.size() || gpu[g].correlation != e.correlation) continue;
        SliceId p = e.slice;
        while (p.valid() && !launchesGpu[p.index()]) {
            launchesGpu[p.index()] = true;
            p = s.parent[p.index()];
        }
    }
}

} // namespace stallscope::analysis::detail
