// Device metrics on traces with known answers: utilisation, SM efficiency, occupancy,
// queue depth, communication overlap, role priority, utilisation series, statistics.
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/step_breakdown.h"
#include "stallscope/model/intervals.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;
}

class TestMetrics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void intervalAlgebra() {
        const Intervals a = mergeIntervals({{0, 10}, {5, 20}, {30, 40}, {40, 45}, {50, 50}});
        QCOMPARE(a.size(), size_t(2));
        QCOMPARE(totalLength(a), int64_t(35));
        QCOMPARE(totalLength(intersect(a, {{15, 35}})), int64_t(10));
        QCOMPARE(totalLength(subtract(a, {{15, 35}})), int64_t(25));
        QCOMPARE(complement(a, -5, 50).size(), size_t(3));
        QCOMPARE(lengthWithin(a, 8, 33), int64_t(15));
    }

    void utilisationSmEfficiencyOccupancy() {
        TraceText t;
        t.step(1, 0, 200);
        const int c1 = t.nextCorrelation(), c2 = t.nextCorrelation();
        t.runtime("cudaLaunchKernel", 0, 5, c1);
        t.runtime("cudaLaunchKernel", 6, 2, c2);
        t.kernel("gemm_a", 10, 90, c1, 7, 0, 0.5, 20);    // [10, 100)
        t.kernel("gemm_b", 50, 100, c2, 8, 0, 0.75, 60);  // [50, 150) on another stream
        auto trace = t.load();
        QVERIFY(trace);
        const AnalysisResult r = analyze(*trace);
        const DeviceMetrics& d = r.devices.at(0);
        QCOMPARE(d.windowNs, 200 * us);
        QCOMPARE(d.busyNs, 140 * us);
        QCOMPARE(d.idleNs, 60 * us);
        QCOMPARE(d.utilization, 0.7);
        // [10,50) 0.5, [50,100) min(1.25, 1), [100,150) 0.75 -> (20 + 50 + 37.5) / 200
        QVERIFY(std::abs(d.estSmEfficiency - 107.5 / 200.0) < 1e-9);
        // duration-weighted: (20*90 + 60*100) / 190
        QVERIFY(std::abs(d.estAchievedOccupancy - (20.0 * 90 + 60.0 * 100) / 190.0) < 1e-4);
        // Queued: kernel 1 waits [5,10), kernel 2 waits [8,50): 47 us over 200 us.
        double depth = 0;
        for (const auto& q : d.queues) depth += q.meanDepth;
        QVERIFY(std::abs(depth - 47.0 / 200.0) < 1e-9);
        QCOMPARE(r.stats.kernels.size(), size_t(2));
        QCOMPARE(r.stats.kernels[0].totalNs, 100 * us);
    }

    // HTA's launch statistics: short kernels, slow calls, launch-delay outliers, the queue.
    void launchStatistics() {
        TraceText t;
        t.step(1, 0, 2000);
        // Four launches on stream 7: calls of 5, 60, 5 and 5 us; kernels of 2, 100, 3 and 50 us.
        const int64_t call[] = {5, 60, 5, 5}, at[] = {0, 10, 80, 90};
        const int64_t start[] = {10, 200, 300, 303}, dur[] = {2, 100, 3, 50};
        for (int i = 0; i < 4; ++i) {
            const int c = t.nextCorrelation();
            t.runtime("cudaLaunchKernel", at[i], call[i], c);
            t.kernel("k", start[i], dur[i], c);
        }
        const auto trace = t.load();
        const AnalysisResult result = analyze(*trace);
        const LaunchStats& l = result.devices.at(0).launches;
        QCOMPARE(l.items, uint64_t(4));
        QCOMPARE(l.shorterThanLaunch, uint64_t(2)); // 2 < 5 and 3 < 5
        QCOMPARE(l.slowCalls, uint64_t(1));         // the 60 us call
        // Delays (start - call end): 5, 130, 215, 208 us: three over 100 us.
        QCOMPARE(l.delayOutliers, uint64_t(3));
        QCOMPARE(l.delayP50Ns, 208 * us); // the nearest rank of 4: index round(1.5) = 2
        QCOMPARE(l.callP95Ns, 60 * us);
        // Queued [5,10), [70,200), [85,300), [95,303): three deep over [95, 200).
        QCOMPARE(l.maxQueue, 3u);
        QCOMPARE(l.fullQueueNs, int64_t(0));
    }

    // 1100 launches 1 us apart, their kernels from 5 ms on, 1 us apart: the queue reaches 1024
    // when the 1024th call returns (1024 us) and falls below once 77 kernels started (5076 us).
    void aFullLaunchQueue() {
        TraceText t;
        t.step(1, 0, 10'000);
        for (int i = 0; i < 1100; ++i) {
            const int c = t.nextCorrelation();
            t.runtime("cudaLaunchKernel", i, 1, c);
            t.kernel("k", 5000 + i, 1, c);
        }
        const auto trace = t.load();
        const AnalysisResult result = analyze(*trace);
        const LaunchStats& l = result.devices.at(0).launches;
        QCOMPARE(l.maxQueue, 1100u);
        QCOMPARE(l.fullQueueNs, (5076 - 1024) * us);
    }

    // A cancel flag stops the analysis before its first stage; cleared, the same trace is
    // analysed in full.
    void cancelStopsTheAnalysis() {
        TraceText t;
        t.step(1, 0, 200);
        const int c1 = t.nextCorrelation();
        t.runtime("cudaLaunchKernel", 0, 5, c1);
        t.kernel("gemm_a", 10, 90, c1, 7, 0, 0.5, 20);
        auto trace = t.load();
        QVERIFY(trace);
        std::atomic<bool> cancel{true};
        AnalysisOptions o;
        o.cancel = &cancel;
        const AnalysisResult stopped = analyze(*trace, o);
        QVERIFY(stopped.devices.empty() && stopped.findings.empty());
        QCOMPARE(stopped.notes, std::vector<std::string>{"cancelled"});
        cancel = false;
        const AnalysisResult whole = analyze(*trace, o);
        QCOMPARE(whole.devices.size(), size_t(1));
        QCOMPARE(whole.devices[0].busyNs, 90 * us);
    }

    void communicationOverlapAndRoles() {
        TraceText t;
        t.step(1, 0, 400);
        t.launch("ncclKernel_AllReduce_RING_LL_Sum_float", 0, 5, 10, 100, 9);  // [10, 110)
        t.launch("compute_kernel", 1, 5, 60, 100, 7);                          // [60, 160)
        t.runtime("cudaMemcpyAsync", 200, 10, 77);
        t.memcpy("Memcpy HtoD (Pinned -> Device)", 215, 20, 77, 1 << 20);     // [215, 235)
        t.annotation("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 250, 50);
        t.cpu("aten::relu", 320, 30);
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const DeviceMetrics& d = r.devices.at(0);
        QCOMPARE(d.commNs, 100 * us);
        QCOMPARE(d.commOverlapNs, 50 * us);
        const RoleBreakdown& roles = d.roles;
        QCOMPARE(roles.kernel, 100 * us);        // compute kernel [60, 160)
        QCOMPARE(roles.communication, 50 * us);  // [10, 60): the part not under a compute kernel
        QCOMPARE(roles.memcpy, 20 * us);
        QCOMPARE(roles.runtime, (5 + 5 + 10) * us - 4 * us);  // launches [0,5),[1,6) -> [0,6); memcpy call [200,210)
        QCOMPARE(roles.dataLoader, 50 * us);
        QCOMPARE(roles.cpuExec, 30 * us);
        QCOMPARE(roles.kernel + roles.memcpy + roles.memset + roles.communication + roles.runtime + roles.dataLoader +
                     roles.cpuExec + roles.other,
                 400 * us);
    }

    void stepBreakdownKeepsTheStepsOfTheWindow() {
        // Three steps; a range over step 2 alone (as the GUI's step scope analyses it) has
        // one step in its breakdown, with that step's kernel time.
        TraceText t;
        for (int k = 0; k < 3; ++k) {
            t.step(k + 1, k * 1000, 1000);
            t.launch("k" + std::to_string(k), k * 1000 + 10, 5, k * 1000 + 100, 100 * (k + 1));
        }
        auto trace = t.load();
        const AnalysisResult whole = analyze(*trace);
        QCOMPARE(stepBreakdown(whole.devices.at(0)).steps.size(), size_t(3));
        AnalysisOptions o;
        o.window.kind = WindowKind::Range;
        o.window.startNs = trace->slices().start[0] + 1000 * us;
        o.window.endNs = o.window.startNs + 1000 * us;
        for (uint32_t i = 0; i < trace->slices().size(); ++i)
            if (trace->str(trace->slices().name[i]) == "ProfilerStep#2") {
                o.window.startNs = trace->slices().start[i];
                o.window.endNs = trace->slices().end(i);
            }
        const AnalysisResult one = analyze(*trace, o);
        const StepBreakdown b = stepBreakdown(one.devices.at(0));
        QCOMPARE(b.steps.size(), size_t(1));
        QCOMPARE(b.steps[0].number, int64_t(2));
        QCOMPARE(b.steps[0].lengthNs(), 1000 * us);
        QCOMPARE(b.meanOver, size_t(1));
        QCOMPARE(b.steps[0].ns[0], 200 * us); // k1's 200 us of kernel time
    }

    void utilisationSeriesBuckets() {
        TraceText t;
        t.step(1, 0, 3000);
        t.launch("k", 0, 10, 500, 1000);  // busy [500, 1500)
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const auto& s = r.devices.at(0).utilizationSeries;
        QCOMPARE(s.size(), size_t(3));
        QCOMPARE(s[0], 0.5);
        QCOMPARE(s[1], 0.5);
        QCOMPARE(s[2], 0.0);
    }

    void operatorSelfTimeAndGpuTime() {
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::linear", 0, 100);
        t.cpu("aten::addmm", 10, 60);
        t.launch("gemm", 20, 10, 40, 300);
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        for (const auto& op : r.stats.operators) {
            const std::string n(trace->str(op.name));
            if (n == "aten::linear") {
                QCOMPARE(op.selfNs, 40 * us);
                QCOMPARE(op.gpuNs, 300 * us);
            }
            if (n == "aten::addmm") QCOMPARE(op.selfNs, 50 * us);
        }
        QCOMPARE(r.stats.runtime.at(0).count, uint64_t(1));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
