// Detectors for time the GPU loses to the host: input pipeline, copies, synchronisation,
// logging/checkpointing, other CPU work, and no GPU at all.
#include "detectors.h"

#include "stallscope/analysis/name_rules.h"
#include "stallscope/base/text_format.h"
#include "stallscope/model/copy_kind.h"

#include <algorithm>

namespace stallscope::analysis::detail {

using namespace model;

namespace {
constexpr size_t idx(IdleCause c) { return static_cast<size_t>(c); }
std::string whereFrom(const Context& c, Finding& f, SliceId call,
                      const char* lead = " The longest wait, ", const char* mid = ", is ");
std::string hostOnlyWords(const Context& c);
int64_t causeNs(const DeviceMetrics& d, IdleCause c) { return d.idle.causes[idx(c)].ns; }
} // namespace

void detectDataLoading(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const CauseSubject& d : causeSubjects(in.result)) {
        const int64_t ns = d.idle.causes[idx(IdleCause::DataLoading)].ns;
        if (double(ns) < c.options.thresholds.dataLoadingMinShare * double(c.window.length()) || ns <= 0) continue;
        Finding f = makeFinding(c, FindingKind::DataLoading, d.device, ns);
        f.idleNs = ns;
        f.replayFix = Fix::InputPipeline;
        // The input pipeline the time was charged to: DataLoader ranges, else the named input
        // preparation (tokenisers, processors, transforms, dataset code) that ran before a
        // step's first GPU work; the cause has no other source.
        const auto loaders = findSlices(c, [&](uint32_t i) { return c.is(i, kNcDataLoader); }, 50);
        bool singleProcess = false;
        for (SliceId s : loaders) singleProcess |= c.name(s.index()).find("SingleProcess") != std::string_view::npos;
        f.evidence =
            loaders.empty()
                ? findSlices(
                      c, [&](uint32_t i) { return c.is(i, kNcInputPrep) && !c.launchesGpu[i]; }, 50)
                : loaders;
        f.ranges = longestRanges(d.idle.intervals[idx(IdleCause::DataLoading)], 12);
        f.waitedFor = topWaitedFor(c, d.idle.waitedFor[idx(IdleCause::DataLoading)], 5);
        std::string where;
        if (singleProcess) {
            std::vector<std::string> names;
            for (SliceId id : loaders)
                if (c.name(id.index()).find("SingleProcess") != std::string_view::npos)
                    names.emplace_back(c.name(id.index()));
            std::sort(names.begin(), names.end());
            names.erase(std::unique(names.begin(), names.end()), names.end());
            where = " inside the DataLoader itself (" +
                    said(f, "num_workers=0", "calls",
                         ClaimParams().names(names).str("stat", "count"), 1) +
                    ": batches are made in the same process, one after another)";
        } else if (loaders.empty()) {
            where = " outside any DataLoader (named input preparation before the step's first GPU "
                    "work)";
        }
        const std::vector<IdleCause> causes{IdleCause::DataLoading};
        const ClaimParams idle = ClaimParams().device(d.device).causes(causes);
        const std::string thread = d.hostOnly ? "the thread running the steps" : launchingThread(c);
        if (d.hostOnly) {
            f.title = "Steps wait for the input pipeline";
            f.explanation =
                "The thread running the steps spent " + saidNs(f, ns, "idle_ns", idle) + " (" +
                saidShare(f, double(ns) / double(c.window.length()), "idle_ns", idle, "window_ns",
                          {}) +
                " of " + shareBase(c) + ") loading and preparing data" + where + ". " +
                hostOnlyWords(c) +
                " It ran: " + describeWaitedFor(f, f.waitedFor, d.device, causes, ns) + ".";
        } else {
            f.title = "GPU idle while the input pipeline prepares batches";
            f.explanation = "The GPU sat idle for " + saidNs(f, ns, "idle_ns", idle) + " (" +
                            saidShare(f, double(ns) / double(c.window.length()), "idle_ns", idle,
                                      "window_ns", {}) +
                            " of " + shareBase(c) + ") while " + thread +
                            " was loading and preparing data" + where +
                            ". No GPU work was queued during that time. It ran: " +
                            describeWaitedFor(f, f.waitedFor, d.device, causes, ns) + ".";
        }
        if (!loaders.empty()) {
            f.fix =
                "Prepare batches in parallel worker processes and overlap them with GPU work: "
                "raise "
                "num_workers, pin memory, keep workers alive and prefetch; move heavy "
                "preprocessing into "
                "the workers or onto the GPU; use faster storage or a cached/preprocessed dataset.";
            f.snippet =
                "loader = torch.utils.data.DataLoader(\n"
                "    dataset, batch_size=batch_size, shuffle=True,\n"
                "    num_workers=8,            # > 0: batches are prepared in parallel processes\n"
                "    pin_memory=True,          # page-locked buffers: faster, asynchronous copies\n"
                "    persistent_workers=True,  # keep the workers between epochs\n"
                "    prefetch_factor=4)        # batches prepared ahead by each worker";
        } else {
            f.fix =
                "Move the input preparation out of the loop that drives the GPU: run it in "
                "DataLoader "
                "workers (a Dataset whose __getitem__ or collate_fn does the tokenising or image "
                "processing), or prepare the inputs ahead of time, so the next batch is ready when "
                "the "
                "GPU finishes.";
            f.snippet = "loader = torch.utils.data.DataLoader(\n"
                        "    raw_inputs, batch_size=batch_size,\n"
                        "    collate_fn=lambda items: processor(items, return_tensors=\"pt\"),  # "
                        "in the workers\n"
                        "    num_workers=4, pin_memory=True)";
        }
        f.confidence = loaders.empty() ? 0.6 : 0.9;
        out.push_back(std::move(f));
    }
}

