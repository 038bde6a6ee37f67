// Kineto's trace fields of 2025-2026, on tiny inline traces: kernels that overlap on one
// stream (programmatic dependent launch) are kept and counted once in busy time; the "Stream
// Sync" rows (cuda_sync on tid = stream + 1,000,000) belong to their stream; a "Stream Wait
// Event" naming the stream and cudaEventRecord it waited on charges the wait to the work
// recorded; kernels of one graph launch are a replay of their "graph id". (NCCL "Seq" and
// process groups: test_cross_rank; graph ids read from Nsight exports: test_foreign_importers.)
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/trace_summary.h"
#include "stallscope/importers/importer.h"
#include "stallscope/model/graph_replays.h"

#include <QTest>

#include <algorithm>

using namespace stallscope;
using namespace stallscope::analysis;
using model::DiagnosticKind;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;

/// A GPU-side event on device 0's row `tid`.
std::string gpuEvent(const char* cat, const char* name, int64_t tid, int64_t ts, int64_t dur,
                     int corr, int64_t stream) {
    return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name +
           R"(", "pid": 0, "tid": )" + std::to_string(tid) + ", \"ts\": " + std::to_string(ts) +
           ", \"dur\": " + std::to_string(dur) +
           ", \"args\": {\"correlation\": " + std::to_string(corr) +
           ", \"stream\": " + std::to_string(stream) + ", \"device\": 0}}";
}
} // namespace

