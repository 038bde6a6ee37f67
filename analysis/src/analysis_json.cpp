#include "stallscope/analysis/analysis_json.h"

#include "efficiency_json.h"
#include "stallscope/analysis/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stallscope::analysis {

using base::JsonWriter;

using namespace model;

std::string_view windowKindName(WindowKind k) {
    switch (k) {
    case WindowKind::Steps: return "steps";
    case WindowKind::All: return "all";
    case WindowKind::Hta: return "hta";
    case WindowKind::Step: return "step";
    case WindowKind::Range: return "range";
    }
    return "steps";
}

namespace {

void writeRoles(JsonWriter& w, const RoleBreakdown& r) {
    w.beginObject();
    w.key("kernel_ns").value(r.kernel);
    w.key("memcpy_ns").value(r.memcpy);
    w.key("memset_ns").value(r.memset);
    w.key("communication_ns").value(r.communication);
    w.key("runtime_ns").value(r.runtime);
    w.key("dataloader_ns").value(r.dataLoader);
    w.key("cpu_exec_ns").value(r.cpuExec);
    w.key("other_ns").value(r.other);
    w.endObject();
}

void writeCauses(JsonWriter& w, const std::array<int64_t, kIdleCauseCount>& ns) {
    w.beginObject();
    for (size_t k = 0; k < kIdleCauseCount; ++k) w.key(idleCauseName(static_cast<IdleCause>(k))).value(ns[k]);
    w.endObject();
}

void writeDevice(JsonWriter& w, const DeviceMetrics& d, const JsonOptions& o) {
    w.beginObject();
    w.key("name").value(d.name);
    w.key("utilization").value(d.utilization, 6);
    w.key("busy_ns").value(d.busyNs);
    w.key("idle_ns").value(d.idleNs);
    w.key("window_ns").value(d.windowNs);
    w.key("kernel_busy_ns").value(d.kernelBusyNs);
    w.key("kernel_utilization").value(d.kernelUtilization, 6);
    w.key("est_sm_efficiency");
    if (d.estSmEfficiency >= 0) w.value(d.estSmEfficiency, 6);
    else w.null();
    w.key("est_achieved_occupancy_pct");
    if (d.estAchievedOccupancy >= 0) w.value(d.estAchievedOccupancy, 3);
    else w.null();
    w.key("communication_ns").value(d.commNs);
    w.key("communication_overlap_ns").value(d.commOverlapNs);
    w.key("roles");
    writeRoles(w, d.roles);
    w.key("queues").beginArray();
    for (const auto& q : d.queues) {
        w.beginObject();
        w.key("stream").value(q.stream);
        w.key("launched").value(q.launched);
        w.key("mean_depth").value(q.meanDepth, 4);
        w.endObject();
    }
    w.endArray();
    const LaunchStats& ls = d.launches;
    w.key("launch_stats").beginObject();
    w.key("items").value(ls.items);
    w.key("shorter_than_launch").value(ls.shorterThanLaunch);
    w.key("slow_calls").value(ls.slowCalls);
    w.key("delay_outliers").value(ls.delayOutliers);
    w.key("call_p50_ns").value(ls.callP50Ns);
    w.key("call_p95_ns").value(ls.callP95Ns);
    w.key("delay_p50_ns").value(ls.delayP50Ns);
    w.key("delay_p95_ns").value(ls.delayP95Ns);
    w.key("max_queue").value(uint64_t(ls.maxQueue));
    w.key("full_queue_ns").value(ls.fullQueueNs);
    w.endObject();
    if (o.utilizationSeries) {
        w.key("utilization_series").beginObject();
        w.key("bucket_ns").value(d.utilizationBucketNs);
        w.key("values").beginArray();
        for (double v : d.utilizationSeries) w.value(v, 4);
        w.endArray();
        w.endObject();
    }
    w.key("steps").beginArray();
    for (const auto& st : d.steps) {
        w.beginObject();
        w.key("number").value(st.number);
        w.key("warmup").value(st.warmup);
        w.key("start_ns").value(st.startNs);
        w.key("end_ns").value(st.endNs);
        w.key("busy_ns").value(st.busyNs);
        w.key("kernel_busy_ns").value(st.kernelBusyNs);
        w.key("est_sm_efficiency");
        if (st.estSmEfficiency >= 0) w.value(st.estSmEfficiency, 6);
        else w.null();
        w.key("est_achieved_occupancy_pct");
        if (st.estAchievedOccupancy >= 0) w.value(st.estAchievedOccupancy, 3);
        else w.null();
        w.key("roles");
        writeRoles(w, st.roles);
        w.key("idle_causes");
        writeCauses(w, st.idleByCause);
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

void writeIdle(JsonWriter& w, const Trace& t, const IdleBreakdown& b, int64_t windowNs) {
    w.beginObject();
    w.key("idle_ns").value(b.idleNs);
    w.key("explained_ns").value(b.explainedNs());
    w.key("gaps").value(static_cast<uint64_t>(b.gaps.size()));
    w.key("causes").beginObject();
    for (size_t k = 0; k < kIdleCauseCount; ++k) {
        const CauseTotals& c = b.causes[k];
        w.key(idleCauseName(static_cast<IdleCause>(k))).beginObject();
        w.key("ns").value(c.ns);
        w.key("share_of_window").value(windowNs ? double(c.ns) / double(windowNs) : 0.0, 6);
        w.key("share_of_idle").value(b.idleNs ? double(c.ns) / double(b.idleNs) : 0.0, 6);
        w.key("gaps").value(c.gaps);
        w.key("largest").beginArray();
        for (const CausePortion& p : c.largest) {
            w.beginObject();
            w.key("gap").beginArray().value(p.gap.start).value(p.gap.end).endArray();
            w.key("ns").value(p.ns);
            w.endObject();
        }
        w.endArray();
        std::vector<std::pair<int64_t, StringId>> top;
        for (const auto& [id, ns] : b.waitedFor[k]) top.emplace_back(ns, id);
        std::sort(top.rbegin(), top.rend());
        w.key("top").beginArray();
        for (size_t i = 0; i < top.size() && i < 5; ++i) {
            w.beginObject();
            w.key("name").value(t.str(top[i].second));
            w.key("ns").value(top[i].first);
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endObject();
    w.endObject();
}

void writeFinding(JsonWriter& w, const Trace& t, const Finding& f, const JsonOptions& o) {
    const SliceTable& s = t.slices();
    w.beginObject();
    w.key("id").value(f.id);
    w.key("kind").value(findingKindName(f.kind));
    w.key("device").value(f.device);
    w.key("severity").value(severityName(f.severity));
    w.key("saving_ns").value(f.savingNs);
    w.key("saving_pct").value(f.savingShare * 100, 3);
    w.key("idle_ns").value(f.idleNs);
    w.key("replay_fix");
    if (f.replayFix != Fix::Count)
        w.value(fixName(f.replayFix));
    else
        w.null();
    w.key("title").value(f.title);
    w.key("ranges").beginArray();
    for (const Interval& iv : f.ranges) w.beginArray().value(iv.start).value(iv.end).endArray();
    w.endArray();
    w.key("evidence").beginArray();
    for (size_t i = 0; i < f.evidence.size() && i < o.maxEvidence; ++i) {
        const uint32_t e = f.evidence[i].index();
        w.beginObject();
        w.key("slice").value(static_cast<uint64_t>(e));
        w.key("name").value(t.str(s.name[e]));
        w.key("start_ns").value(s.start[e]);
        w.key("dur_ns").value(s.dur[e]);
        w.endObject();
    }
    w.endArray();
    w.key("waited_for").beginArray();
    for (const auto& [name, ns] : f.waitedFor) {
        w.beginObject();
        w.key("name").value(name);
        w.key("ns").value(ns);
        w.endObject();
    }
    w.endArray();
    w.key("explanation").value(f.explanation);
    w.key("fix").value(f.fix);
    w.key("snippet").value(f.snippet);
    w.key("confidence").value(f.confidence, 2);
    w.key("claims").beginArray();
    for (const Claim& c : f.claims) {
        w.beginObject();
        w.key("text").value(c.text);
        w.key("measure").value(c.measure);
        w.key("params").raw(c.params.empty() ? std::string_view("{}") : std::string_view(c.params));
        w.key("value").value(c.value, 6);
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

void writeStats(JsonWriter& w, const Trace& t, const StatsTables& st, const JsonOptions& o) {
    w.beginObject();
    w.key("kernels").beginArray();
    for (size_t i = 0; i < st.kernels.size() && i < o.maxTableRows; ++i) {
        const KernelStat& k = st.kernels[i];
        w.beginObject();
        w.key("name").value(t.str(k.name));
        w.key("count").value(k.count);
        w.key("total_ns").value(k.totalNs);
        w.key("min_ns").value(k.minNs);
        w.key("max_ns").value(k.maxNs);
        w.key("mean_blocks_per_sm");
        if (k.meanBlocksPerSm >= 0) w.value(k.meanBlocksPerSm, 4);
        else w.null();
        w.key("mean_occupancy_pct");
        if (k.meanOccupancy >= 0) w.value(k.meanOccupancy, 2);
        else w.null();
        w.key("tensor_cores").value(k.tensorCores);
        w.endObject();
    }
    w.endArray();
    w.key("operators").beginArray();
    for (size_t i = 0; i < st.operators.size() && i < o.maxTableRows; ++i) {
        const OperatorStat& k = st.operators[i];
        w.beginObject();
        w.key("name").value(t.str(k.name));
        w.key("count").value(k.count);
        w.key("total_ns").value(k.totalNs);
        w.key("self_ns").value(k.selfNs);
        w.key("gpu_ns").value(k.gpuNs);
        w.key("gpu_self_ns").value(k.gpuSelfNs);
        w.endObject();
    }
    w.endArray();
    w.key("copies").beginArray();
    for (const CopyStat& c : st.copies) {
        w.beginObject();
        w.key("kind").value(c.kind);
        w.key("count").value(c.count);
        w.key("bytes").value(c.bytes);
        w.key("total_ns").value(c.totalNs);
        w.key("gb_per_s").value(c.gbPerSecond, 3);
        w.endObject();
    }
    w.endArray();
    w.key("runtime").beginArray();
    for (size_t i = 0; i < st.runtime.size() && i < o.maxTableRows; ++i) {
        const RuntimeStat& k = st.runtime[i];
        w.beginObject();
        w.key("name").value(t.str(k.name));
        w.key("count").value(k.count);
        w.key("total_ns").value(k.totalNs);
        w.key("max_ns").value(k.maxNs);
        w.endObject();
    }
    w.endArray();
    w.key("kernels_by_operator").beginArray();
    for (size_t i = 0; i < st.kernelsByOperator.size() && i < o.maxTableRows; ++i) {
        const KernelOperatorStat& k = st.kernelsByOperator[i];
        w.beginObject();
        w.key("operator");
        if (k.op.valid())
            w.value(t.str(k.op));
        else
            w.null();
        w.key("kernel").value(t.str(k.kernel));
        w.key("count").value(k.count);
        w.key("total_ns").value(k.totalNs);
        w.key("min_ns").value(k.minNs);
        w.key("max_ns").value(k.maxNs);
        w.endObject();
    }
    w.endArray();
    w.key("collectives").beginArray();
    for (const CollectiveStat& c : st.collectives) {
        w.beginObject();
        w.key("type").value(c.type);
        w.key("algorithms").value(c.algorithms);
        w.key("dtype").value(c.dtype);
        w.key("count").value(c.count);
        w.key("total_ns").value(c.totalNs);
        w.key("sized_count").value(c.sizedCount);
        w.key("sized_ns").value(c.sizedNs);
        w.key("bytes").value(c.bytes);
        w.key("min_bytes").value(c.minBytes);
        w.key("max_bytes").value(c.maxBytes);
        w.key("group_size").value(c.groupSize);
        w.key("group_size_from_world").value(c.groupFromWorld);
        w.key("alg_gb_per_s");
        if (c.algGbps >= 0)
            w.value(c.algGbps, 3);
        else
            w.null();
        w.key("bus_gb_per_s");
        if (c.busGbps >= 0)
            w.value(c.busGbps, 3);
        else
            w.null();
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

/// CPU-only traces: the step thread's time by cause (docs/analysis.md "CPU-only traces").
void writeHostOnly(JsonWriter& w, const Trace& t, const HostOnlyBreakdown& h) {
    w.beginObject();
    w.key("thread").value(h.thread.valid() ? t.str(t.track(h.thread).name) : std::string_view());
    w.key("window_ns").value(h.windowNs);
    std::array<int64_t, kIdleCauseCount> ns{};
    for (size_t k = 0; k < kIdleCauseCount; ++k) ns[k] = h.time.causes[k].ns;
    w.key("causes");
    writeCauses(w, ns);
    w.key("details");
    writeIdle(w, t, h.time, h.windowNs);
    w.key("steps").beginArray();
    for (const StepMetrics& st : h.steps) {
        w.beginObject();
        w.key("number").value(st.number);
        w.key("start_ns").value(st.startNs);
        w.key("end_ns").value(st.endNs);
        w.key("causes");
        writeCauses(w, st.idleByCause);
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

} // namespace

/// The warm-up set apart from the window (docs/analysis.md "Warm-up").
static void writeWarmup(JsonWriter& w, const Warmup& wu) {
    w.beginObject();
    w.key("device").value(wu.device);
    w.key("start_ns").value(wu.startNs);
    w.key("end_ns").value(wu.endNs);
    w.key("whole_window").value(wu.wholeWindow);
    w.key("whole").beginObject();
    w.key("start_ns").value(wu.wholeStartNs);
    w.key("end_ns").value(wu.wholeEndNs);
    w.key("description").value(wu.wholeDescription);
    w.endObject();
    w.key("steps").beginArray();
    for (int64_t n : wu.steps) w.value(n);
    w.endArray();
    w.key("one_off_ns").beginObject();
    w.key("setup").value(wu.oneOffNs[0]);
    w.key("jit").value(wu.oneOffNs[1]);
    w.key("allocator").value(wu.oneOffNs[2]);
    w.endObject();
    w.key("calls").beginArray();
    for (const Warmup::Calls& k : wu.calls) {
        w.beginObject();
        w.key("name").value(k.name);
        w.key("cause").value(idleCauseName(k.cause));
        w.key("count").value(static_cast<uint64_t>(k.count));
        w.key("ns").value(k.ns);
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

void writeAnalysisJson(JsonWriter& w, const Trace& t, const AnalysisResult& r, const std::string& path, int32_t rank,
                       const JsonOptions& o) {
    w.beginObject();
    w.key("schema").value(kAnalysisSchema);
    w.key("path").value(path);
    w.key("rank").value(rank);
    w.key("window").beginObject();
    w.key("kind").value(windowKindName(r.window.kind));
    w.key("start_ns").value(r.window.startNs);
    w.key("end_ns").value(r.window.endNs);
    w.key("duration_ns").value(r.window.length());
    w.key("description").value(r.window.description);
    w.endObject();
    w.key("steps").beginObject();
    w.key("count").value(static_cast<uint64_t>(r.steps.size()));
    w.key("mean_ns").value(r.stepTimes.meanNs);
    w.key("min_ns").value(r.stepTimes.minNs);
    w.key("max_ns").value(r.stepTimes.maxNs);
    w.key("cv").value(r.stepTimes.cv, 4);
    w.key("warmup").value(static_cast<uint64_t>(
        std::count_if(r.steps.begin(), r.steps.end(), [](const Step& st) { return st.warmup; })));
    w.endObject();
    w.key("warmup");
    if (r.warmup)
        writeWarmup(w, *r.warmup);
    else
        w.null();
    w.key("devices").beginObject();
    for (const auto& d : r.devices) {
        w.key(std::to_string(d.device));
        writeDevice(w, d, o);
    }
    w.endObject();
    w.key("idle_causes").beginObject();
    for (const auto& d : r.devices) {
        std::array<int64_t, kIdleCauseCount> ns{};
        for (size_t k = 0; k < kIdleCauseCount; ++k) ns[k] = d.idle.causes[k].ns;
        w.key(std::to_string(d.device));
        writeCauses(w, ns);
    }
    w.endObject();
    w.key("idle_details").beginObject();
    for (const auto& d : r.devices) {
        w.key(std::to_string(d.device));
        writeIdle(w, t, d.idle, d.windowNs);
    }
    w.endObject();
    w.key("host_only");
    if (r.hostOnly) writeHostOnly(w, t, *r.hostOnly);
    else w.null();
    w.key("findings").beginArray();
    for (const auto& f : r.findings) writeFinding(w, t, f, o);
    w.endArray();
    w.key("waterfalls").beginArray();
    for (const Waterfall& wf : r.waterfalls) {
        w.beginObject();
        w.key("device").value(wf.device);
        w.key("measured_ns").value(wf.measuredNs);
        w.key("bars").beginArray();
        for (const WaterfallBar& b : wf.bars) {
            w.beginObject();
            w.key("finding").value(b.findingId);
            w.key("fix").value(fixName(b.fix));
            w.key("window_ns").value(b.windowNs);
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endArray();
    w.key("hta").beginObject();
    w.key("valid").value(r.hta.valid);
    w.key("temporal").beginObject();
    w.key("idle_us").micros(r.hta.idleNs);
    w.key("compute_us").micros(r.hta.computeNs);
    w.key("non_compute_us").micros(r.hta.nonComputeNs);
    w.key("span_us").micros(r.hta.spanNs);
    w.endObject();
    w.key("idle_by_stream").beginObject();
    for (const auto& s : r.hta.idleByStream) {
        w.key(std::to_string(s.stream)).beginObject();
        w.key("host_wait_us").micros(s.hostWaitNs);
        w.key("kernel_wait_us").micros(s.kernelWaitNs);
        w.key("other_us").micros(s.otherNs);
        w.endObject();
    }
    w.endObject();
    w.endObject();
    w.key("efficiency");
    detail::writeEfficiencyJson(w, r.efficiency);
    w.key("stats");
    writeStats(w, t, r.stats, o);
    // Memory, when the trace has allocator events (profile_memory=True).
    if (!t.memorySamples().empty()) {
        w.key("memory");
        writeMemoryJson(w, t, analyzeMemory(t, r), o.maxTableRows);
    }
    w.key("notes").beginArray();
    for (const auto& n : r.notes) w.value(n);
    w.endArray();
    w.endObject();
}

namespace {

void writeStack(JsonWriter& w, const model::AllocatorSnapshot& snap, uint32_t stack) {
    w.beginArray();
    for (uint32_t f : snap.stack(stack)) {
        const model::SnapshotFrame& fr = snap.frames[f];
        w.beginObject();
        w.key("name").value(fr.name);
        w.key("filename").value(fr.filename);
        w.key("line").value(fr.line);
        w.endObject();
    }
    w.endArray();
}

/// The largest blocks live at the peak (with their stacks for a snapshot), and a snapshot's
/// allocator state and out-of-memory events.
void writeAllocatorJson(JsonWriter& w, const model::Trace& t, const DeviceMemory& d) {
    const model::AllocatorSnapshot* snap = t.allocatorSnapshot();
    w.key("largest_at_peak").beginArray();
    for (size_t row : d.largestAtPeak) {
        const MemoryEventRow& e = d.rows[row];
        w.beginObject();
        w.key("bytes").value(e.bytes);
        w.key("addr").value(e.addr);
        w.key("ts_ns").value(e.ts);
        if (snap) {
            w.key("stack");
            writeStack(w, *snap, e.stack);
        } else {
            w.key("operator").value(e.op.valid() ? t.str(t.slices().name[e.op.index()]) : "");
            w.key("frame").value(e.frame.valid() ? t.str(t.slices().name[e.frame.index()]) : "");
        }
        w.endObject();
    }
    w.endArray();
    if (!d.allocator) return;
    const AllocatorState& a = *d.allocator;
    w.key("allocator").beginObject();
    w.key("reserved_bytes").value(a.reserved);
    w.key("allocated_bytes").value(a.allocated);
    w.key("active_bytes").value(a.active);
    w.key("requested_bytes").value(a.requested);
    w.key("segments").value(a.segments);
    w.key("large_segments").value(a.largeSegments);
    w.key("expandable_segments").value(a.expandableSegments);
    w.key("blocks_allocated").value(a.blocksAllocated);
    w.key("blocks_pending_free").value(a.blocksPendingFree);
    w.key("blocks_inactive").value(a.blocksInactive);
    w.key("inactive_bytes").value(a.inactiveBytes);
    w.key("largest_inactive_bytes").value(a.largestInactive);
    w.key("empty_segments").value(a.emptySegments);
    w.key("empty_segment_bytes").value(a.emptySegmentBytes);
    w.key("fragment_bytes").value(a.fragmentBytes);
    w.key("largest_fragment_bytes").value(a.largestFragment);
    w.key("expandable_segments_setting");
    if (a.expandableSetting)
        w.value(*a.expandableSetting);
    else
        w.null();
    w.endObject();
    w.key("ooms").beginArray();
    for (const MemoryOom& o : d.ooms) {
        w.beginObject();
        w.key("ts_ns").value(o.ts);
        w.key("requested_bytes").value(o.requested);
        w.key("device_free_bytes").value(o.deviceFree);
        w.key("stack");
        writeStack(w, *snap, o.stack);
        w.endObject();
    }
    w.endArray();
}

} // namespace

void writeMemoryJson(JsonWriter& w, const model::Trace& t, const MemoryAnalysis& m, size_t maxRows,
                     bool events) {
    auto sliceRef = [&t](JsonWriter& j, model::SliceId s) {
        if (s.valid())
            j.value(t.str(t.slices().name[s.index()]));
        else
            j.null();
    };
    w.beginObject();
    w.key("devices").beginArray();
    for (const DeviceMemory& d : m.devices) {
        w.beginObject();
        w.key("device").value(d.device);
        w.key("kind").value(d.deviceType == 1 ? "gpu" : "host");
        w.key("label").value(d.label);
        w.key("capacity_bytes").value(d.capacity);
        w.key("events").value(d.events);
        w.key("allocations").value(d.allocations);
        w.key("frees").value(d.frees);
        w.key("allocated_bytes").value(d.allocatedBytes);
        w.key("freed_bytes").value(d.freedBytes);
        w.key("peak_allocated_bytes").value(d.peakAllocated);
        w.key("peak_allocated_ts_ns").value(d.peakAllocatedAt);
        w.key("peak_step").value(d.peakStep);
        w.key("peak_reserved_bytes").value(d.peakReserved);
        w.key("peak_reserved_ts_ns").value(d.peakReservedAt);
        w.key("allocated_at_peak_reserved_bytes").value(d.allocatedAtPeakReserved);
        w.key("live_attributed_bytes").value(d.liveAttributed);
        w.key("live_before_trace_bytes").value(d.liveBeforeTrace);
        for (auto [key, groups] : {std::pair{"live_by_operator", &d.liveByOperator},
                                   std::pair{"live_by_frame", &d.liveByFrame},
                                   std::pair{"live_by_category", &d.liveByCategory}}) {
            w.key(key).beginArray();
            for (size_t i = 0; i < groups->size() && i < maxRows; ++i) {
                const MemoryLiveGroup& g = (*groups)[i];
                w.beginObject();
                w.key("name").value(g.name);
                w.key("bytes").value(g.bytes);
                w.key("blocks").value(g.blocks);
                w.endObject();
            }
            w.endArray();
        }
        w.key("operators").beginArray();
        for (size_t i = 0; i < d.operators.size() && i < maxRows; ++i) {
            const MemoryOperatorRow& o = d.operators[i];
            w.beginObject();
            w.key("name").value(o.name);
            w.key("calls").value(o.calls);
            w.key("allocations").value(o.allocations);
            w.key("allocated_bytes").value(o.allocatedBytes);
            w.key("frees").value(o.frees);
            w.key("freed_bytes").value(o.freedBytes);
            w.key("self_increase_bytes").value(o.selfIncrease);
            w.key("total_increase_bytes").value(o.totalIncrease);
            w.endObject();
        }
        w.endArray();
        w.key("operators_total").value(static_cast<uint64_t>(d.operators.size()));
        writeAllocatorJson(w, t, d);
        w.key("activation_bytes").value(d.activationBytes);
        w.key("activation_step").value(d.activationStep);
        w.key("advice").beginArray();
        for (const MemoryAdvice& a : d.advice) {
            w.beginObject();
            w.key("id").value(a.id);
            w.key("text").value(a.text);
            w.key("fix").value(a.fix);
            w.endObject();
        }
        w.endArray();
        if (events) {
            w.key("events").beginArray();
            for (const MemoryEventRow& e : d.rows) {
                w.beginObject();
                w.key("ts_ns").value(e.ts);
                w.key("bytes").value(e.bytes);
                w.key("total_allocated").value(e.totalAllocated);
                w.key("total_reserved").value(e.totalReserved);
                w.key("addr").value(e.addr);
                w.key("operator");
                sliceRef(w, e.op);
                w.key("frame");
                sliceRef(w, e.frame);
                w.key("freed_ts_ns").value(e.freedAt);
                w.endObject();
            }
            w.endArray();
        }
        w.endObject();
    }
    w.endArray();
    w.key("notes").beginArray();
    for (const auto& n : m.notes) w.value(n);
    w.endArray();
    w.endObject();
}

void writeCrossRankJson(JsonWriter& w, const CrossRankResult& r) {
    w.beginObject();
    w.key("collectives").value(static_cast<uint64_t>(r.collectives));
    w.key("matching").value(r.matching);
    w.key("clocks_aligned").value(r.clocksAligned);
    w.key("straggler").value(r.straggler);
    w.key("straggler_share").value(r.stragglerShare, 4);
    w.key("step_imbalance").value(r.stepImbalance, 4);
    w.key("ranks").beginArray();
    for (const RankSummary& s : r.ranks) {
        w.beginObject();
        w.key("rank").value(s.rank);
        w.key("label").value(s.label);
        w.key("path").value(s.path);
        w.key("window_ns").value(s.windowNs);
        w.key("utilization").value(s.utilization, 4);
        w.key("top_cause").value(idleCauseName(s.topCause));
        w.key("top_cause_ns").value(s.topCauseNs);
        w.key("collective_ns").value(s.collectiveNs);
        w.key("wait_ns").value(s.waitNs);
        w.key("transfer_ns").value(s.transferNs);
        w.key("last_arrivals").value(static_cast<uint64_t>(s.lastArrivals));
        w.key("late_ns").value(s.lateNs);
        w.key("clock_offset_ns").value(s.clockOffsetNs);
        w.key("late_stretch_ns").value(s.lateStretchNs);
        w.key("late_busy_ns").value(s.lateBusyNs);
        w.key("late_idle");
        writeCauses(w, s.lateIdle);
        w.key("late_phase").value(s.latePhase);
        w.key("late_phase_count").value(static_cast<uint64_t>(s.latePhaseCount));
        w.key("top_finding").value(s.topFinding);
        w.endObject();
    }
    w.endArray();
    w.key("steps").beginArray();
    for (size_t c = 0; c < r.stepLabels.size(); ++c) {
        w.beginObject();
        w.key("label").value(r.stepLabels[c]);
        w.key("straggler").value(r.stepStraggler[c]);
        w.key("ranks").beginArray();
        for (size_t i = 0; i < r.cells.size(); ++i) {
            const RankStepCell& cell = r.cells[i][c];
            w.beginObject();
            w.key("rank").value(r.ranks[i].rank);
            w.key("step_ns").value(cell.stepNs);
            w.key("busy_ns").value(cell.busyNs);
            w.key("idle");
            writeCauses(w, cell.idle);
            w.key("collective_ns").value(cell.collectiveNs);
            w.key("wait_ns").value(cell.waitNs);
            w.key("last_arrivals").value(static_cast<uint64_t>(cell.lastArrivals));
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endArray();
    w.key("findings").beginArray();
    for (const RankFinding& f : r.findings) {
        w.beginObject();
        w.key("kind").value(findingKindName(f.kind));
        w.key("ranks").value(static_cast<uint64_t>(f.ranks));
        w.key("min_saving_pct").value(f.minShare * 100, 3);
        w.key("max_saving_pct").value(f.maxShare * 100, 3);
        w.key("worst_rank").value(f.worstRank);
        w.endObject();
    }
    w.endArray();
    w.key("notes").beginArray();
    for (const auto& n : r.notes) w.value(n);
    w.endArray();
    w.endObject();
}

namespace {
/// A double that reads back to the same bits.
std::string exactDouble(double v) {
    if (!std::isfinite(v)) return "0";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}
} // namespace

void writeRankDigestJson(JsonWriter& w, const RankDigest& d) {
    w.beginObject();
    w.key("schema").value(kRankSummarySchema);
    w.key("rank").value(d.rank);
    w.key("label").value(d.label);
    w.key("path").value(d.path);
    w.key("device").value(d.device);
    w.key("device_name").value(d.deviceName);
    w.key("window_start_ns").value(d.windowStartNs);
    w.key("window_end_ns").value(d.windowEndNs);
    w.key("utilization").raw(exactDouble(d.utilization));
    w.key("idle");
    writeCauses(w, d.idle);
    w.key("steps").beginArray();
    for (const DigestStep& s : d.steps) {
        w.beginObject();
        w.key("number").value(s.number);
        w.key("label").value(s.label);
        w.key("start_ns").value(s.startNs);
        w.key("end_ns").value(s.endNs);
        w.key("busy_ns").value(s.busyNs);
        w.key("idle");
        writeCauses(w, s.idle);
        w.endObject();
    }
    w.endArray();
    w.key("collectives").beginArray();
    for (const DigestCollective& c : d.collectives) {
        w.beginObject();
        w.key("name").value(c.name);
        w.key("start_ns").value(c.startNs);
        w.key("end_ns").value(c.endNs);
        w.key("step").value(c.step);
        w.key("phase").value(c.phase);
        w.key("before_busy_ns").value(c.beforeBusyNs);
        w.key("before_idle");
        writeCauses(w, c.beforeIdle);
        if (c.seq >= 0) {
            w.key("process_group").value(c.group);
            w.key("seq").value(c.seq);
        }
        w.endObject();
    }
    w.endArray();
    w.key("findings").beginArray();
    for (const DigestFinding& f : d.findings) {
        w.beginObject();
        w.key("kind").value(findingKindName(f.kind));
        w.key("saving_share").raw(exactDouble(f.savingShare));
        w.key("title").value(f.title);
        w.endObject();
    }
    w.endArray();
    w.endObject();
}

} // namespace stallscope::analysis