void detectBlockingH2dCopy(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d) continue;
        std::vector<SliceId> copies;
        int64_t copyNs = 0, bytes = 0;
        for (uint32_t w : dev.work) {
            if (s.kind[w] != EventKind::Memcpy || s.start[w] < c.window.startNs || s.start[w] >= c.window.endNs) continue;
            const CopyInfo ci = parseCopyName(c.trace.str(s.name[w]));
            if (ci.direction != CopyDirection::HtoD) continue;
            const SliceId l = c.launchOf(w);
            const bool syncCall = l.valid() && c.is(l.index(), kNcSyncCopy);
            const int64_t b = s.extra[w] == SliceExtra::kNone ? 0 : static_cast<int64_t>(s.extra[w]);
            if (ci.src != MemoryKind::Pageable && !(syncCall && b > c.options.thresholds.syncCopyMinBytes)) continue;
            copies.push_back(SliceId(w));
            copyNs += s.dur[w];
            bytes += b;
        }
        if (copies.empty()) continue;
        const int64_t idle = causeNs(*d, IdleCause::BlockingCopy);
        // Upper bound: the GPU idle while the thread was stuck in the copy calls, plus the
        // copies themselves, which pinned memory + non_blocking can overlap with compute.
        Finding f = makeFinding(c, FindingKind::BlockingH2dCopy, dev.device, idle + copyNs);
        f.idleNs = idle; // less the part inside device-to-host copies, when host_sync charges it
        f.replayFix = Fix::PinnedCopies;
        std::sort(copies.begin(), copies.end(), [&s](SliceId a, SliceId b) { return s.dur[a.index()] > s.dur[b.index()]; });
        Intervals ranges;
        for (SliceId id : copies) ranges.push_back({s.start[id.index()], s.start[id.index()] + s.dur[id.index()]});
        for (const Interval& iv : d->idle.intervals[idx(IdleCause::BlockingCopy)]) ranges.push_back(iv);
        f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
        for (size_t i = 0; i < copies.size() && f.evidence.size() < 40; ++i) {
            f.evidence.push_back(copies[i]);
            const SliceId l = c.launchOf(copies[i].index());
            if (l.valid()) f.evidence.push_back(l);
        }
        const double gbs = copyNs > 0 ? double(bytes) / double(copyNs) : 0;
        char bw[64];
        std::snprintf(bw, sizeof bw, "%.1f GB/s", gbs);
        const auto copiesStat = [&](const char* stat) {
            return ClaimParams().device(dev.device).str("set", "blocking_h2d").str("stat", stat);
        };
        const bool loader = c.anyNamed(kNcDataLoader);
        f.title = "Host-to-device copies from pageable memory block " + launchingThread(c);
        f.explanation =
            said(f, std::to_string(copies.size()), "copies", copiesStat("count"),
                 double(copies.size())) +
            " host-to-device copies (" +
            said(f, std::to_string(bytes / 1000000) + " MB", "copies", copiesStat("bytes"),
                 double(bytes)) +
            ", " + said(f, fmtDuration(copyNs), "copies", copiesStat("ns"), double(copyNs)) +
            " on the GPU at " + said(f, bw, "copies", copiesStat("gb_per_s"), gbs) +
            ") read from pageable (not page-locked) memory or by a synchronous call: the "
            "driver stages a pageable copy through a bounce buffer and the call blocks "
            "the CPU until the copy is done; the copy cannot overlap with compute. The "
            "GPU was idle " +
            saidNs(f, idle, "idle_ns",
                   ClaimParams().device(dev.device).causes({IdleCause::BlockingCopy})) +
            " while the thread was inside blocking copy calls." + [&] {
                SliceId longestCall; // the copy call that blocked longest
                for (SliceId cp : copies) {
                    const SliceId l = c.launchOf(cp.index());
                    if (l.valid() &&
                        (!longestCall.valid() || s.dur[l.index()] > s.dur[longestCall.index()]))
                        longestCall = l;
                }
                return whereFrom(c, f, longestCall);
            }();
        if (loader) {
            f.fix = "Use page-locked (pinned) host memory and asynchronous copies: pin_memory=True "
                    "in the "
                    "DataLoader (or tensor.pin_memory()), then .to(device, non_blocking=True); "
                    "copies then run "
                    "at full PCIe bandwidth and overlap with GPU work.";
            f.snippet = "loader = DataLoader(dataset, batch_size=batch_size, num_workers=8, "
                        "pin_memory=True)\n"
                        "for inputs, targets in loader:\n"
                        "    inputs = inputs.to(\"cuda\", non_blocking=True)\n"
                        "    targets = targets.to(\"cuda\", non_blocking=True)";
        } else {
            f.fix = "Copy from page-locked (pinned) host memory asynchronously: pin the host "
                    "tensors once "
                    "(tensor.pin_memory(), or allocate them with pin_memory=True), then "
                    ".to(device, non_blocking=True); copies then run at full PCIe bandwidth and "
                    "overlap with "
                    "GPU work.";
            f.snippet = "x_host = x_host.pin_memory()                 # once, or torch.empty(..., "
                        "pin_memory=True)\n"
                        "x = x_host.to(\"cuda\", non_blocking=True)     # returns at once; the "
                        "copy overlaps";
        }
        f.confidence = 0.9;
        out.push_back(std::move(f));
    }
}