class TestKinetoFields : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // k_b starts at 200 us while k_a (100-300 us) still runs on the same stream: both are kept,
    // k_b a lane lower, an info note (not a broken-file warning), busy 300 us, not 400.
    void kernelsOverlappingOnOneStream() {
        TraceText t;
        t.step(1, 0, 1000);
        t.runtime("cudaLaunchKernelExC", 10, 5, 1);
        t.runtime("cudaLaunchKernelExC", 20, 5, 2);
        t.add(gpuEvent("kernel", "k_a", 7, 100, 200, 1, 7));
        t.add(gpuEvent("kernel", "k_b", 7, 200, 200, 2, 7));
        const auto trace = t.load(9);
        QVERIFY(trace);
        QCOMPARE(trace->slices().size(), size_t(5));
        QCOMPARE(trace->diagnostics().count(DiagnosticKind::OverlappingGpuWork), uint64_t(1));
        QCOMPARE(trace->diagnostics().count(DiagnosticKind::CrossingSlices), uint64_t(0));
        const AnalysisResult r = analyze(*trace);
        QCOMPARE(r.devices.at(0).busyNs, 300 * us);
        QCOMPARE(summarize(*trace).devices.at(0).kernels, uint64_t(2));
    }

    // A CPU slice crossing another is still a broken-file warning.
    void crossingCpuSlicesStayAWarning() {
        TraceText t;
        t.cpu("a", 0, 100).cpu("b", 50, 100);
        const auto trace = t.load();
        QVERIFY(trace);
        QCOMPARE(trace->diagnostics().count(DiagnosticKind::CrossingSlices), uint64_t(1));
        QCOMPARE(trace->diagnostics().count(DiagnosticKind::OverlappingGpuWork), uint64_t(0));
    }

    // Kineto 2026 writes a stream's cuda_sync events on tid = stream + 1,000,000: that row is
    // the stream's ("stream 7 sync", right under stream 7), not a stream of its own.
    void streamSyncRowsBelongToTheirStream() {
        TraceText t;
        t.step(1, 0, 1000);
        t.runtime("cudaLaunchKernel", 10, 5, 1);
        t.add(gpuEvent("kernel", "k", 7, 100, 200, 1, 7));
        t.runtime("cudaLaunchKernel", 12, 5, 2);
        t.add(gpuEvent("kernel", "k2", 3, 100, 50, 2, 3));
        t.runtime("cudaStreamSynchronize", 240, 320, 3);
        t.add(gpuEvent("cuda_sync", "Stream Sync", 1'000'007, 250, 300, 3, 7));
        const auto trace = t.load(9);
        QVERIFY(trace);
        model::TrackId stream7, sync;
        for (uint32_t i = 0; i < trace->tracks().size(); ++i) {
            const auto& tr = trace->tracks()[i];
            if (tr.key.number == 7) stream7 = model::TrackId(i);
            if (tr.key.number == 1'000'007) sync = model::TrackId(i);
        }
        QVERIFY(stream7.valid() && sync.valid());
        QCOMPARE(trace->track(sync).syncOf.index(), stream7.index());
        QCOMPARE(trace->str(trace->track(sync).name), std::string_view("stream 7 sync"));
        const auto& order = trace->displayOrder();
        const auto at = std::find(order.begin(), order.end(), stream7);
        QVERIFY(at != order.end() && at + 1 != order.end() && *(at + 1) == sync);
        QCOMPARE(summarize(*trace).gpuStreams, uint32_t(2)); // streams 3 and 7
        // A row past 1,000,000 with kernels, or with no stream below it, stays a stream.
        TraceText other;
        other.runtime("cudaLaunchKernel", 10, 5, 1);
        other.add(gpuEvent("kernel", "k", 1'000'009, 100, 200, 1, 1'000'009));
        other.runtime("cudaStreamSynchronize", 240, 320, 2);
        other.add(gpuEvent("cuda_sync", "Stream Sync", 1'000'004, 250, 300, 2, 4));
        const auto lone = other.load(9);
        QVERIFY(lone);
        for (const auto& tr : lone->tracks()) QVERIFY(!tr.syncOf.valid());
        QCOMPARE(summarize(*lone).gpuStreams, uint32_t(2));
    }
    // Device 0's stream 7 waits (cudaStreamWaitEvent) on an event recorded on stream 20 of
    // device 1 after `peer_send` (40-900 us): device 0's idle 100-910 us is a GPU-side wait,
    // 800 us of it on `peer_send` by name; `late` was launched on stream 20 after the record
    // and is not what the event waited for. Kineto before its fix writes -1: the wait stays
    // unnamed and the text says the trace does not show what was recorded.
    void streamWaitsNameTheWorkTheEventRecorded() {
        for (const bool resolved : {true, false}) {
            TraceText t;
            t.step(1, 0, 1000);
            t.runtime("cudaLaunchKernel", 10, 5, 1).kernel("first", 20, 80, 1, 7, 0);
            t.runtime("cudaLaunchKernel", 30, 5, 2).kernel("peer_send", 40, 860, 2, 20, 1);
            t.runtime("cudaEventRecord", 40, 3, 3);
            t.runtime("cudaLaunchKernel", 45, 5, 4).kernel("late", 900, 50, 4, 20, 1);
            t.runtime("cudaStreamWaitEvent", 50, 3, 5);
            t.add(std::string(R"({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", )"
                              R"("pid": 0, "tid": 7, "ts": 50, "dur": 3, "args": {)"
                              R"("cuda_sync_kind": "Stream Wait Event", "stream": 7, )"
                              R"("correlation": 5, "device": 0, "wait_on_stream": )") +
                  (resolved ? "20" : "-1") + R"(, "wait_on_cuda_event_record_corr_id": )" +
                  (resolved ? "3" : "-1") + "}}");
            t.runtime("cudaLaunchKernel", 60, 5, 6).kernel("after", 910, 90, 6, 7, 0);
            const auto trace = t.load(9);
            QVERIFY(trace);
            const AnalysisResult r = analyze(*trace);
            const DeviceMetrics& d0 =
                *std::find_if(r.devices.begin(), r.devices.end(),
                              [](const DeviceMetrics& d) { return d.device == 0; });
            const size_t dep = static_cast<size_t>(IdleCause::GpuDependency);
            QCOMPARE(d0.idle.causes[dep].ns, 810 * us);
            int64_t onPeer = 0;
            for (const auto& [name, ns] : d0.idle.waitedFor[dep])
                if (trace->str(name) == "peer_send")
                    onPeer += ns;
                else
                    QVERIFY2(false, "only peer_send is named");
            QCOMPARE(onPeer, resolved ? 800 * us : 0);
            std::string text;
            for (const Finding& f : r.findings)
                if (f.device == 0) text += f.explanation + "\n";
            const bool named = text.find("for the event `cudaEventRecord` recorded after "
                                         "`peer_send` on stream 20") != std::string::npos;
            QVERIFY2(named == resolved, text.c_str());
            QVERIFY2((text.find("recorded by work the trace does not show") != std::string::npos) ==
                         !resolved,
                     text.c_str());
        }
    }
    // The recording machine from the top-level keys: Kineto's driver versions (CUDA's 1000 x
    // major + 10 x minor, HIP's 10^7 x major + 10^5 x minor + patch) and the host_* keys the
    // Nsight and rocprofv3 imports write.
    void hostFromTopLevelKeys() {
        const std::string events = R"("traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", )"
                                   R"("pid": 1, "tid": 1, "ts": 0, "dur": 5}]})";
        auto cuda = importers::importBuffer(
            R"({"cuda_driver_version": 12080, "host_cpu": "AMD EPYC 7413", "host_cpu_cores": 48, )"
            R"("hostname": "n7", "gpu_driver_version": "570.86.15", )" +
            events);
        QVERIFY(cuda);
        QCOMPARE(summarize(*cuda.value()).host,
                 std::string(
                     "AMD EPYC 7413, 48 cores; host n7; GPU driver 570.86.15; CUDA driver 12.8"));
        auto hip = importers::importBuffer(R"({"hip_driver_version": 70051831, )" + events);
        QVERIFY(hip);
        QCOMPARE(summarize(*hip.value()).host, std::string("HIP driver 7.0.51831"));
        auto none = importers::importBuffer("{" + events);
        QVERIFY(none);
        QCOMPARE(summarize(*none.value()).host, std::string());
    }

    // Two cudaGraphLaunch calls replay graph 3 (Kineto's "graph id" on its kernels): each
    // replay is the work its launch started, a range around its kernels; a kernel launched on
    // its own is in none. The longest GPU-side wait ends at the second replay: the finding
    // says it is inside graph 3. Without "graph id" the replays are still found, unnamed.
    void graphReplaysGroupTheirKernels() {
        for (const bool withIds : {true, false}) {
            auto kernel = [&](const char* name, int64_t ts, int64_t dur, int corr, int node) {
                return std::string("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"") + name +
                       "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(ts) +
                       ", \"dur\": " + std::to_string(dur) +
                       ", \"args\": {\"correlation\": " + std::to_string(corr) +
                       ", \"stream\": 7, \"device\": 0" +
                       (withIds ? ", \"graph id\": 3, \"graph node id\": " + std::to_string(node)
                                : std::string()) +
                       "}}";
            };
            TraceText t;
            t.step(1, 0, 800);
            t.runtime("cudaGraphLaunch", 10, 20, 1);
            t.add(kernel("g_a", 100, 50, 1, 1)).add(kernel("g_b", 150, 70, 1, 2));
            t.runtime("cudaGraphLaunch", 40, 20, 2);
            t.add(kernel("g_a", 600, 100, 2, 1));
            t.runtime("cudaLaunchKernel", 700, 5, 3).kernel("alone", 710, 50, 3, 7, 0);
            const auto trace = t.load(9);
            QVERIFY(trace);
            const auto replays = model::graphReplays(*trace);
            QCOMPARE(replays.size(), size_t(2));
            QCOMPARE(replays[0].items, 2u);
            QCOMPARE(replays[0].startNs, 100 * us);
            QCOMPARE(replays[0].endNs, 220 * us);
            QCOMPARE(replays[1].items, 1u);
            for (const auto& r : replays) QCOMPARE(r.graphId, withIds ? int64_t(3) : int64_t(-1));
            const auto& s = trace->slices();
            for (uint32_t i = 0; i < s.size(); ++i)
                if (trace->str(s.name[i]) == "alone")
                    QVERIFY(!model::replayHolding(replays, *trace, model::SliceId(i)));
                else if (trace->str(s.name[i]) == "g_b")
                    QCOMPARE(model::replayHolding(replays, *trace, model::SliceId(i)), &replays[0]);
            const AnalysisResult r = analyze(*trace);
            std::string text;
            for (const Finding& f : r.findings) text += f.explanation + "\n";
            const std::string said = withIds
                                         ? "`g_a` on stream 7 (inside graph 3) was launched"
                                         : "`g_a` on stream 7 (inside a graph replay) was launched";
            QVERIFY2(text.find(said) != std::string::npos, text.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestKinetoFields)
#include "test_kineto_fields.moc"
