// Flame graphs on traces with known answers: CPU-time stacks merged by name path, GPU time
// charged to the launching CPU stack, ranges that cut through stacks, device filters, and
// the roots agreeing with the analysis' statistics (inline traces and the ResNet-50 trace).
#include "real_traces.h"
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/flame_graph.h"
#include "stallscope/importers/importer.h"

#include <QElapsedTimer>
#include <QTest>

#include <filesystem>
#include <initializer_list>
#include <string>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

/// The node at the end of a name path from the root; -1 when there is none.
int32_t findPath(const model::Trace& t, const FlameGraph& g,
                 std::initializer_list<std::string> path) {
    int32_t n = 0;
    for (const std::string& name : path) {
        int32_t next = -1;
        for (int32_t c : g.nodes[size_t(n)].children)
            if (flameNodeName(t, g, c) == name) next = c;
        if (next < 0) return -1;
        n = next;
    }
    return n;
}

/// ProfilerStep#1 > aten::linear > aten::addmm > cudaLaunchKernel (twice), a sibling
/// aten::relu, a depth-0 aten::linear on a second thread and a copy without a launch call.
TraceText knownStacks() {
    TraceText t;
    t.step(1, 0, 1000);
    t.cpu("aten::linear", 10, 400);
    t.cpu("aten::addmm", 20, 380);
    t.launch("gemm_kernel", 30, 10, 50, 300);
    t.cpu("aten::relu", 500, 100);
    t.launch("relu_kernel", 510, 10, 530, 50);
    t.cpu("aten::linear", 650, 100);
    t.cpu("aten::addmm", 660, 80);
    t.launch("gemm_kernel", 670, 10, 700, 100);
    t.cpu("aten::linear", 100, 200, 2);
    t.memcpy("Memcpy HtoD (Pageable -> Device)", 800, 20, 999, 4096); // no launch call
    return t;
}

void checkNode(const FlameGraph& g, int32_t n, int64_t total, int64_t self, uint64_t count) {
    QVERIFY(n > 0);
    const FlameNode& nd = g.nodes[size_t(n)];
    QCOMPARE(nd.totalNs, total);
    QCOMPARE(nd.selfNs, self);
    QCOMPARE(nd.count, count);
}

/// Structural invariants of any flame graph.
void checkInvariants(const FlameGraph& g) {
    QVERIFY(!g.nodes.empty());
    QCOMPARE(g.totalNs, g.nodes[0].totalNs);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const FlameNode& n = g.nodes[i];
        QVERIFY(n.selfNs >= 0);
        QVERIFY(n.parent < int32_t(i));
        if (i > 0) QCOMPARE(n.depth, g.nodes[size_t(n.parent)].depth + 1);
        int64_t children = 0;
        for (size_t k = 0; k < n.children.size(); ++k) {
            const FlameNode& c = g.nodes[size_t(n.children[k])];
            QCOMPARE(c.parent, int32_t(i));
            children += c.totalNs;
            if (k > 0) QVERIFY(g.nodes[size_t(n.children[k - 1])].totalNs >= c.totalNs);
        }
        if (children <= n.totalNs) QCOMPARE(n.selfNs, n.totalNs - children);
    }
}

int64_t statsGpuTotal(const AnalysisResult& r) {
    int64_t sum = 0;
    for (const KernelStat& k : r.stats.kernels) sum += k.totalNs;
    for (const CopyStat& c : r.stats.copies) sum += c.totalNs;
    return sum;
}

/// Memsets are not in the statistics tables: their time in the window, counted as they are.
int64_t memsetTotal(const model::Trace& t, const Window& w) {
    const model::SliceTable& s = t.slices();
    int64_t sum = 0;
    for (size_t i = 0; i < s.size(); ++i)
        if (s.kind[i] == model::EventKind::Memset && s.start[i] >= w.startNs &&
            s.start[i] < w.endNs)
            sum += s.dur[i];
    return sum;
}

/// The CPU time of a range by definition: the durations of the range's outermost slices.
int64_t outermostCpuTotal(const model::Trace& t, int64_t lo, int64_t hi) {
    const model::SliceTable& s = t.slices();
    int64_t sum = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (t.track(s.track[i]).kind != model::TrackKind::CpuThread) continue;
        if (s.start[i] < lo || s.start[i] >= hi) continue;
        const model::SliceId p = s.parent[i];
        if (!p.valid() || s.start[p.index()] < lo) sum += s.dur[i];
    }
    return sum;
}

} // namespace