namespace {
/// " The longest wait, 463 ms, is `hipMemcpyWithStream` under `aten::copy_`, called from
/// `cuda_graph_runner.py(212): replay`." — what the trace shows of where a call came from:
/// its innermost operator and Python frame (with_stack), when the trace has them.
std::string whereFrom(const Context& c, Finding& f, SliceId call, const char* lead,
                      const char* mid) {
    if (!call.valid()) return {};
    const SliceTable& s = c.trace.slices();
    // The innermost operator, and the innermost Python frame of a source file ("x.py(12):
    // f") outside PyTorch itself (the caller's code or its library), past built-in methods
    // such as "<built-in method copy_ of Tensor object>"; else the innermost source frame.
    std::string op, frame, torchFrame;
    for (SliceId p = s.parent[call.index()]; p.valid() && (op.empty() || frame.empty());
         p = s.parent[p.index()]) {
        const EventKind k = s.kind[p.index()];
        const std::string_view n = c.name(p.index());
        if (op.empty() && (k == EventKind::CpuOp || k == EventKind::UserAnnotation) &&
            !c.is(p.index(), kNcProfilerStep))
            op = std::string(n);
        if (k != EventKind::PythonFunction || n.find(".py(") == std::string_view::npos) continue;
        const bool inTorch = n.starts_with("torch/") || n.find("/torch/") != std::string_view::npos;
        if (inTorch && torchFrame.empty()) torchFrame = std::string(n);
        if (!inTorch && frame.empty()) frame = std::string(n);
    }
    if (frame.empty()) frame = torchFrame;
    const ClaimParams ref = ClaimParams().slice("slice", c, call);
    std::string out = std::string(lead) +
                      saidNs(f, s.dur[call.index()], "slice", ClaimParams(ref).str("stat", "dur")) +
                      mid +
                      saidName(f, c.name(call.index()), "slice",
                               ClaimParams(ref).str("stat", "dur"), double(s.dur[call.index()]));
    if (!op.empty())
        out += " under " + saidName(f, op, "ancestor", ClaimParams(ref).str("name", op), 1);
    if (!frame.empty())
        out += ", called from " +
               saidName(f, frame, "ancestor", ClaimParams(ref).str("name", frame), 1);
    return out + ".";
}

/// What the text says about a trace without GPU work, by what it has: no launch call at all
/// (the work ran on the CPU) or launch calls whose GPU side was not recorded.
std::string hostOnlyWords(const Context& c) {
    return launchCalls(c).total > 0
               ? "The GPU side of this trace was not recorded, so this is measured on the host: "
                 "with the GPU recorded, the GPU idles for this time."
               : "This trace has no GPU work, so this is measured on the CPU: the same loop on a "
                 "GPU leaves the GPU idle for this time.";
}
} // namespace

namespace {
/// The last stream-wait call (`cudaStreamWaitEvent`, `hipStreamWaitEvent`) on a launch's
/// thread in the 5 ms before it, or invalid: what a stream waited for before that work.
SliceId streamWaitBefore(const Context& c, SliceId launch) {
    const SliceTable& s = c.trace.slices();
    const TrackId th = s.track[launch.index()];
    const uint32_t last = c.trace.sliceRange(th).second;
    SliceId call;
    for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(th, s.start[launch.index()] - 5'000'000);
         i < last && s.start[i] <= s.start[launch.index()]; ++i)
        if (c.name(i).find("StreamWaitEvent") != std::string_view::npos) call = SliceId(i);
    return call;
}

