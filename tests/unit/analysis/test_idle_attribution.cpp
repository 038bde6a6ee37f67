// Every idle cause on a tiny trace whose answer is known by construction: the GPU gap,
// what the launching thread did during it, and the exact nanoseconds charged.
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

struct Result {
    std::shared_ptr<const model::Trace> trace;
    AnalysisResult analysis;
    int64_t cause(IdleCause c) const { return analysis.devices.at(0).idle.causes[static_cast<size_t>(c)].ns; }
    int64_t sum() const {
        int64_t s = 0;
        for (const auto& c : analysis.devices.at(0).idle.causes) s += c.ns;
        return s;
    }
};

Result run(const TraceText& t, AnalysisOptions o = {}) {
    Result r;
    r.trace = t.load();
    if (r.trace) r.analysis = analyze(*r.trace, o);
    return r;
}

} // namespace

class TestIdleAttribution : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void dataLoadingGapIsChargedExactly() {
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::conv2d", 40, 30);
        t.runtime("cudaLaunchKernel", 50, 10, 1);
        t.kernel("k_a", 100, 100, 1);
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 200, 500);
        t.cpu("aten::stack", 300, 200);
        t.runtime("cudaLaunchKernel", 700, 10, 2);
        t.kernel("k_b", 720, 180, 2);
        const Result r = run(t);
        QVERIFY(r.trace);
        const DeviceMetrics& d = r.analysis.devices.at(0);
        QCOMPARE(r.analysis.window.startNs, int64_t(0));
        QCOMPARE(r.analysis.window.endNs, 1000 * us);
        QCOMPARE(d.idleNs, 720 * us);
        QCOMPARE(r.cause(IdleCause::DataLoading), 500 * us);
        // aten::conv2d's 10 us before its launch are dispatch (the launch follows within
        // 0.5 ms); its 10 us after it are its CPU work (the next launch is 640 us later).
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 30 * us);
        QCOMPARE(r.cause(IdleCause::CpuCompute), 10 * us);
        QCOMPARE(r.cause(IdleCause::HostUntraced), 180 * us);
        QCOMPARE(r.sum(), d.idleNs);
        QCOMPARE(d.idle.gaps.size(), size_t(3));
        QCOMPARE(d.idle.gaps[1].dominant, IdleCause::DataLoading);
    }

    void dataLoadingWhileTheGpuIsBusyCostsNothing() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("long_kernel", 0, 10, 10, 990);
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 100, 800);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::DataLoading), int64_t(0));
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void inputPreparationBeforeTheFirstKernelIsDataLoading() {
        TraceText t;
        t.step(1, 0, 1000);
        t.python("transformers/tokenization_utils.py(100): __call__", 0, 400);
        t.launch("k", 400, 10, 420, 580);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::DataLoading), 400 * us);
    }

    void blockingCopy() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 10, 10, 30, 170);
        t.runtime("cudaMemcpy", 250, 350, 50);
        t.memcpy("Memcpy HtoD (Pageable -> Device)", 550, 50, 50, 4 << 20);
        t.launch("k_b", 610, 10, 630, 370);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::BlockingCopy), 300 * us);
        QCOMPARE(r.cause(IdleCause::HostUntraced), (10 + 10 + 50 + 10 + 10) * us);
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 20 * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void pinnedAsyncCopyIsNotBlocking() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 10, 10, 30, 170);
        t.runtime("cudaMemcpyAsync", 250, 20, 50);
        t.memcpy("Memcpy HtoD (Pinned -> Device)", 280, 50, 50, 4 << 20);
        t.launch("k_b", 330, 10, 350, 650);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::BlockingCopy), int64_t(0));
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void hostSyncAndTheTimeRightAfterIt() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 10, 10, 30, 270);
        t.runtime("cudaStreamSynchronize", 150, 170, 60);
        t.launch("k_b", 400, 10, 420, 580);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::HostSync), 100 * us);  // 20 inside the call + 80 right after
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 20 * us);
        QCOMPARE(r.cause(IdleCause::HostUntraced), 30 * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void itemWaitingInsideAPageableDeviceToHostCopyIsHostSync() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 10, 10, 30, 270);
        t.cpu("aten::item", 100, 250);
        t.cpu("aten::_local_scalar_dense", 100, 250);
        t.runtime("cudaMemcpyAsync", 110, 230, 70);
        t.memcpy("Memcpy DtoH (Device -> Pageable)", 300, 2, 70, 4);
        t.launch("k_b", 500, 10, 520, 480);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::BlockingCopy), int64_t(0));
        QVERIFY(r.cause(IdleCause::HostSync) >= 38 * us);  // 302..340 in the copy call, then after it
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void optimizerIoCpuComputeAndUntraced() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 0, 10, 10, 90);
        t.annotation("Optimizer.step#SGD.step", 100, 100);
        t.cpu("aten::add_", 120, 50);
        t.python("torch/serialization.py(380): save", 200, 100);
        t.cpu("aten::sort", 300, 100);
        t.launch("k_b", 500, 10, 510, 490);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::OptimizerCpu), 100 * us);
        QCOMPARE(r.cause(IdleCause::IoLoggingCheckpoint), 100 * us);
        QCOMPARE(r.cause(IdleCause::CpuCompute), 100 * us);
        QCOMPARE(r.cause(IdleCause::HostUntraced), 100 * us);
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 20 * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    void gpuDependency() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 0, 10, 10, 290, 7);
        t.launch("k_waits_on_event", 20, 10, 500, 500, 8);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::GpuDependency), 200 * us);
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 10 * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    // Issue 25: host time by what the calls are. A free inside an operator is the
    // allocator's, not dispatch (MI300X: 1,360 hipFree calls were "launch calls").
    void allocationCallsAreTheAllocators() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 0, 10, 10, 90);
        t.cpu("aten::empty", 100, 300);
        t.runtime("hipFree", 110, 280, 0);
        t.launch("k_b", 400, 10, 420, 580);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::Allocator), 280 * us);
        QCOMPARE(r.cause(IdleCause::CpuCompute), 20 * us);     // aten::empty around the free
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), 20 * us); // the two launch calls
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    // Streams and events created, and the first launch of a kernel that took milliseconds
    // (lazy module loading), are one-off set-up; a later slow launch of it is not.
    void resourceCreationAndSlowFirstUseAreSetup() {
        TraceText t;
        t.step(1, 0, 20'000);
        t.runtime("cudaStreamCreateWithFlags", 0, 1000, 0);
        t.launch("k_conv", 1000, 3000, 4010, 100); // first launch of k_conv: 3 ms
        t.launch("k_conv", 4200, 3000, 7210, 100); // the second: launch overhead
        t.runtime("cudaDeviceGetStreamPriorityRange", 7400, 2000, 0); // first call, 2 ms
        t.launch("k_x", 9500, 10, 9510, 10490);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::Setup), (1000 + 3000 + 2000) * us);
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), (3000 + 10) * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    // A TorchScript fusion group that holds the host for milliseconds with next to no
    // launches is code generation; a short one is the fused code dispatching.
    void fusionGroupThatHoldsTheHostIsJit() {
        TraceText t;
        t.step(1, 0, 10'000);
        t.launch("k_a", 0, 10, 10, 90);
        t.cpu("prim::FusionGroup", 100, 5000);
        t.launch("fused_kernel", 5000, 10, 5110, 100);
        t.cpu("prim::FusionGroup", 5300, 60);
        t.launch("fused_kernel", 5320, 10, 5400, 4600);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::Jit), (5000 - 100) * us);
        QCOMPARE(r.cause(IdleCause::Setup), int64_t(0));
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
        // torch.compile's phases are code generation too.
        TraceText c;
        c.step(1, 0, 1000);
        c.launch("k_a", 0, 10, 10, 90);
        c.annotation("OutputGraph.call_user_compiler (dynamo_timed)", 100, 700);
        c.launch("k_b", 900, 10, 910, 90);
        QCOMPARE(run(c).cause(IdleCause::Jit), 700 * us);
    }

    // An operator's own time is dispatch between launches at most 0.5 ms apart, and its CPU
    // work between launches further apart: launch_overhead never holds more than the launch
    // calls and the dispatch between them.
    void dispatchOnlyBetweenCloseLaunches() {
        TraceText t;
        t.step(1, 0, 5000);
        t.launch("k_a", 0, 10, 10, 10);
        t.cpu("aten::mul", 100, 220);      // 100..300 before its launch: dispatch
        t.launch("k_b", 300, 10, 320, 10); // (launches 10 and 300 are 290 us apart)
        t.cpu("aten::nonzero", 400, 2110); // 400..2500: CPU work (310 .. 2500)
        t.launch("k_c", 2500, 10, 2520, 2480);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), (10 + 200 + 10 + 10) * us);
        QCOMPARE(r.cause(IdleCause::CpuCompute), (10 + 2100) * us);
        QCOMPARE(r.cause(IdleCause::HostUntraced), (80 + 70 + 10) * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }

    // cudaStreamWaitEvent orders streams; the host does not wait in it.
    void streamWaitIsNotAHostWait() {
        TraceText t;
        t.step(1, 0, 1000);
        t.launch("k_a", 0, 10, 10, 90);
        t.runtime("cudaStreamWaitEvent", 150, 100, 0);
        t.launch("k_b", 300, 10, 310, 690);
        const Result r = run(t);
        QCOMPARE(r.cause(IdleCause::HostSync), int64_t(0));
        QCOMPARE(r.cause(IdleCause::LaunchOverhead), (10 + 100 + 10) * us);
    }

    void perStepCausesAddUpToTheDeviceTotals() {
        TraceText t;
        for (int s = 0; s < 3; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 300);
            t.launch("k", b + 300, 10, b + 320, 600);
        }
        const Result r = run(t);
        const DeviceMetrics& d = r.analysis.devices.at(0);
        QCOMPARE(d.steps.size(), size_t(3));
        for (size_t k = 0; k < kIdleCauseCount; ++k) {
            int64_t sum = 0;
            for (const auto& st : d.steps) sum += st.idleByCause[k];
            QCOMPARE(sum, d.idle.causes[k].ns);
        }
        QCOMPARE(d.steps[1].idleByCause[static_cast<size_t>(IdleCause::DataLoading)], 300 * us);
    }

    void windows() {
        TraceText t;
        t.step(1, 100, 400);
        t.step(2, 500, 400);
        t.launch("k1", 110, 10, 120, 100);
        t.launch("k2", 880, 10, 890, 300);  // runs past the last step: the window follows it
        t.cpu("outside", 5000, 10);
        Result r = run(t);
        QCOMPARE(r.analysis.window.startNs, 100 * us);
        QCOMPARE(r.analysis.window.endNs, 1190 * us);
        AnalysisOptions o;
        o.window.kind = WindowKind::Step;
        o.window.step = 1;
        r = run(t, o);
        QCOMPARE(r.analysis.window.endNs, 500 * us);
        o.window.kind = WindowKind::All;
        r = run(t, o);
        QCOMPARE(r.analysis.window.endNs, 5010 * us);
        QCOMPARE(r.sum(), r.analysis.devices.at(0).idleNs);
    }
};

QTEST_GUILESS_MAIN(TestIdleAttribution)
#include "test_idle_attribution.moc"
