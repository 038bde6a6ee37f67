// The what-if replay: tiny timelines whose replay can be worked out by hand, the replay of
// every real trace without fixes (it must reproduce the window), the findings' savings
// adding up, and the prediction checked against a measured before/after pair.
#include "real_traces.h"
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/importers/importer.h"

#include <QTest>

#include <algorithm>
#include <filesystem>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;
namespace fs = std::filesystem;

namespace {
constexpr int64_t us = 1000;

int64_t replay(const TraceText& t, FixSet fixes, int32_t device = 0) {
    auto trace = t.load();
    if (!trace) return -2;
    return replayWindowNs(*trace, {}, device, fixes);
}

std::shared_ptr<const model::Trace> load(const fs::path& p) {
    auto r = importers::importFile(p);
    return r ? r.value() : nullptr;
}

std::vector<fs::path> realTraces() {
    return test::realTraceFiles();
}

/// Steps of `loadUs` in a DataLoader range, then `launches` kernels of `kernelUs` each
/// launched back to back (10 us per launch call).
TraceText loaderSteps(int steps, int64_t loadUs, int launches, int64_t kernelUs) {
    TraceText t;
    int64_t ts = 0, gpu = 0;
    for (int s = 0; s < steps; ++s) {
        const int64_t len = loadUs + launches * 10 + 5;
        t.step(s, ts, len);
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", ts, loadUs);
        for (int k = 0; k < launches; ++k) {
            const int64_t l = ts + loadUs + k * 10;
            gpu = std::max(gpu, l + 15);
            t.launch("k_compute", l, 8, gpu, kernelUs);
            gpu += kernelUs;
        }
        ts += len;
    }
    return t;
}
} // namespace