/// `work` on "stream 7", claimed: the name of the work, and its stream.
std::string workOnStream(const Context& c, Finding& f, uint32_t work) {
    const SliceTable& s = c.trace.slices();
    const ClaimParams ref = ClaimParams().slice("slice", c, SliceId(work));
    const std::string stream(c.trace.str(c.trace.track(s.track[work]).name));
    std::string out = saidName(f, c.name(work), "slice", ClaimParams(ref).str("stat", "dur"),
                               double(s.dur[work])) +
                      " on " + said(f, stream, "stream_of", ref, 0);
    // Inside a graph replay: which graph, where the trace says (docs/claims.md "graph_of").
    if (const model::GraphReplay* r =
            model::replayHolding(c.graphReplays, c.trace, SliceId(work))) {
        out += r->graphId >= 0 ? " (inside " +
                                     said(f, "graph " + std::to_string(r->graphId), "graph_of",
                                          ClaimParams(ref).str("stat", "id"), double(r->graphId)) +
                                     ")"
                               : " (inside " +
                                     said(f, "a graph replay", "graph_of",
                                          ClaimParams(ref).str("stat", "launched"), 1) +
                                     ")";
    }
    return out;
}

/// The time from one slice's edge to another's, claimed (docs/claims.md "gap").
std::string gapBetween(const Context& c, Finding& f, SliceId from, const char* fromEdge, SliceId to,
                       const char* toEdge, int64_t ns) {
    return saidNs(f, ns, "gap",
                  ClaimParams()
                      .obj("from", ClaimParams().slice("s", c, from).str("edge", fromEdge))
                      .obj("to", ClaimParams().slice("s", c, to).str("edge", toEdge)));
}

/// What held `work` (launched by `launch`) on the GPU side while the GPU sat idle in
/// (lo, hi], after ": " in a sentence: the work a recorded stream wait names when it ended
/// then (stream_waits.h), else the stream-wait call before the launch, else nothing shown.
std::string heldBy(const Context& c, Finding& f, uint32_t work, SliceId launch, int64_t lo,
                   int64_t hi) {
    const SliceTable& s = c.trace.slices();
    auto callName = [&](SliceId call) {
        return saidName(f, c.name(call.index()), "slice",
                        ClaimParams().slice("slice", c, call).str("stat", "dur"),
                        double(s.dur[call.index()]));
    };
    if (const StreamWait* w = waitEndingIn(c, work, launch, lo, hi)) {
        const uint32_t p = w->awaited.index();
        return "its stream waited (" + callName(SliceId(w->sync)) + ") for the event " +
               callName(w->record) + " recorded after " + workOnStream(c, f, p) + ", which ended " +
               gapBetween(c, f, SliceId(p), "end", SliceId(work), "start",
                          s.start[work] - s.end(p)) +
               " before this work started";
    }
    const SliceId waitCall = streamWaitBefore(c, launch);
    if (!waitCall.valid()) return "the GPU waited for something the trace does not show";
    return "after " + callName(waitCall) +
           ", the stream waited for an event recorded by work the trace does not show (another "
           "process, or a stream that was not profiled)";
}

/// When the work a wait waited for was queued before the wait began yet started only near
/// its end, with the GPU idle meanwhile, the GPU itself waited for something the trace does
/// not show (an event recorded by work outside the trace: another process, a stream that
/// was not profiled). Says so, naming the stream-wait call that preceded it, if any.
std::string queuedWorkStartedLate(const Context& c, Finding& f, const DeviceActivity& dev,
                                  SliceId wait) {
    const SliceTable& s = c.trace.slices();
    const int64_t a = s.start[wait.index()], b = s.end(wait.index());
    if (b - a < 1'000'000) return {}; // short waits: not worth the words
    for (size_t k = 0; k < dev.work.size(); ++k) {
        const uint32_t w = dev.work[k];
        const SliceId l = dev.launch[k];
        if (s.start[w] < a + (b - a) / 2 || s.start[w] > b) continue;
        if (!l.valid() || s.end(l.index()) > a) continue;
        // The GPU idle from the wait's start until this work began?
        if (lengthWithin(dev.busy, a, s.start[w]) > (s.start[w] - a) / 10) return {};
        return " The GPU work it waited for was queued " +
               gapBetween(c, f, l, "end", wait, "start", a - s.end(l.index())) +
               " before the wait began (" + workOnStream(c, f, w) + ") but started only " +
               gapBetween(c, f, wait, "start", SliceId(w), "start", s.start[w] - a) +
               " into it, with the GPU idle meanwhile: " + heldBy(c, f, w, l, a, s.start[w]) +
               ". Removing this wait alone would not start that work sooner; the replay counts "
               "only what it can see.";
    }
    return {};
}
} // namespace

