// The statistics tables beyond the plain ones: device self and total time of operators,
// kernels by operator, operators grouped by input shapes and by call stack, collectives by
// type with sizes and bus bandwidth (inline traces with known answers).
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/module_tree.h"
#include "stallscope/analysis/operator_groups.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;

const OperatorStat* op(const model::Trace& t, const std::vector<OperatorStat>& ops,
                       std::string_view name) {
    for (const auto& o : ops)
        if (t.str(o.name) == name) return &o;
    return nullptr;
}

/// aten::linear [0,100) > aten::addmm [10,70) launches gemm (300 us); aten::linear also
/// launches "bias" itself (50 us).
TraceText linearTrace() {
    TraceText t;
    t.step(1, 0, 1000);
    t.cpu("aten::linear", 0, 100);
    t.cpu("aten::addmm", 10, 60);
    t.launch("gemm", 20, 10, 40, 300);
    t.launch("bias", 80, 10, 350, 50);
    return t;
}
} // namespace

class TestStatsTables : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void deviceSelfAndTotal() {
        auto trace = linearTrace().load();
        const AnalysisResult r = analyze(*trace);
        const OperatorStat* linear = op(*trace, r.stats.operators, "aten::linear");
        const OperatorStat* addmm = op(*trace, r.stats.operators, "aten::addmm");
        QVERIFY(linear && addmm);
        QCOMPARE(linear->gpuNs, 350 * us);    // both kernels, at any depth
        QCOMPARE(linear->gpuSelfNs, 50 * us); // only the one it launched itself
        QCOMPARE(addmm->gpuNs, 300 * us);
        QCOMPARE(addmm->gpuSelfNs, 300 * us);
        // ProfilerStep#1 is not an operator: nothing is charged to it as self.
        QVERIFY(!op(*trace, r.stats.operators, "ProfilerStep#1"));
    }

    void kernelsByOperator() {
        TraceText t = linearTrace();
        t.launch("loose", 500, 10, 600, 20); // launched outside any operator
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        QCOMPARE(r.stats.kernelsByOperator.size(), size_t(3));
        const KernelOperatorStat& top = r.stats.kernelsByOperator[0];
        QCOMPARE(trace->str(top.op), std::string_view("aten::addmm"));
        QCOMPARE(trace->str(top.kernel), std::string_view("gemm"));
        QCOMPARE(top.totalNs, 300 * us);
        QCOMPARE(trace->str(r.stats.kernelsByOperator[1].op), std::string_view("aten::linear"));
        QVERIFY(!r.stats.kernelsByOperator[2].op.valid());
        // Every kernel is in exactly one row: the rows add up to the kernel table.
        int64_t sum = 0, kernels = 0;
        for (const auto& k : r.stats.kernelsByOperator) sum += k.totalNs;
        for (const auto& k : r.stats.kernels) kernels += k.totalNs;
        QCOMPARE(sum, kernels);
    }

    void groupedByNameEqualsTheTable() {
        auto trace = linearTrace().load();
        const AnalysisResult r = analyze(*trace);
        const OperatorGroups g = groupOperators(*trace, r, OperatorGrouping::Name);
        QCOMPARE(g.rows.size(), r.stats.operators.size());
        for (const OperatorGroup& row : g.rows) {
            const OperatorStat* o = op(*trace, r.stats.operators, trace->str(row.stat.name));
            QVERIFY(o);
            QCOMPARE(row.stat.count, o->count);
            QCOMPARE(row.stat.selfNs, o->selfNs);
            QCOMPARE(row.stat.totalNs, o->totalNs);
            QCOMPARE(row.stat.gpuNs, o->gpuNs);
            QCOMPARE(row.stat.gpuSelfNs, o->gpuSelfNs);
            QVERIFY(row.detail.empty());
        }
    }

    void groupedByInputShapes() {
        TraceText t;
        t.step(1, 0, 1000);
        auto mm = [&](int64_t ts, const char* dims) {
            t.add(
                R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": )" +
                std::to_string(ts) + R"(, "dur": 10, "args": {"Input Dims": )" + dims + "}}");
        };
        mm(0, "[[8, 16], [16, 4]]");
        mm(20, "[[8,16],[16,4]]"); // the same shapes, spaced differently
        mm(40, "[[32, 16], [16, 4]]");
        t.cpu("aten::relu", 60, 10); // no shapes recorded
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const OperatorGroups g = groupOperators(*trace, r, OperatorGrouping::InputShapes);
        QCOMPARE(g.rows.size(), size_t(3));
        QCOMPARE(g.calls, uint64_t(4));
        QCOMPARE(g.callsWithDetail, uint64_t(3));
        bool small = false, large = false;
        for (const auto& row : g.rows) {
            if (row.detail == "[[8, 16], [16, 4]]")
                small = row.stat.count == 2 && row.stat.selfNs == 20 * us;
            if (row.detail == "[[32, 16], [16, 4]]") large = row.stat.count == 1;
        }
        QVERIFY(small);
        QVERIFY(large);
    }

    void groupedByCallStack() {
        TraceText t;
        t.step(1, 0, 1000);
        t.python("train.py(10): step", 0, 200);
        t.python("model.py(5): forward", 10, 80);
        t.cpu("aten::add", 20, 10);  // train.py > model.py
        t.cpu("aten::add", 120, 10); // train.py only
        t.add(
            R"({"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 100, "tid": 1, "ts": 300, "dur": 10,)"
            R"( "args": {"Call stack": "a.py(1): f;b.py(2): g"}})");
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const OperatorGroups g = groupOperators(*trace, r, OperatorGrouping::CallStack);
        QCOMPARE(g.rows.size(), size_t(3));
        QStringList stacks;
        for (const auto& row : g.rows) stacks << QString::fromStdString(row.detail);
        QVERIFY(stacks.contains("model.py(5): forward\ntrain.py(10): step"));
        QVERIFY(stacks.contains("train.py(10): step"));
        QVERIFY(stacks.contains("a.py(1): f\nb.py(2): g"));
    }

    void collectivesFromKernelArgs() {
        TraceText t;
        t.step(1, 0, 10000);
        // Two all-reduces of 1,000,000 floats over 4 ranks, 1 ms each; one broadcast whose
        // size nothing says.
        for (int i = 0; i < 2; ++i) {
            const int corr = t.nextCorrelation();
            t.runtime("cudaLaunchKernel", 100 + i * 2000, 10, corr);
            t.add(
                R"J({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 7, "ts": )J" +
                std::to_string(200 + i * 2000) + R"(, "dur": 1000, "args": {"correlation": )" +
                std::to_string(corr) +
                R"(, "stream": 7, "device": 0, "Collective name": "allreduce", "In msg nelems": 1000000,)"
                R"( "Out msg nelems": 1000000, "dtype": "Float", "Group size": 4}})");
        }
        const int corr = t.nextCorrelation();
        t.runtime("cudaLaunchKernel", 5000, 10, corr);
        t.kernel("ncclKernel_Broadcast_TREE_LL128_Sum_int8_t(x)", 5100, 500, corr);
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        QCOMPARE(r.stats.collectives.size(), size_t(2));
        const CollectiveStat& ar = r.stats.collectives[0];
        QCOMPARE(ar.type, std::string("allreduce"));
        QCOMPARE(ar.algorithms, std::string("RING LL"));
        QCOMPARE(ar.count, uint64_t(2));
        QCOMPARE(ar.bytes, int64_t(8'000'000));
        QCOMPARE(ar.groupSize, 4);
        QCOMPARE(ar.algGbps, 4.0);             // 8 MB in 2 ms
        QCOMPARE(ar.busGbps, 4.0 * 2 * 3 / 4); // 2(n-1)/n
        const CollectiveStat& bc = r.stats.collectives[1];
        QCOMPARE(bc.type, std::string("broadcast"));
        QCOMPARE(bc.algorithms, std::string("TREE LL128"));
        QCOMPARE(bc.sizedCount, uint64_t(0));
        QCOMPARE(bc.algGbps, -1.0); // no size: no bandwidth
        QCOMPARE(bc.busGbps, -1.0);
    }

    void moduleTreeWithHostAndDeviceTime() {
        TraceText t;
        t.step(1, 0, 5000);
        // Net_0 [0, 1000) > Linear_0 [100, 400) > aten::linear launches k1 (200 us)
        //                 > Linear_1 [500, 800) > aten::linear launches k2 (100 us)
        //                 aten::add directly in Net_0 launches k3 (50 us)
        // Net_0 runs twice; a backward op launches k4 (70 us) outside any module.
        for (int run = 0; run < 2; ++run) {
            const int64_t b = run * 2000;
            t.python("nn.Module: Net_0", b, 1000);
            t.python("nn.Module: Linear_0", b + 100, 300);
            t.cpu("aten::linear", b + 110, 200);
            t.launch("k1", b + 120, 10, b + 1200, 200);
            t.python("nn.Module: Linear_1", b + 500, 300);
            t.cpu("aten::linear", b + 510, 200);
            t.launch("k2", b + 520, 10, b + 1500, 100);
            t.cpu("aten::add", b + 850, 100);
            t.launch("k3", b + 860, 10, b + 1650, 50);
        }
        t.cpu("autograd::engine::evaluate_function: AddmmBackward0", 4200, 100);
        t.launch("k4", 4210, 10, 4400, 70);
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const ModuleTree m = buildModuleTree(*trace, r);
        QCOMPARE(m.nodes.size(), size_t(3));
        QCOMPARE(m.roots.size(), size_t(1));
        const ModuleNode& net = m.nodes[size_t(m.roots[0])];
        QCOMPARE(net.name, std::string("Net_0"));
        QCOMPARE(net.occurrences, uint64_t(2));
        QCOMPARE(net.operators, uint64_t(2)); // aten::add twice
        QCOMPARE(net.hostTotalNs, 2000 * us);
        QCOMPARE(net.hostSelfNs, 2000 * us - 2 * 600 * us);
        QCOMPARE(net.deviceTotalNs, 2 * 350 * us);
        QCOMPARE(net.deviceSelfNs, 2 * 50 * us); // k3 only
        QCOMPARE(net.children.size(), size_t(2));
        const ModuleNode& l0 = m.nodes[size_t(net.children[0])];
        QCOMPARE(l0.name, std::string("Linear_0")); // equal host times: by name
        QCOMPARE(l0.depth, 1);
        QCOMPARE(l0.operators, uint64_t(2));
        QCOMPARE(l0.deviceSelfNs, 2 * 200 * us);
        QCOMPARE(m.deviceNs, 2 * 350 * us + 70 * us);
        QCOMPARE(m.outsideNs, 70 * us);
        QVERIFY(m.backward);
        // No module ranges: an empty tree.
        QVERIFY(buildModuleTree(*linearTrace().load(), analyze(*linearTrace().load())).empty());
    }

    void busBandwidthFactors() {
        QCOMPARE(busBandwidthFactor("allreduce", 8), 2.0 * 7 / 8);
        QCOMPARE(busBandwidthFactor("allgather", 8), 7.0 / 8);
        QCOMPARE(busBandwidthFactor("reducescatter", 2), 0.5);
        QCOMPARE(busBandwidthFactor("alltoall", 4), 0.75);
        QCOMPARE(busBandwidthFactor("broadcast", 8), 1.0);
        QCOMPARE(busBandwidthFactor("unknown", 8), -1.0);
        QCOMPARE(busBandwidthFactor("allreduce", -1), -1.0);
    }
};

QTEST_GUILESS_MAIN(TestStatsTables)
#include "test_stats_tables.moc"