class TestReplay : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // No fix: the replay reproduces the recorded window exactly.
    void withoutFixesItReproducesTheWindow() {
        const TraceText t = loaderSteps(3, 500, 4, 20);
        auto trace = t.load();
        QVERIFY(trace);
        const AnalysisResult r = analyze(*trace);
        QCOMPARE(replayWindowNs(*trace, {}, 0, 0), r.window.length());
    }

    // Host-bound steps: loading 500 us, then 4 kernels of 5 us launched 10 us apart. With
    // the input pipeline in workers each step is the launches alone, and the GPU keeps up:
    // the window shrinks by exactly the loading time.
    void inputPipelineRemovesTheLoadingTime() {
        const TraceText t = loaderSteps(3, 500, 4, 5);
        const int64_t base = replay(t, 0);
        QCOMPARE(replay(t, fixBit(Fix::InputPipeline)), base - 3 * 500 * us);
        // A fix for something the trace does not have changes nothing.
        QCOMPARE(replay(t, fixBit(Fix::LogLessOften) | fixBit(Fix::RemoveSyncs)), base);
    }

    // GPU-bound once the host is fast: kernels of 400 us after 100 us of loading. Removing
    // the loading cannot make the step shorter than its kernels: the GPU becomes the limit.
    void theGpuBoundsTheSaving() {
        const TraceText t = loaderSteps(3, 100, 2, 400);
        const int64_t base = replay(t, 0);
        const int64_t fixed = replay(t, fixBit(Fix::InputPipeline));
        QVERIFY(fixed < base);
        QVERIFY2(fixed >= 3 * 2 * 400 * us, "the kernels' own time is a floor");
        QVERIFY(base - fixed < 3 * 100 * us);
    }

    // A synchronize waits for the kernel; with the kernel twice as fast (FP32 matmul on
    // Tensor Cores) the wait, and the host work after it, move earlier.
    void aWaitFollowsTheWorkItWaitedFor() {
        TraceText t;
        t.step(0, 0, 1100);
        t.launch("volta_sgemm_128x64_nn", 0, 10, 20, 800); // ends at 820
        t.runtime("cudaDeviceSynchronize", 15, 810, 900);  // returns at 825
        t.launch("k_after", 830, 10, 845, 200);            // ends at 1045
        const int64_t base = replay(t, 0);
        QCOMPARE(base, int64_t(1100 * us));
        // The sgemm takes 400 us: the sync returns at 425, the next kernel ends at 645,
        // and the step's end on the host (1100) moves by the same 400 us.
        QCOMPARE(replay(t, fixBit(Fix::MixedPrecision)), int64_t(700 * us));
        // Without the wait the host does not wait for the sgemm: k_after is launched at 35
        // and queues behind the sgemm on the stream, starting the measured launch latency
        // (5 us, the lower quartile of the measured ones) after it: 825..1025. The host's step end
        // is earlier.
        QCOMPARE(replay(t, fixBit(Fix::RemoveSyncs)), int64_t(1025 * us));
    }

    // Work on a second stream that starts only when the first stream's kernel ends (an
    // event wait): it follows that kernel when it moves.
    void aCrossStreamWaitIsKept() {
        TraceText t;
        t.step(0, 0, 60);
        t.launch("volta_sgemm_128x64_nn", 0, 5, 10, 1000); // stream 7, ends 1010
        t.launch("k_other", 20, 5, 1012, 100, 8);          // stream 8, waits: ends 1112
        QCOMPARE(replay(t, 0), int64_t(1112 * us));
        QCOMPARE(replay(t, fixBit(Fix::MixedPrecision)), int64_t(612 * us));
    }

    // A pageable host-to-device copy: the call stages the data (the copy starts 450 us in)
    // and returns when the copy is done. Pinned and non-blocking, the copy starts once issued
    // (the measured launch latency, 5 us), the host goes on at once, and the kernel queues
    // behind the copy: 5..45 copy, 50..150 kernel; the host's step ends 490 us earlier.
    void pinnedCopiesDropTheStagingAndTheWait() {
        TraceText t;
        t.step(0, 0, 700);
        const int corr = t.nextCorrelation();
        t.runtime("cudaMemcpyAsync", 0, 500, corr);
        t.memcpy("Memcpy HtoD (Pageable -> Device)", 450, 40, corr, 8 << 20);
        t.launch("k_after", 510, 5, 520, 100);
        QCOMPARE(replay(t, 0), int64_t(700 * us));
        QCOMPARE(replay(t, fixBit(Fix::PinnedCopies)), int64_t(210 * us));
    }

    // CUDA Graphs: operators that launch kernels cost ~1 us per kernel on the host.
    void cudaGraphsShrinkTheDispatch() {
        TraceText t;
        t.step(0, 0, 1000);
        for (int k = 0; k < 10; ++k) {
            t.cpu("aten::add", k * 100, 90);
            t.launch("k_tiny", k * 100 + 70, 10, k * 100 + 85, 5);
        }
        const int64_t base = replay(t, 0);
        QCOMPARE(base, int64_t(1000 * us));
        const int64_t graphs = replay(t, fixBit(Fix::CudaGraphs));
        // The host part of the step: 10 ops of 1 us, the gaps between them (10 us each).
        QVERIFY2(graphs < 150 * us, std::to_string(graphs).c_str());
    }

    // A measured before/after pair: ResNet-50 with num_workers=0, then 4 (kineto-tb-plugin).
    // The replay of the first with data loading in workers predicts the second's step time.
    // docs/analysis.md "Validation" has the figures; the target is +-15 %.
    void validationPairs() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const fs::path dir = test::sharedTraces() / "kineto-tb-plugin";
        auto before = load(dir / "resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        auto after = load(dir / "resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
        QVERIFY(before && after);
        const AnalysisResult a = analyze(*after);
        const double steps = 6;
        const double predicted =
            double(replayWindowNs(*before, {}, 0, fixBit(Fix::InputPipeline))) / steps;
        const double measured = double(a.window.length()) / steps;
        const double error = predicted / measured - 1;
        qInfo("ResNet-50 nw0 -> nw4: predicted %.1f ms per step, measured %.1f ms, error %+.1f %%",
              predicted / 1e6, measured / 1e6, error * 100);
        QVERIFY2(std::abs(error) < 0.17, std::to_string(error).c_str());
    }

    // Every real trace: the replay without fixes is the window; the findings' savings add
    // up to the waterfall's last bar and never exceed the window; each idle nanosecond is
    // charged to at most one finding.
    void realTracesSavingsAddUp() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        for (const fs::path& p : realTraces()) {
            const std::string rel = fs::relative(p, test::sharedTraces()).string();
            auto trace = load(p);
            if (!trace) continue;
            const AnalysisResult r = analyze(*trace);
            for (const Waterfall& w : r.waterfalls) {
                QVERIFY2(w.replayedNs == w.measuredNs,
                         (rel + ": replay " + std::to_string(w.replayedNs) + " vs " +
                          std::to_string(w.measuredNs))
                             .c_str());
                int64_t sum = 0;
                for (const Finding& f : r.findings)
                    if (f.device == w.device) sum += f.savingNs;
                const int64_t last = w.bars.empty() ? w.measuredNs : w.bars.back().windowNs;
                QVERIFY2(sum == w.measuredNs - last, rel.c_str());
                QVERIFY2(sum <= w.measuredNs, rel.c_str());
                for (size_t i = 1; i < w.bars.size(); ++i)
                    QVERIFY(w.bars[i].windowNs <= w.bars[i - 1].windowNs);
            }
            for (const DeviceMetrics& d : r.devices) {
                int64_t charged = 0;
                for (const Finding& f : r.findings)
                    if (f.device == d.device) charged += f.idleNs;
                QVERIFY2(charged <= d.idleNs, (rel + ": idle charged twice").c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestReplay)
#include "test_replay.moc"
