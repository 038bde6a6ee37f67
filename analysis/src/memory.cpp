#include "stallscope/analysis/memory.h"

#include "stallscope/analysis/name_rules.h"
#include "stallscope/base/text_format.h"
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;

namespace {

/// The innermost slice of `kind` on `track` whose range holds `ts` (its end included: an
/// allocator event at an operator's last instant is the operator's). Slices on a track are
/// sorted by start and nested, so it is the latest slice starting at or before `ts` or one
/// of its ancestors.
template <class Accept>
SliceId enclosing(const Trace& t, TrackId track, int64_t ts, EventKind kind, Accept accept) {
    if (!track.valid() || track.index() >= t.tracks().size()) return {};
    const TrackInfo& tr = t.tracks()[track.index()];
    const SliceTable& s = t.slices();
    const auto first = s.start.begin() + tr.sliceBegin, last = s.start.begin() + tr.sliceEnd;
    const auto it = std::upper_bound(first, last, ts);
    if (it == first) return {};
    for (SliceId j(static_cast<uint32_t>(it - s.start.begin() - 1)); j.valid();
         j = s.parent[j.index()])
        if (s.kind[j.index()] == kind && s.start[j.index()] <= ts && ts <= s.end(j.index()) &&
            accept(j))
            return j;
    return {};
}

/// A frame of the program's own code ("model.py(42): forward"), not the "<built-in method
/// ...>" wrapper of the C function it called: where a user looks for the allocation.
bool isSourceFrame(const Trace& t, SliceId s) {
    return t.str(t.slices().name[s.index()]).rfind("<built-in", 0) != 0;
}

std::string nameOf(const Trace& t, SliceId s, const char* none) {
    return s.valid() ? std::string(t.str(t.slices().name[s.index()])) : std::string(none);
}

std::vector<MemoryLiveGroup> grouped(std::map<std::string, MemoryLiveGroup>& by) {
    std::vector<MemoryLiveGroup> out;
    out.reserve(by.size());
    for (auto& [name, g] : by) out.push_back(std::move(g));
    std::stable_sort(
        out.begin(), out.end(),
        [](const MemoryLiveGroup& a, const MemoryLiveGroup& b) { return a.bytes > b.bytes; });
    return out;
}

std::string pctText(double share) {
    return std::to_string(static_cast<int>(std::lround(share * 100))) + " %";
}

/// Start of every backward operator (names::isBackward), sorted: where a step's backward
/// pass begins.
std::vector<int64_t> backwardStarts(const Trace& t) {
    const SliceTable& s = t.slices();
    std::vector<uint8_t> nameIsBackward(t.strings().size(), 2); // 2: not looked at yet
    std::vector<int64_t> out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s.kind[i] != EventKind::CpuOp) continue;
        uint8_t& b = nameIsBackward[s.name[i].index()];
        if (b == 2) b = names::isBackward(t.str(s.name[i])) ? 1 : 0;
        if (b) out.push_back(s.start[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void activations(const std::vector<int64_t>& backward, const AnalysisResult& r, DeviceMemory& d) {
    for (size_t i = 0; i < r.steps.size(); ++i) {
        if (r.steps[i].warmup) continue;
        const Interval span = stepSpan(r.steps, i, r.window.endNs);
        const auto b = std::lower_bound(backward.begin(), backward.end(), span.start);
        if (b == backward.end() || *b >= span.end) continue; // no backward pass in this step
        const int64_t bwd = *b;
        int64_t kept = 0;
        for (const MemoryEventRow& e : d.rows)
            if (e.bytes > 0 && e.ts >= span.start && e.ts < bwd && e.freedAt >= bwd &&
                e.freedAt < span.end)
                kept = satAdd(kept, e.bytes);
        if (kept > d.activationBytes)
            d.activationBytes = kept, d.activationStep = r.steps[i].number;
    }
}

/// The snapshot's segments of the device when it was taken, and its out-of-memory events.
void allocatorState(const AllocatorSnapshot& snap, DeviceMemory& d) {
    AllocatorState a;
    for (const SnapshotSegment& s : snap.segments) {
        if (s.device != d.device) continue;
        ++a.segments;
        a.largeSegments += s.large;
        a.expandableSegments += s.expandable;
        a.reserved = satAdd(a.reserved, s.totalSize);
        a.allocated = satAdd(a.allocated, s.allocatedSize);
        a.active = satAdd(a.active, s.activeSize);
        a.requested = satAdd(a.requested, s.requestedSize);
        int64_t inactive = 0;
        bool anyActive = false;
        for (uint32_t i = s.blockBegin; i < s.blockEnd; ++i) {
            const SnapshotBlock& b = snap.blocks[i];
            switch (b.state) {
            case BlockState::ActiveAllocated: ++a.blocksAllocated, anyActive = true; break;
            case BlockState::ActivePendingFree: ++a.blocksPendingFree, anyActive = true; break;
            case BlockState::Inactive:
                ++a.blocksInactive;
                inactive = satAdd(inactive, b.size);
                a.largestInactive = std::max(a.largestInactive, b.size);
                break;
            case BlockState::Other: break;
            }
        }
        a.inactiveBytes = satAdd(a.inactiveBytes, inactive);
        if (anyActive) {
            a.fragmentBytes = satAdd(a.fragmentBytes, inactive);
            for (uint32_t i = s.blockBegin; i < s.blockEnd; ++i)
                if (snap.blocks[i].state == BlockState::Inactive)
                    a.largestFragment = std::max(a.largestFragment, snap.blocks[i].size);
        } else {
            ++a.emptySegments;
            a.emptySegmentBytes = satAdd(a.emptySegmentBytes, s.totalSize);
        }
    }
    a.expandableSetting = snap.expandableSegments;
    d.allocator = a;
    int64_t last = 0;
    for (const SnapshotEntry& e : snap.entries) {
        if (e.device != d.device) continue;
        if (e.timeUs >= 0) last = satMul(e.timeUs, int64_t(1000));
        if (e.action == SnapshotAction::Oom)
            d.ooms.push_back({last, e.size, e.deviceFree, e.stack});
    }
}

bool heldIsLarge(int64_t reserved, int64_t held, const MemoryThresholds& th) {
    return reserved > 0 && held >= th.cacheHeldMinBytes &&
           double(held) >= th.cacheHeldShare * double(reserved);
}

/// What the caching allocator held beyond what was allocated, at the reserved peak and, for
/// an allocator snapshot, when it was taken (with where: empty segments or fragments); empty
/// when neither is large.
std::string cacheHeld(const DeviceMemory& d, const MemoryThresholds& th) {
    using base::formatBytes;
    std::string text;
    const int64_t atPeak =
        d.allocatedAtPeakReserved >= 0 ? satSub(d.peakReserved, d.allocatedAtPeakReserved) : -1;
    if (d.peakReserved > 0 && heldIsLarge(d.peakReserved, atPeak, th))
        text = "When reserved memory peaked at " + formatBytes(uint64_t(d.peakReserved)) + ", " +
               formatBytes(uint64_t(d.allocatedAtPeakReserved)) +
               " of it was allocated: " + formatBytes(uint64_t(atPeak)) + " (" +
               pctText(double(atPeak) / double(d.peakReserved)) +
               ") sat in the caching allocator's cache, freed blocks it keeps or fragments "
               "too small to reuse.";
    if (!d.allocator) return text;
    const AllocatorState& a = *d.allocator;
    const int64_t held = satSub(a.reserved, a.allocated);
    if (!heldIsLarge(a.reserved, held, th)) return text;
    if (!text.empty()) text += " ";
    text += "When the snapshot was taken, " + formatBytes(uint64_t(a.reserved)) +
            " was reserved and " + formatBytes(uint64_t(a.allocated)) +
            " allocated: " + formatBytes(uint64_t(held)) + " (" +
            pctText(double(held) / double(a.reserved)) + ") held, " +
            formatBytes(uint64_t(a.emptySegmentBytes)) + " of it in " +
            std::to_string(a.emptySegments) + " segment" + (a.emptySegments == 1 ? "" : "s") +
            " holding no allocation (torch.cuda.empty_cache() would return them) and " +
            formatBytes(uint64_t(a.fragmentBytes)) +
            " in free blocks between allocations (fragments; the largest " +
            formatBytes(uint64_t(a.largestFragment)) + ").";
    return text;
}

void advise(DeviceMemory& d, const MemoryThresholds& th) {
    using base::formatBytes;
    if (d.deviceType != 1) return;
    if (d.capacity > 0 && d.peakReserved > 0 &&
        double(d.peakReserved) >= th.nearCapacity * double(d.capacity))
        d.advice.push_back(
            {"near_capacity",
             "Reserved memory peaked at " + formatBytes(uint64_t(d.peakReserved)) + " of the " +
                 formatBytes(uint64_t(d.capacity)) + " the device has (" +
                 pctText(double(d.peakReserved) / double(d.capacity)) +
                 "): allocations start to fail and retry, and a larger batch will not fit.",
             "Cut activation memory: activation checkpointing (torch.utils.checkpoint), mixed "
             "precision (torch.autocast with bfloat16 or float16), or a smaller batch."});
    if (auto text = cacheHeld(d, th); !text.empty()) {
        const bool expandable = d.allocator && d.allocator->expandableSetting.value_or(false);
        d.advice.push_back(
            {"cache_held", text,
             expandable
                 ? "Segments are already expandable in this run (allocator_settings: "
                   "expandable_segments True), so what is held is cache kept for reuse: "
                   "torch.cuda.empty_cache() returns it between phases of different shapes, "
                   "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.8 reclaims it before "
                   "the device fills."
                 : "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (segments grow in place "
                   "instead of leaving fragments); torch.cuda.empty_cache() only returns the "
                   "cache, it does not stop it from refilling."});
    }
    if (d.capacity > 0 && d.activationBytes > 0 && d.peakAllocated > 0) {
        const int64_t fixed = std::max<int64_t>(0, d.peakAllocated - d.activationBytes);
        const double growth = double(d.capacity - fixed) / double(d.activationBytes);
        if (growth >= th.headroomMinGrowth) {
            const double shown = std::floor(growth * 10) / 10;
            char g[32];
            std::snprintf(g, sizeof g, "%.1f", shown);
            d.advice.push_back(
                {"batch_headroom",
                 "Peak allocated " + formatBytes(uint64_t(d.peakAllocated)) + " of " +
                     formatBytes(uint64_t(d.capacity)) + "; of it " +
                     formatBytes(uint64_t(d.activationBytes)) + " was allocated before step #" +
                     std::to_string(d.activationStep) +
                     "'s backward pass and freed during it (activations, which grow with the "
                     "batch). If they grow in proportion, the batch could be at most about " +
                     std::string(g) + "x larger before the device is full.",
                 "Raise the batch size (and the learning rate with it) towards that bound; "
                 "leave room for the allocator's cache and the CUDA context."});
        }
    }
}

/// What was live just after the allocated peak's event (row `peakRow`): the events up to it
/// replayed by address, the blocks left grouped by operator and by frame.
void liveAtPeak(const Trace& t, DeviceMemory& d, size_t peakRow, std::vector<std::string>& notes) {
    if (std::any_of(d.rows.begin(), d.rows.end(),
                    [](const MemoryEventRow& e) { return e.category != 0; })) {
        // A memory timeline: tensors by category, no addresses; what each held at the peak.
        std::map<std::string, MemoryLiveGroup> byCategory;
        std::map<std::string, int64_t> tensors;
        for (size_t i = 0; i <= peakRow; ++i) {
            const MemoryEventRow& e = d.rows[i];
            if (!e.category) continue;
            const std::string name = memoryCategoryName(int(e.category) - 1);
            MemoryLiveGroup& g = byCategory[name];
            g.name = name;
            g.bytes = satAdd(g.bytes, e.bytes);
            tensors[name] += e.bytes > 0 ? 1 : e.bytes < 0 ? -1 : 0;
        }
        for (auto& [name, g] : byCategory) g.blocks = uint64_t(std::max<int64_t>(0, tensors[name]));
        d.liveByCategory = grouped(byCategory);
        notes.push_back(d.label + ": a memory timeline does not say which device it was "
                                  "exported for (shown as GPU 0), nor what was reserved");
        std::erase_if(d.liveByCategory, [](const MemoryLiveGroup& g) { return g.bytes <= 0; });
        d.liveAttributed = d.peakAllocated;
        return;
    }
    // Replayed again up to the peak's event: the blocks live then.
    std::unordered_map<uint64_t, size_t> at;
    std::vector<size_t> unaddressed; // allocations without an address stay live
    for (size_t i = 0; i <= peakRow; ++i) {
        const MemoryEventRow& e = d.rows[i];
        if (e.bytes > 0) {
            if (e.addr)
                at[e.addr] = i;
            else
                unaddressed.push_back(i);
        } else if (e.bytes < 0 && e.addr) {
            at.erase(e.addr);
        }
    }
    std::vector<size_t> liveRows = std::move(unaddressed);
    for (const auto& [addr, i] : at) liveRows.push_back(i);
    std::sort(liveRows.begin(), liveRows.end());
    std::map<std::string, MemoryLiveGroup> byOp, byFrame;
    std::map<std::string, int64_t> largestOp, largestFrame;
    d.largestAtPeak = liveRows;
    std::stable_sort(d.largestAtPeak.begin(), d.largestAtPeak.end(),
                     [&d](size_t a, size_t b) { return d.rows[a].bytes > d.rows[b].bytes; });
    if (d.largestAtPeak.size() > DeviceMemory::kLargestAtPeak)
        d.largestAtPeak.resize(DeviceMemory::kLargestAtPeak);
    if (const AllocatorSnapshot* snap = t.allocatorSnapshot()) {
        // A snapshot's allocations carry their stacks: grouped by the program's frame.
        for (size_t i : liveRows) {
            const MemoryEventRow& e = d.rows[i];
            d.liveAttributed = satAdd(d.liveAttributed, e.bytes);
            const auto f = snap->userFrame(e.stack);
            const std::string name = f ? snap->frameText(*f) : "(no Python frame)";
            MemoryLiveGroup& g = byFrame[name];
            g.name = name;
            g.bytes = satAdd(g.bytes, e.bytes);
            ++g.blocks;
        }
        d.liveByFrame = grouped(byFrame);
        if (d.liveByFrame.size() == 1 && d.liveByFrame.front().name == "(no Python frame)") {
            d.liveByFrame.clear();
            notes.push_back(d.label + ": the snapshot's stacks hold no Python frame (record "
                                      "with torch.cuda.memory._record_memory_history(stacks="
                                      "\"python\" or \"all\"))");
        }
        d.liveBeforeTrace = std::max<int64_t>(0, d.peakAllocated - d.liveAttributed);
        return;
    }
    for (size_t i : liveRows) {
        const MemoryEventRow& e = d.rows[i];
        d.liveAttributed = satAdd(d.liveAttributed, e.bytes);
        for (auto [by, largest, slice, none] :
             {std::tuple{&byOp, &largestOp, e.op, "(no operator)"},
              std::tuple{&byFrame, &largestFrame, e.frame, "(no Python frame)"}}) {
            const std::string name = nameOf(t, slice, none);
            MemoryLiveGroup& g = (*by)[name];
            g.name = name;
            g.bytes = satAdd(g.bytes, e.bytes);
            ++g.blocks;
            if (int64_t& l = (*largest)[name]; e.bytes > l) l = e.bytes, g.example = slice;
        }
    }
    d.liveByOperator = grouped(byOp);
    d.liveByFrame = grouped(byFrame);
    if (d.liveByFrame.size() == 1 && !d.liveByFrame.front().example.valid()) {
        d.liveByFrame.clear(); // no frame holds any: the trace has no Python stacks
        notes.push_back(d.label + ": no Python frame holds the allocations live at "
                                  "the peak (record with_stack=True for them)");
    }
    d.liveBeforeTrace = std::max<int64_t>(0, d.peakAllocated - d.liveAttributed);
}

/// Per operator of the window [lo, hi]: its own events (innermost) and every event inside it
/// at any depth.
void operatorTable(const Trace& t, DeviceMemory& d, int64_t lo, int64_t hi) {
    std::map<std::string, MemoryOperatorRow> ops;
    std::map<std::string, std::set<uint32_t>> calls;
    const SliceTable& s = t.slices();
    for (const MemoryEventRow& e : d.rows) {
        if (e.ts < lo || e.ts > hi || !e.op.valid()) continue;
        MemoryOperatorRow& o = ops[nameOf(t, e.op, "")];
        if (e.bytes > 0) ++o.allocations, o.allocatedBytes = satAdd(o.allocatedBytes, e.bytes);
        if (e.bytes < 0) ++o.frees, o.freedBytes = satAdd(o.freedBytes, satSub(0, e.bytes));
        std::set<StringId> seen; // a name counted once per event (recursion)
        for (SliceId p = e.op; p.valid(); p = s.parent[p.index()])
            if (s.kind[p.index()] == EventKind::CpuOp && seen.insert(s.name[p.index()]).second) {
                MemoryOperatorRow& a = ops[nameOf(t, p, "")];
                a.totalIncrease = satAdd(a.totalIncrease, e.bytes);
                calls[nameOf(t, p, "")].insert(p.index());
            }
    }
    for (auto& [name, o] : ops) {
        o.name = name;
        o.calls = calls[name].size();
        o.selfIncrease = satSub(o.allocatedBytes, o.freedBytes);
        d.operators.push_back(std::move(o));
    }
    std::stable_sort(d.operators.begin(), d.operators.end(),
                     [](const MemoryOperatorRow& a, const MemoryOperatorRow& b) {
                         return a.totalIncrease > b.totalIncrease;
                     });
}

} // namespace

MemoryAnalysis analyzeMemory(const Trace& t, const AnalysisResult& r, const MemoryThresholds& th) {
    MemoryAnalysis out;
    const std::vector<MemorySample>& samples = t.memorySamples();
    if (samples.empty()) return out;
    std::map<std::pair<int, int>, std::vector<const MemorySample*>> byDevice; // (order, id)
    std::set<int> otherTypes;
    for (const MemorySample& m : samples) {
        if (m.deviceType == 1)
            byDevice[{0, m.deviceId}].push_back(&m);
        else if (m.deviceType == 0)
            byDevice[{1, -1}].push_back(&m);
        else
            otherTypes.insert(m.deviceType);
    }
    for (int type : otherTypes)
        out.notes.push_back("memory events of device type " + std::to_string(type) +
                            " are not read (neither CUDA nor the host)");
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    std::vector<int64_t> backward;
    bool backwardRead = false;
    for (const auto& [key, events] : byDevice) {
        DeviceMemory d;
        d.deviceType = key.first == 0 ? 1 : 0;
        d.device = key.second;
        d.label = d.deviceType == 1 ? "GPU " + std::to_string(d.device) : "host";
        for (const auto& p : t.metadata().devices)
            if (d.deviceType == 1 && p.id == d.device) d.capacity = p.totalGlobalMem;
        // The events in time order, each with its operator and frame; frees matched by address.
        d.rows.reserve(events.size());
        std::unordered_map<uint64_t, size_t> live; // address -> its allocation's row
        size_t peakRow = SIZE_MAX;
        for (const MemorySample* m : events) {
            MemoryEventRow e;
            e.ts = m->ts;
            e.bytes = m->bytes;
            e.totalAllocated = m->totalAllocated;
            e.totalReserved = m->totalReserved;
            e.addr = m->addr;
            e.stack = m->stack;
            e.category = m->category;
            e.op = enclosing(t, m->track, m->ts, EventKind::CpuOp, [](SliceId) { return true; });
            e.frame = enclosing(t, m->track, m->ts, EventKind::PythonFunction,
                                [&t](SliceId s) { return isSourceFrame(t, s); });
            if (e.bytes > 0 && e.addr) live[e.addr] = d.rows.size();
            if (e.bytes < 0 && e.addr)
                if (auto it = live.find(e.addr); it != live.end()) {
                    d.rows[it->second].freedAt = e.ts;
                    live.erase(it);
                }
            const bool inWindow = e.ts >= lo && e.ts <= hi;
            if (inWindow) {
                ++d.events;
                if (e.bytes > 0)
                    ++d.allocations, d.allocatedBytes = satAdd(d.allocatedBytes, e.bytes);
                if (e.bytes < 0) ++d.frees, d.freedBytes = satAdd(d.freedBytes, satSub(0, e.bytes));
                if (e.totalAllocated > d.peakAllocated) {
                    d.peakAllocated = e.totalAllocated;
                    d.peakAllocatedAt = e.ts;
                    peakRow = d.rows.size();
                }
                if (e.totalReserved > d.peakReserved) {
                    d.peakReserved = e.totalReserved;
                    d.peakReservedAt = e.ts;
                    d.allocatedAtPeakReserved = e.totalAllocated;
                }
            }
            d.rows.push_back(e);
        }
        if (d.events == 0) continue; // nothing of this device in the window
        // What was live just after the allocated peak's event: allocations up to it not yet
        // freed at it.
        if (peakRow != SIZE_MAX) liveAtPeak(t, d, peakRow, out.notes);
        operatorTable(t, d, lo, hi);
        for (size_t i = 0; i < r.steps.size(); ++i) {
            const Interval span = stepSpan(r.steps, i, r.window.endNs);
            if (d.peakAllocated >= 0 && d.peakAllocatedAt >= span.start &&
                d.peakAllocatedAt < span.end)
                d.peakStep = r.steps[i].number;
        }
        if (d.deviceType == 1 && !t.allocatorSnapshot()) {
            if (!backwardRead) backward = backwardStarts(t), backwardRead = true;
            activations(backward, r, d);
            if (d.capacity <= 0)
                out.notes.push_back(d.label + ": the trace does not say the device's memory "
                                              "(deviceProperties): no headroom can be given");
            else if (d.activationBytes < 0)
                out.notes.push_back(d.label + ": no step with a backward pass: what grows with "
                                              "the batch cannot be told from this trace");
        }
        if (const AllocatorSnapshot* snap = t.allocatorSnapshot()) allocatorState(*snap, d);
        advise(d, th);
        out.devices.push_back(std::move(d));
    }
    return out;
}

} // namespace stallscope::analysis