class TestFlameGraph : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The first frame that is not a wrapper: the chain of frames that each hold (nearly) all
    // of their parent's time is passed; the frame where the time splits is where it opens.
    void firstBranchingNodePassesWrappers() {
        test::TraceText t;
        t.python("train.py(1): main", 0, 1000);
        t.python("module.py(2): _call_impl", 0, 1000);
        t.python("model.py(3): forward", 1, 998);
        t.cpu("aten::mm", 10, 500);
        t.cpu("aten::relu", 600, 300);
        auto trace = t.load();
        const FlameGraph g = buildFlameGraph(*trace, FlameMode::CpuTime, 0, 10'000'000);
        const int32_t n = firstBranchingNode(g);
        QCOMPARE(flameNodeName(*trace, g, n), std::string_view("model.py(3): forward"));
        QCOMPARE(g.nodes[size_t(n)].depth, 3);
        QCOMPARE(firstBranchingNode(g, 1.0), 2); // 998 of 1000 is not all of it
        // A root whose time splits opens at the root.
        t.cpu("other_thread_op", 0, 900, 2);
        auto two = t.load();
        QCOMPARE(firstBranchingNode(buildFlameGraph(*two, FlameMode::CpuTime, 0, 10'000'000)), 0);
        QCOMPARE(firstBranchingNode(FlameGraph{}), 0);
    }

    void stepsOfEveryNumberAreOneFrame() {
        TraceText tt;
        for (int s = 0; s < 3; ++s) {
            tt.step(s + 7, s * 1000, 900);
            tt.cpu("aten::linear", s * 1000 + 10, 100 + s * 10);
        }
        tt.cpu("aten::linear", 5000, 50);  // outside any step: not under the steps frame
        auto trace = tt.load();
        QVERIFY(trace);
        const FlameGraph g = buildFlameGraph(*trace, FlameMode::CpuTime, trace->startNs(), trace->endNs() + 1);
        checkInvariants(g);
        const int32_t steps = findPath(*trace, g, {"ProfilerStep#*"});
        checkNode(g, steps, 3 * 900 * us, 3 * 900 * us - 330 * us, 3);
        checkNode(g, findPath(*trace, g, {"ProfilerStep#*", "aten::linear"}), 330 * us, 330 * us, 3);
        checkNode(g, findPath(*trace, g, {"aten::linear"}), 50 * us, 50 * us, 1);
        QCOMPARE(findPath(*trace, g, {"ProfilerStep#7"}), -1);
    }

    void cpuStacksMergedByPath() {
        auto trace = knownStacks().load();
        QVERIFY(trace);
        const model::Trace& t = *trace;
        const AnalysisResult r = analyze(t);
        const FlameGraph g =
            buildFlameGraph(t, FlameMode::CpuTime, r.window.startNs, r.window.endNs);
        checkInvariants(g);
        QCOMPARE(g.totalNs, 1200 * us);
        const int32_t step = findPath(t, g, {"ProfilerStep#*"});
        checkNode(g, step, 1000 * us, 400 * us, 1);
        const int32_t linear = findPath(t, g, {"ProfilerStep#*", "aten::linear"});
        checkNode(g, linear, 500 * us, 40 * us, 2);
        checkNode(g, findPath(t, g, {"ProfilerStep#*", "aten::linear", "aten::addmm"}), 460 * us,
                  440 * us, 2);
        checkNode(
            g,
            findPath(t, g, {"ProfilerStep#*", "aten::linear", "aten::addmm", "cudaLaunchKernel"}),
            20 * us, 20 * us, 2);
        checkNode(g, findPath(t, g, {"ProfilerStep#*", "aten::relu"}), 100 * us, 90 * us, 1);
        checkNode(g, findPath(t, g, {"aten::linear"}), 200 * us, 200 * us, 1); // the other thread
        // Children by total, descending.
        QCOMPARE(g.nodes[0].children.front(), step);
        QCOMPARE(g.nodes[size_t(step)].children.front(), linear);
        QCOMPARE(g.maxDepth, 4);
        QCOMPARE(g.nodes[size_t(step)].kind, model::EventKind::UserAnnotation);
        QCOMPARE(flameNodeName(t, g, 0), std::string_view("all"));
        // Root == depth-0 CPU slices starting in the window.
        int64_t depth0 = 0;
        const model::SliceTable& s = t.slices();
        for (size_t i = 0; i < s.size(); ++i)
            if (t.track(s.track[i]).kind == model::TrackKind::CpuThread && s.depth[i] == 0 &&
                s.start[i] >= r.window.startNs && s.start[i] < r.window.endNs)
                depth0 += s.dur[i];
        QCOMPARE(g.totalNs, depth0);
    }

    void gpuTimeUnderLaunchingStack() {
        auto trace = knownStacks().load();
        QVERIFY(trace);
        const model::Trace& t = *trace;
        const AnalysisResult r = analyze(t);
        const FlameGraph g =
            buildFlameGraph(t, FlameMode::GpuTime, r.window.startNs, r.window.endNs);
        checkInvariants(g);
        QCOMPARE(g.totalNs, 470 * us);
        QCOMPARE(g.totalNs, statsGpuTotal(r) + memsetTotal(t, r.window));
        const int32_t gemm = findPath(
            t, g,
            {"ProfilerStep#*", "aten::linear", "aten::addmm", "cudaLaunchKernel", "gemm_kernel"});
        checkNode(g, gemm, 400 * us, 400 * us, 2);
        QVERIFY(isGpuLeaf(g, gemm));
        QCOMPARE(g.nodes[size_t(gemm)].kind, model::EventKind::Kernel);
        checkNode(
            g,
            findPath(t, g, {"ProfilerStep#*", "aten::linear", "aten::addmm", "cudaLaunchKernel"}),
            400 * us, 0, 2);
        checkNode(g, findPath(t, g, {"ProfilerStep#*"}), 450 * us, 0, 1);
        checkNode(
            g, findPath(t, g, {"ProfilerStep#*", "aten::relu", "cudaLaunchKernel", "relu_kernel"}),
            50 * us, 50 * us, 1);
        const int32_t none = findPath(t, g, {"(no launch call)"});
        checkNode(g, none, 20 * us, 0, 0);
        QVERIFY(!g.nodes[size_t(none)].name.valid());
        checkNode(g, findPath(t, g, {"(no launch call)", "Memcpy HtoD (Pageable -> Device)"}),
                  20 * us, 20 * us, 1);
        QVERIFY(!isGpuLeaf(g, findPath(t, g, {"ProfilerStep#*"})));
        // The CPU-only thread launched nothing.
        QCOMPARE(findPath(t, g, {"aten::linear"}), -1);
    }

    void rangeCuttingThroughStacks() {
        auto trace = knownStacks().load();
        QVERIFY(trace);
        const model::Trace& t = *trace;
        // [15 us, 1000 us): ProfilerStep#1 and the first aten::linear start before the range.
        const FlameGraph g =
            buildFlameGraph(t, FlameMode::CpuTime, t.startNs() + 15 * us, t.startNs() + 1000 * us);
        checkInvariants(g);
        QCOMPARE(g.totalNs, (380 + 100 + 100 + 200) * us);
        QCOMPARE(g.totalNs, outermostCpuTotal(t, t.startNs() + 15 * us, t.startNs() + 1000 * us));
        checkNode(g, findPath(t, g, {"ProfilerStep#*"}), 580 * us, 0, 0); // context only
        checkNode(g, findPath(t, g, {"ProfilerStep#*", "aten::linear"}), 480 * us, 20 * us, 1);
        checkNode(g, findPath(t, g, {"ProfilerStep#*", "aten::linear", "aten::addmm"}), 460 * us,
                  440 * us, 2);

        const FlameGraph gpu =
            buildFlameGraph(t, FlameMode::GpuTime, t.startNs() + 100 * us, t.startNs() + 750 * us);
        QCOMPARE(gpu.totalNs, (50 + 100) * us); // relu_kernel at 530 and gemm_kernel at 700

        const FlameGraph empty = buildFlameGraph(t, FlameMode::CpuTime, t.startNs() + 5000 * us,
                                                 t.startNs() + 6000 * us);
        QCOMPARE(empty.nodes.size(), size_t(1));
        QVERIFY(empty.empty());
        QCOMPARE(buildFlameGraph(t, FlameMode::GpuTime, 10, 10).nodes.size(), size_t(1));
    }

    void deviceFilter() {
        TraceText tt;
        tt.step(1, 0, 500);
        const int c0 = tt.nextCorrelation(), c1 = tt.nextCorrelation();
        tt.runtime("cudaLaunchKernel", 10, 5, c0);
        tt.runtime("cudaLaunchKernel", 20, 5, c1);
        tt.kernel("k0", 30, 100, c0, 7, 0);
        tt.kernel("k1", 40, 70, c1, 7, 1);
        auto trace = tt.load();
        QVERIFY(trace);
        const model::Trace& t = *trace;
        const int64_t lo = t.startNs(), hi = t.endNs() + 1;
        QCOMPARE(buildFlameGraph(t, FlameMode::GpuTime, lo, hi).totalNs, 170 * us);
        QCOMPARE(buildFlameGraph(t, FlameMode::GpuTime, lo, hi, 0).totalNs, 100 * us);
        const FlameGraph g1 = buildFlameGraph(t, FlameMode::GpuTime, lo, hi, 1);
        QCOMPARE(g1.totalNs, 70 * us);
        QVERIFY(findPath(t, g1, {"ProfilerStep#*", "cudaLaunchKernel", "k1"}) > 0);
        AnalysisOptions o;
        o.device = 1;
        const AnalysisResult r = analyze(t, o);
        QCOMPARE(
            buildFlameGraph(t, FlameMode::GpuTime, r.window.startNs, r.window.endNs, 1).totalNs,
            statsGpuTotal(r));
    }

    void realTraceAgreesWithAnalysis() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        auto res = importers::importFile(
            test::sharedTraces() /
            "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        QVERIFY(res);
        const model::Trace& t = *res.value();
        const AnalysisResult r = analyze(t);
        QElapsedTimer timer;
        timer.start();
        const FlameGraph gpu =
            buildFlameGraph(t, FlameMode::GpuTime, r.window.startNs, r.window.endNs);
        const FlameGraph cpu =
            buildFlameGraph(t, FlameMode::CpuTime, r.window.startNs, r.window.endNs);
        qInfo("flame graphs of %zu slices: %lld ms (GPU %zu nodes, CPU %zu nodes)",
              t.slices().size(), static_cast<long long>(timer.elapsed()), gpu.nodes.size(),
              cpu.nodes.size());
        checkInvariants(gpu);
        checkInvariants(cpu);
        QVERIFY(gpu.totalNs > 0);
        QCOMPARE(gpu.totalNs, statsGpuTotal(r) + memsetTotal(t, r.window));
        QCOMPARE(cpu.totalNs, outermostCpuTotal(t, r.window.startNs, r.window.endNs));
        // Every GPU leaf is kernel/copy/memset work, and GPU mode has no self time elsewhere.
        for (size_t i = 1; i < gpu.nodes.size(); ++i)
            if (gpu.nodes[i].children.empty())
                QVERIFY(isGpuLeaf(gpu, int32_t(i)));
            else
                QCOMPARE(gpu.nodes[i].selfNs, int64_t(0));
        // Whole trace, all of it.
        const FlameGraph all = buildFlameGraph(t, FlameMode::GpuTime, t.startNs(), t.endNs() + 1);
        int64_t work = 0;
        for (size_t i = 0; i < t.slices().size(); ++i)
            if (model::isGpuWork(t.slices().kind[i])) work += t.slices().dur[i];
        QCOMPARE(all.totalNs, work);
    }

    void everyRealTraceAgreesWithAnalysis() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        int checked = 0;
        for (const std::filesystem::path& path : test::realTraceFiles()) {
            auto res = importers::importFile(path);
            if (!res) continue; // not a trace (expected-output files)
            const model::Trace& t = *res.value();
            const AnalysisResult r = analyze(t);
            const FlameGraph gpu =
                buildFlameGraph(t, FlameMode::GpuTime, r.window.startNs, r.window.endNs);
            const FlameGraph cpu =
                buildFlameGraph(t, FlameMode::CpuTime, r.window.startNs, r.window.endNs);
            checkInvariants(gpu);
            checkInvariants(cpu);
            QVERIFY2(gpu.totalNs == statsGpuTotal(r) + memsetTotal(t, r.window),
                     path.string().c_str());
            QVERIFY2(cpu.totalNs == outermostCpuTotal(t, r.window.startNs, r.window.endNs),
                     path.string().c_str());
            ++checked;
        }
        QVERIFY(checked > 10);
    }
};

QTEST_GUILESS_MAIN(TestFlameGraph)
#include "test_flame_graph.moc"