void detectHostSync(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    // A synchronous copy that is not a host-to-device one (blocking_h2d_copy has those):
    // device-to-host or device-to-device, it returns once the copy, queued behind the
    // stream's earlier work, is done: a wait for the GPU like a synchronize.
    // An "async" copy into pageable memory waits for its copy all the same.
    auto isSyncCopyOut = [&](uint32_t i) {
        const bool sync = c.is(i, kNcSyncCopy);
        if (!sync && !(c.is(i, kNcCopy) && isLaunchSide(s.kind[i]))) return false;
        const auto work = c.gpuWorkOf(i);
        if (work.empty())
            return sync; // the copy itself is not in the trace: a synchronous one waited all the
                         // same
        const CopyInfo ci = parseCopyName(c.trace.str(s.name[work.front().slice.index()]));
        if (sync) return ci.direction != CopyDirection::HtoD;
        return ci.direction == CopyDirection::DtoH && ci.dst == MemoryKind::Pageable;
    };
    // Outermost synchronising calls inside steps.
    auto isSync = [&](uint32_t i) {
        const bool copyOut = isSyncCopyOut(i);
        if ((!c.is(i, kNcSync) && !copyOut) || s.kind[i] == EventKind::CudaSync) return false;
        for (SliceId p = s.parent[i]; p.valid(); p = s.parent[p.index()])
            if (c.is(p.index(), kNcSync) || isSyncCopyOut(p.index())) return false;
        return c.steps.empty() || c.stepAt(s.start[i]) != nullptr;
    };
    const auto syncs = findSlices(c, isSync, SIZE_MAX);
    if (syncs.empty()) return;
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d) continue;
        const Intervals gaps = complement(dev.busy, c.window.startNs, c.window.endNs);
        int64_t blocked = 0, lostOverlap = 0, idleInCopies = 0;
        Intervals ranges;
        SliceId longest;
        for (SliceId id : syncs) {
            const uint32_t i = id.index();
            const int64_t a = s.start[i], b = s.start[i] + s.dur[i];
            blocked += b - a;
            if (!longest.valid() || s.dur[i] > s.dur[longest.index()]) longest = id;
            // The idle time the attribution charged to a blocking copy while the thread sat
            // in a device-to-host copy call: a wait for the GPU, charged here.
            if (isSyncCopyOut(i)) {
                for (auto g =
                         std::lower_bound(gaps.begin(), gaps.end(), a,
                                          [](const Interval&iv, int64_t v) { return iv.end <= v; });
                     g != gaps.end() && g->start < b; ++g) {
                    idleInCopies += std::min(b, g->end) - std::max(a, g->start);
                    ranges.push_back({std::max(a, g->start), std::min(b, g->end)});
                }
            }
            // The idle gap the CPU found when it resumed at b: had it not waited, it could
            // have started the host work that gap waits for up to (b - a) earlier.
            auto g = std::lower_bound(gaps.begin(), gaps.end(), b, [](const Interval& iv, int64_t v) { return iv.end <= v; });
            if (g != gaps.end() && g->start <= b && b < g->end) {
                lostOverlap += std::min(b - a, g->end - b);
                ranges.push_back({g->start, g->end});
            }
        }
        const int64_t attributed = causeNs(*d, IdleCause::HostSync) +
                                   std::min(idleInCopies, causeNs(*d, IdleCause::BlockingCopy));
        const int64_t saving = std::max(attributed, lostOverlap);
        // A long wait with the GPU idle is worth saying even when the GPU was idle for other
        // reasons (the text then says so); the replay gives what removing it saves.
        const int64_t la = s.start[longest.index()], lb = s.end(longest.index());
        const int64_t idleInLongest = (lb - la) - lengthWithin(dev.busy, la, lb);
        if (double(std::max(saving, idleInLongest)) <
            c.options.thresholds.severityNote * double(c.window.length()))
            continue;
        Finding f = makeFinding(c, FindingKind::HostSync, dev.device, saving);
        f.idleNs = attributed;
        f.replayFix = Fix::RemoveSyncs;
        for (const Interval& iv : d->idle.intervals[idx(IdleCause::HostSync)]) ranges.push_back(iv);
        f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
        f.evidence.assign(syncs.begin(), syncs.begin() + static_cast<long>(std::min<size_t>(syncs.size(), 40)));
        std::map<std::string, size_t> kinds;
        for (SliceId id : syncs) ++kinds[std::string(c.name(id.index()))];
        std::string list;
        for (const auto& [n, k] : kinds)
            list += (list.empty() ? "" : ", ") +
                    said(f, "`" + n + "` ×" + base::formatCount(k), "sync_calls",
                         ClaimParams().str("name", n).str("stat", "count"), double(k));
        size_t steps = 0;
        for (const Step& st : c.steps)
            steps += st.startNs >= c.window.startNs && st.startNs < c.window.endNs;
        const size_t perStep = steps == 0 ? syncs.size() : (syncs.size() + steps - 1) / steps;
        const bool training = hasBackward(c);
        const ClaimParams syncCount = ClaimParams().str("stat", "count");
        f.title = steps == 0
                      ? "The host waits for the GPU (" +
                            said(f, base::formatCount(syncs.size()), "sync_calls", syncCount,
                                 double(syncs.size())) +
                            " synchronising call" + (syncs.size() == 1 ? ")" : "s)")
                      : std::string(training ? "The training loop" : "The loop") +
                            " waits for the GPU about " +
                            said(f, std::to_string(perStep), "ratio",
                                 ClaimParams()
                                     .obj("num", ClaimParams::measure("sync_calls", syncCount))
                                     .obj("den", ClaimParams::measure(
                                                     "steps", ClaimParams().str("stat", "count")))
                                     .str("round", "ceil"),
                                 double(perStep)) +
                            " time" + (perStep == 1 ? "" : "s") + " per step";
        f.explanation =
            "Synchronising calls (" + list + ") made the CPU wait " +
            saidNs(f, blocked, "sync_calls", ClaimParams().str("stat", "ns")) +
            " for the GPU. While it waited it could not prepare and queue the next work; the GPU "
            "idled " +
            saidNs(f, attributed, "sync_idle_ns", ClaimParams().device(dev.device)) +
            " inside these waits and up to " +
            saidNs(f, lostOverlap, "sync_after_idle", ClaimParams().device(dev.device)) +
            " after them." + whereFrom(c, f, longest) + queuedWorkStartedLate(c, f, dev, longest) +
            (training
                 ? " Typical sources: loss.item(), print(loss), .cpu()/.numpy()/.tolist(), "
                   "torch.cuda.synchronize() and data-dependent control flow."
                 : " Typical sources: .item()/.tolist()/.cpu() on outputs, "
                   "torch.cuda.synchronize(), "
                   "and data-dependent control flow (torch.nonzero, boolean masks, sampling).");
        if (training) {
            f.fix =
                "Keep per-step values on the GPU and read them every N steps; avoid .item()/.cpu() "
                "inside the step; use torch.cuda.set_sync_debug_mode(\"warn\") to find hidden "
                "synchronisations.";
            f.snippet = "running_loss = torch.zeros((), device=\"cuda\")\n"
                        "for step, (x, y) in enumerate(loader):\n"
                        "    loss = train_step(x, y)\n"
                        "    running_loss += loss.detach()          # no host sync\n"
                        "    if step % 100 == 0:\n"
                        "        print(running_loss.item() / 100)   # one sync per 100 steps\n"
                        "        running_loss.zero_()";
        } else {
            f.fix = "Keep results on the GPU and read them back in batches (or asynchronously into "
                    "pinned "
                    "memory); avoid .item()/.cpu() between launches; use "
                    "torch.cuda.set_sync_debug_mode(\"warn\") to find hidden synchronisations.";
            f.snippet =
                "outs = [model(x) for x in batches]            # no host sync inside the loop\n"
                "host = torch.empty(shape, pin_memory=True)\n"
                "host.copy_(torch.cat(outs), non_blocking=True)  # one copy, overlapped\n"
                "torch.cuda.current_stream().synchronize()       # one wait, where it is needed";
        }
        f.confidence = attributed > 0 ? 0.8 : 0.6;
        out.push_back(std::move(f));
    }
}

