// Two runs compared (analysis/run_diff.h): operators aligned by name, shapes and dtypes and
// compared per step; kernels by name and launching operator, else by family; findings matched
// across renumbered GPUs; the step change against its noise; the differential flame graph;
// and on the real ResNet-50 pair, the replay's prediction of the num_workers fix.
#include "diff_pair_traces.h"
#include "test_support.h"

#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/importers/importer.h"

#include <QTest>

#include <cmath>

using namespace stallscope;
using namespace stallscope::analysis;
using test::afterTrace;
using test::beforeTrace;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;

const AlignedRow* row(const std::vector<AlignedRow>& rows, std::string_view name,
                      std::string_view dtypesOrOp = {}) {
    for (const auto& r : rows)
        if (r.name == name &&
            (dtypesOrOp.empty() || r.dtypes.find(dtypesOrOp) != std::string::npos ||
             r.op == dtypesOrOp))
            return &r;
    return nullptr;
}

AnalysisResult fabricated(size_t steps, int64_t meanNs, double cv, int32_t device) {
    AnalysisResult r;
    r.stepTimes.count = steps;
    r.stepTimes.meanNs = meanNs;
    r.stepTimes.cv = cv;
    DeviceMetrics d;
    d.device = device;
    d.name = "Test GPU";
    d.windowNs = meanNs;
    r.devices.push_back(d);
    return r;
}

Finding finding(const std::string& kind, int32_t device, int64_t saving) {
    Finding f;
    f.id = kind + "/gpu" + std::to_string(device);
    f.device = device;
    f.title = kind;
    f.savingNs = saving;
    return f;
}
} // namespace