void detectLoggingCheckpoint(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const CauseSubject& d : causeSubjects(in.result)) {
        const int64_t ns = d.idle.causes[idx(IdleCause::IoLoggingCheckpoint)].ns;
        if (double(ns) < c.options.thresholds.loggingMinShare * double(c.window.length()) || ns <= 0) continue;
        Finding f = makeFinding(c, FindingKind::LoggingCheckpoint, d.device, ns);
        f.idleNs = ns;
        f.replayFix = Fix::LogLessOften;
        f.ranges = longestRanges(d.idle.intervals[idx(IdleCause::IoLoggingCheckpoint)], 12);
        f.waitedFor = topWaitedFor(c, d.idle.waitedFor[idx(IdleCause::IoLoggingCheckpoint)], 5);
        f.evidence = findSlices(c, [&](uint32_t i) { return c.is(i, kNcIo); }, 40);
        // Periodic long steps: steps much longer than the median, with I/O in them.
        std::vector<int64_t> durs;
        for (const auto& st : d.steps) durs.push_back(st.endNs - st.startNs);
        size_t longSteps = 0;
        if (!durs.empty()) {
            std::vector<int64_t> sorted = durs;
            std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
            const double median = double(sorted[sorted.size() / 2]);
            for (size_t i = 0; i < d.steps.size(); ++i)
                if (double(durs[i]) > c.options.thresholds.longStepFactor * median &&
                    d.steps[i].idleByCause[idx(IdleCause::IoLoggingCheckpoint)] > 0)
                    ++longSteps;
        }
        f.title = d.hostOnly ? "Logging or checkpointing stalls the steps"
                             : "Logging or checkpointing stalls the GPU";
        const std::string thread = d.hostOnly ? "the thread running the steps" : launchingThread(c);
        const std::vector<IdleCause> causes{IdleCause::IoLoggingCheckpoint};
        const ClaimParams idle = ClaimParams().device(d.device).causes(causes);
        f.explanation =
            (d.hostOnly ? "The thread running the steps spent " : "The GPU waited ") +
            saidNs(f, ns, "idle_ns", idle) + " (" +
            saidShare(f, double(ns) / double(c.window.length()), "idle_ns", idle, "window_ns", {}) +
            " of " + shareBase(c) + ") while " + thread + " saved, serialised, wrote or printed: " +
            describeWaitedFor(f, f.waitedFor, d.device, causes, ns) + "." +
            (longSteps ? " " +
                             said(f, std::to_string(longSteps), "steps",
                                  ClaimParams()
                                      .str("stat", "long_with_idle")
                                      .device(d.device)
                                      .str("cause", idleCauseName(IdleCause::IoLoggingCheckpoint))
                                      .real("factor", c.options.thresholds.longStepFactor),
                                  double(longSteps)) +
                             " step(s) are more than " +
                             saidConstant(f, fmtPct(c.options.thresholds.longStepFactor - 1),
                                          "longStepFactor") +
                             " longer than the median because of it (a saw-tooth timeline)."
                       : "") +
            (d.hostOnly ? " " + hostOnlyWords(c) : "");
        if (hasBackward(c)) {
            f.fix = "Log every " + saidConstant(f, "10-100", "logging interval advice") +
                    " steps, checkpoint per epoch or asynchronously (a background thread or "
                    "torch.distributed.checkpoint.async_save), and write to fast local storage.";
            f.snippet = "if step % log_every == 0:\n"
                        "    writer.add_scalar(\"loss\", running_loss.item() / log_every, step)\n"
                        "if step % checkpoint_every == 0:\n"
                        "    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}\n"
                        "    threading.Thread(target=torch.save, args=(state, path)).start()";
        } else {
            f.fix =
                "Log or save every N iterations instead of every one, and write from a background "
                "thread to fast local storage.";
            f.snippet = "if i % log_every == 0:\n"
                        "    logger.info(\"batch %d: %s\", i, summary)   # not every iteration";
        }
        f.confidence = 0.7;
        out.push_back(std::move(f));
    }
}

void detectGpuNotUsed(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    if (!c.devices.empty()) return;
    // CUDA memory events (an allocator snapshot, profile_memory on a GPU): the GPU was used.
    for (const MemorySample& m : c.trace.memorySamples())
        if (m.deviceType == 1) return;
    const SliceTable& s = c.trace.slices();
    size_t runtimeCalls = 0;
    for (uint32_t i = 0; i < s.size(); ++i) {
        // CUPTI range-profiler mode: kernels ran and were measured by counters, not timed.
        if (s.kind[i] == EventKind::ProfilerRange) return;
        runtimeCalls += isLaunchSide(s.kind[i]);
    }
    // Launch calls without GPU records: the GPU was used, its side was not recorded
    // (gpu_not_recorded says so).
    if (launchCalls(c).total > 0) return;
    const size_t listed = c.trace.metadata().devices.size();
    Finding f = makeFinding(c, FindingKind::GpuNotUsed, -1, c.window.length());
    f.ranges = {{c.window.startNs, c.window.endNs}};
    for (const Step& st : c.steps)
        if (f.evidence.size() < 20) f.evidence.push_back(st.slice);
    f.title = "No GPU work in this trace";
    f.explanation =
        runtimeCalls
            ? "The trace has " +
                  said(f, base::formatCount(runtimeCalls), "runtime_calls",
                       ClaimParams().str("stat", "count"), double(runtimeCalls)) +
                  " GPU runtime calls but no launch, copy or memset call among them and no GPU "
                  "work: nothing was sent to the GPU, the model and tensors stayed on the CPU."
        : listed ? "The profiler saw " +
                       said(f, std::to_string(listed), "device_count", {}, double(listed)) +
                       " GPU(s) but no work ran on them: the model and tensors stayed on the CPU."
                 : "This is a CPU-only trace: no GPU was visible to the process and every operator "
                   "ran on the CPU.";
    f.fix = "Check torch.cuda.is_available(), move the model and each batch to the GPU, and record GPU activity; "
            "in containers pass the GPUs through (docker run --gpus all).";
    f.snippet =
        "assert torch.cuda.is_available(), \"no CUDA device visible\"\n"
        "model = model.to(\"cuda\")\n"
        "x, y = x.to(\"cuda\", non_blocking=True), y.to(\"cuda\", non_blocking=True)\n"
        "prof = torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])";
    f.confidence = runtimeCalls ? 0.8 : 0.9;
    out.push_back(std::move(f));
}