class TestRunDiff : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void operatorsAlignedByShapesAndDtypesPerStep() {
        auto tb = beforeTrace().load();
        auto ta = afterTrace().load();
        const AnalysisResult b = analyze(*tb), a = analyze(*ta);
        QCOMPARE(b.stepTimes.count, size_t(2));
        QCOMPARE(a.stepTimes.count, size_t(4));
        const RunDiff d = diffRuns(*tb, b, *ta, a, {});
        QVERIFY(d.perStep);
        const AlignedRow* fp32 = row(d.operators, "aten::mm", "float");
        const AlignedRow* bf16 = row(d.operators, "aten::mm", "BFloat16");
        const AlignedRow* add = row(d.operators, "aten::add");
        QVERIFY(fp32 && bf16 && add);
        QCOMPARE(fp32->shapes, std::string("[[64, 32], [32, 16]]"));
        // Per step: 1 call a step on both sides although the windows hold 2 and 4.
        QCOMPARE(fp32->before.calls, uint64_t(2));
        QCOMPARE(fp32->after.calls, uint64_t(4));
        QCOMPARE(fp32->before.perStep(int64_t(fp32->before.calls)), 1.0);
        QCOMPARE(fp32->after.perStep(int64_t(fp32->after.calls)), 1.0);
        QVERIFY(fp32->gpuTimed); // both launch GPU work: compared by it
        QCOMPARE(fp32->compared(fp32->before), double(200 * us));
        QCOMPARE(fp32->compared(fp32->after), double(100 * us));
        QCOMPARE(fp32->change, RowChange::Faster);
        QCOMPARE(bf16->change, RowChange::Added);
        QVERIFY(!bf16->before.present());
        QCOMPARE(add->change, RowChange::Removed);
        // Largest change first: the mm saved 100 us a step, aten::add's 50 us went.
        QCOMPARE(d.operators.front().name, std::string("aten::mm"));
    }

    void kernelsByNameElseByFamily() {
        auto tb = beforeTrace().load();
        auto ta = afterTrace().load();
        const AnalysisResult b = analyze(*tb), a = analyze(*ta);
        const RunDiff d = diffRuns(*tb, b, *ta, a, {});
        // The GEMMs changed names (another GPU's library): one row by family under aten::mm.
        const AlignedRow* gemm = row(d.kernels, "gemm kernels", "aten::mm");
        QVERIFY(gemm);
        QVERIFY(gemm->byFamily);
        QCOMPARE(gemm->before.names, std::vector<std::string>{"volta_sgemm_128x64_nn"});
        QCOMPARE(gemm->after.names.size(), size_t(2));
        QCOMPARE(gemm->after.names.front(), std::string("ampere_sgemm_128x64_nn")); // by GPU time
        QCOMPARE(gemm->before.calls, uint64_t(2));
        QCOMPARE(gemm->after.calls, uint64_t(8));
        QCOMPARE(gemm->compared(gemm->after), double(150 * us)); // 100 + 50 a step
        QCOMPARE(gemm->change, RowChange::Faster);               // 200 -> 75 us a call
        QVERIFY(!row(d.kernels, "volta_sgemm_128x64_nn"));       // merged, not listed again
        // A kernel of its own family ("other") is never merged: it went.
        const AlignedRow* own = row(d.kernels, "my_own_kernel");
        QVERIFY(own);
        QCOMPARE(own->change, RowChange::Removed);
        QCOMPARE(own->op, std::string("aten::add"));
    }

    void differentialFlameGraphPerStep() {
        auto tb = beforeTrace().load();
        auto ta = afterTrace().load();
        const AnalysisResult b = analyze(*tb), a = analyze(*ta);
        const RunDiff d = diffRuns(*tb, b, *ta, a, {});
        QVERIFY(!d.flame.empty());
        QCOMPARE(d.flame.nodes[0].beforeNs, 230 * us); // 200 + 30 a step
        QCOMPARE(d.flame.nodes[0].afterNs, 150 * us);
        // aten::mm's subtree is one node on both sides (merged by name path).
        int mm = -1;
        for (size_t i = 0; i < d.flame.nodes.size(); ++i)
            if (d.flame.nodes[i].name == "aten::mm") mm = int(i);
        QVERIFY(mm > 0);
        QCOMPARE(d.flame.nodes[size_t(mm)].beforeNs, 200 * us);
        QCOMPARE(d.flame.nodes[size_t(mm)].afterNs, 150 * us);
        // Every node's children add up to at most its own time, on both sides.
        for (const auto& n : d.flame.nodes) {
            int64_t sb = 0, sa = 0;
            for (int32_t c : n.children) {
                sb += d.flame.nodes[size_t(c)].beforeNs;
                sa += d.flame.nodes[size_t(c)].afterNs;
            }
            QVERIFY(sb <= n.beforeNs + 1 && sa <= n.afterNs + 1);
        }
    }

    void findingsMatchedAcrossRenumberedGpus() {
        auto t = beforeTrace().load();
        AnalysisResult b = fabricated(5, 100 * us, 0.01, 0), a = fabricated(5, 90 * us, 0.01, 1);
        b.findings = {finding("cpu_dispatch", 0, 10 * us), finding("data_loading", 0, 20 * us)};
        a.findings = {finding("cpu_dispatch", 1, 5 * us), finding("comm_exposed", 1, 7 * us)};
        const RunDiff d = diffRuns(*t, b, *t, a, {});
        QCOMPARE(d.devices.size(), size_t(1));
        QCOMPARE(d.devices[0].beforeDevice, 0);
        QCOMPARE(d.devices[0].afterDevice, 1);
        QCOMPARE(d.findings.size(), size_t(3));
        QCOMPARE(d.findings[0].id, std::string("data_loading/gpu0"));
        QCOMPARE(d.findings[0].status, FindingStatus::Resolved);
        QCOMPARE(d.findings[1].id, std::string("comm_exposed/gpu1"));
        QCOMPARE(d.findings[1].status, FindingStatus::New);
        QCOMPARE(d.findings[2].status, FindingStatus::Persisting);
        // Per step: 5 steps on each side.
        QCOMPARE(d.findings[2].beforeSavingNs, 2 * us);
        QCOMPARE(d.findings[2].afterSavingNs, 1 * us);
    }

    void stepChangeAgainstItsNoise() {
        auto t = beforeTrace().load();
        // 10 steps each of 100 ms ±1 ms: 2 x sqrt(1²/10 + 1²/10) = 0.894 ms of noise.
        const int64_t ms = 1'000'000;
        const AnalysisResult b = fabricated(10, 100 * ms, 0.01, 0);
        const RunDiff within =
            diffRuns(*t, b, *t, fabricated(10, 100 * ms + ms / 2, 0.01 * 100 / 100.5, 0), {});
        QVERIFY(std::abs(within.step.noiseNs - 2 * std::sqrt(0.2) * double(ms)) < 1000);
        QVERIFY(!within.step.beyondNoise());
        const RunDiff beyond = diffRuns(*t, b, *t, fabricated(10, 98 * ms, 0.01 * 100 / 98, 0), {});
        QVERIFY(beyond.step.beyondNoise());
        QCOMPARE(beyond.step.changePct, -2.0);
        // One step: the spread is unknown, and the diff says so.
        const RunDiff one = diffRuns(*t, b, *t, fabricated(1, 50 * ms, 0, 0), {});
        QCOMPARE(one.step.noiseNs, -1.0);
        QVERIFY(!one.step.beyondNoise());
        QVERIFY(!one.notes.empty());
    }

    void predictionOfTheNumWorkersFix() {
        // ResNet-50 with num_workers=0, then 4: BEFORE's replay of the input-pipeline fix
        // stands beside the measured step time.
        const auto dir = test::sharedTraces() / "kineto-tb-plugin";
        auto rb = importers::importFile(
            dir / "resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        auto ra = importers::importFile(
            dir / "resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
        QVERIFY(rb && ra);
        const model::Trace& tb = *rb.value();
        const model::Trace& ta = *ra.value();
        const AnalysisResult b = analyze(tb), a = analyze(ta);
        const RunDiff d = diffRuns(tb, b, ta, a, {});
        const Prediction* p = nullptr;
        for (const auto& x : d.predictions)
            if (x.findingIds == std::vector<std::string>{"data_loading/gpu0"}) p = &x;
        QVERIFY(p);
        QCOMPARE(p->fixes, fixBit(Fix::InputPipeline));
        QCOMPARE(p->beforeNs, comparedStepTimeNs(b));
        QCOMPARE(p->afterNs, comparedStepTimeNs(a));
        const int64_t saved =
            replayWindowNs(tb, {}, 0, 0) - replayWindowNs(tb, {}, 0, fixBit(Fix::InputPipeline));
        QVERIFY(saved > 0);
        QCOMPARE(p->predictedNs,
                 p->beforeNs - int64_t(std::llround(double(saved) / double(b.stepTimes.count))));
        // The fix worked: faster beyond the noise, the data-loading finding resolved.
        QVERIFY(d.step.afterNs < d.step.beforeNs);
        QVERIFY(d.step.beyondNoise());
        bool resolved = false;
        for (const auto& f : d.findings)
            resolved |= f.id == "data_loading/gpu0" && f.status == FindingStatus::Resolved;
        QVERIFY(resolved);
        // The loader's work left the training process: its operator is a removed row.
        const AlignedRow* loader =
            row(d.operators, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        QVERIFY(loader);
        QCOMPARE(loader->change, RowChange::Removed);
    }
};

QTEST_GUILESS_MAIN(TestRunDiff)
#include "test_run_diff.moc"