namespace {
/// The longest GPU-side wait of a device, told as the trace shows it: the work that ended
/// it, how long it sat queued, on which stream, the stream-wait call before its launch, and
/// what the launching thread was doing meanwhile (the longest call overlapping the wait,
/// with its operator and Python frame).
std::string longestGpuWait(const Context& c, Finding& f, const DeviceMetrics& d, bool& named) {
    const SliceTable& s = c.trace.slices();
    const IdleGap* gap = nullptr;
    for (const IdleGap& g : d.idle.gaps)
        if (g.dominant == IdleCause::GpuDependency && g.endingWork.valid() && g.launch.valid() &&
            (!gap || g.endNs - g.startNs > gap->endNs - gap->startNs))
            gap = &g;
    if (!gap || gap->endNs - gap->startNs < c.window.length() / 20) return {};
    const uint32_t w = gap->endingWork.index(), l = gap->launch.index();
    const TrackId th = s.track[l];
    const uint32_t last = c.trace.sliceRange(th).second;
    // The longest call on the launching thread inside the wait.
    SliceId longest;
    for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(th, gap->startNs);
         i < last && s.start[i] < gap->endNs; ++i)
        if (isLaunchSide(s.kind[i]) && (!longest.valid() || s.dur[i] > s.dur[longest.index()]))
            longest = SliceId(i);
    std::string out =
        " The longest wait, " +
        saidNs(f, gap->endNs - gap->startNs, "idle_gap",
               ClaimParams().device(d.device).num("end_ns", gap->endNs)) +
        ": " + workOnStream(c, f, w) + " was launched " +
        gapBetween(c, f, SliceId(l), "end", SliceId(w), "start", s.start[w] - s.end(l)) +
        " before it started, with the GPU idle";
    named = waitEndingIn(c, w, SliceId(l), gap->startNs, gap->endNs) != nullptr;
    out += ": " + heldBy(c, f, w, SliceId(l), gap->startNs, gap->endNs) + ".";
    if (longest.valid() && s.dur[longest.index()] > (gap->endNs - gap->startNs) / 2)
        out += whereFrom(c, f, longest, " Meanwhile the launching thread was blocked ", " in ");
    return out;
}
} // namespace

namespace {
/// low_utilization's fix, each sentence on its premise: a launching thread to look at only
/// when the GPU's work has launch calls in the trace (a rocprofv3 file without --hip-trace has
/// none), the GPU-side advice only when some idle time is gpu_dependency.
std::string lowUtilizationFix(const DeviceMetrics& d, bool named) {
    std::string fix =
        d.launches.items > 0
            ? "Start from the largest idle cause above; open the idle gaps on the timeline to see "
              "what the launching thread was doing."
            : "The trace holds no launch call for this GPU's work, so what the host did while it "
              "sat idle cannot be told: record the host side too (torch.profiler with "
              "ProfilerActivity.CPU, rocprofv3 --hip-trace, nsys -t cuda).";
    if (d.idle.causes[static_cast<size_t>(IdleCause::GpuDependency)].ns > 0)
        fix += named ? " For work that waits on the GPU side, the work its stream waited for is "
                       "named above: start it sooner, shorten it, or give this stream work that "
                       "does not depend on it."
                     : " For work that waits on the GPU side, find what records the event its "
                       "stream waits for (profile that process or stream too).";
    return fix;
}
} // namespace

void detectLowUtilization(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const DeviceMetrics& d : in.result.devices) {
        if (d.utilization >= c.options.thresholds.lowUtilizationMax || d.idleNs <= 0) continue;
        int64_t explained = 0;
        for (const Finding& f : out)
            if (f.device == d.device && f.kind != FindingKind::LowUtilization)
                explained += f.idleNs;
        if (2.0 * double(explained) >= double(d.idleNs)) continue;
        Finding f = makeFinding(c, FindingKind::LowUtilization, d.device, d.idleNs - explained);
        f.idleNs = d.idleNs - explained;
        std::vector<std::pair<int64_t, IdleCause>> causes;
        for (size_t k = 0; k < kIdleCauseCount; ++k) causes.emplace_back(d.idle.causes[k].ns, static_cast<IdleCause>(k));
        std::sort(causes.rbegin(), causes.rend());
        std::string breakdown;
        const ClaimParams allIdle = ClaimParams().device(d.device);
        for (const auto& [ns, k] : causes) {
            if (ns <= 0) continue;
            const ClaimParams one =
                ClaimParams().device(d.device).strs("causes", {std::string(idleCauseName(k))});
            breakdown +=
                (breakdown.empty() ? "" : ", ") + std::string(idleCauseName(k)) + " " +
                saidNs(f, ns, "idle_ns", one) + " (" +
                saidShare(f, double(ns) / double(d.idleNs), "idle_ns", one, "idle_ns", allIdle) +
                ")";
        }
        Intervals all;
        for (const auto& g : d.idle.gaps) all.push_back({g.startNs, g.endNs});
        f.ranges = longestRanges(all, 12);
        for (const auto& g : d.idle.gaps)
            if (g.endingWork.valid() && f.evidence.size() < 20) f.evidence.push_back(g.endingWork);
        const ClaimParams dev = ClaimParams().device(d.device);
        const auto util = [&] {
            return saidShare(f, d.utilization, "busy_ns", dev, "window_ns", {});
        };
        f.title = "GPU utilisation is " + util();
        f.explanation = "The GPU was busy " + util() + " of the window and idle " +
                        saidNs(f, d.idleNs, "idle_ns", dev) +
                        "; the more specific findings explain " +
                        saidNs(f, explained, "findings_idle_ns", dev) +
                        " of it. Idle time by cause: " + breakdown + ".";
        bool named = false;
        f.explanation += longestGpuWait(c, f, d, named);
        f.fix = lowUtilizationFix(d, named);
        f.confidence = 0.5;
        out.push_back(std::move(f));
    }
}

} // namespace stallscope::analysis::detail
