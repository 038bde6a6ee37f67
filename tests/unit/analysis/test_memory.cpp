// Memory of profile_memory traces on inline traces with known answers: peaks, the step of
// the peak, what was live at it by operator and by Python frame (not a built-in wrapper),
// frees matched by address, the per-operator table, activations kept for backward and the
// advice, each only when its premise holds.
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/memory.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {
constexpr int64_t MiB = int64_t(1) << 20;
constexpr int64_t GiB = int64_t(1) << 30;

const DeviceMemory* gpu(const MemoryAnalysis& m, int device = 0) {
    for (const DeviceMemory& d : m.devices)
        if (d.deviceType == 1 && d.device == device) return &d;
    return nullptr;
}
const MemoryOperatorRow* op(const DeviceMemory& d, std::string_view name) {
    for (const MemoryOperatorRow& o : d.operators)
        if (o.name == name) return &o;
    return nullptr;
}
bool advised(const DeviceMemory& d, std::string_view id) {
    for (const MemoryAdvice& a : d.advice)
        if (a.id == id) return true;
    return false;
}

/// Step 1 (0..1000 us): forward allocates A (4 MiB, in aten::addmm under aten::linear, under
/// a built-in frame under model.py) and B (2 MiB, in aten::relu); backward (from 500 us)
/// frees both and allocates C, freed outside any operator. 10 MiB were allocated before the
/// trace; 20 MiB reserved throughout. Step 2 (1000..2000 us) runs a kernel and nothing else.
TraceText trainingStep() {
    TraceText t;
    t.step(1, 0, 1000);
    t.step(2, 1000, 1000);
    t.python("model.py(10): forward", 5, 440);
    t.cpu("aten::linear", 10, 190);
    t.cpu("aten::addmm", 20, 80);
    t.python("<built-in method addmm of type object at 0x1>", 25, 60);
    t.alloc(30, 0x100, 4 * MiB, 14 * MiB, 20 * MiB);
    t.cpu("aten::relu", 300, 100);
    t.alloc(310, 0x200, 2 * MiB, 16 * MiB, 20 * MiB);
    t.cpu("autograd::engine::evaluate_function: AddmmBackward0", 500, 200);
    t.alloc(510, 0x200, -2 * MiB, 14 * MiB, 20 * MiB);
    t.alloc(600, 0x100, -4 * MiB, 10 * MiB, 20 * MiB);
    t.alloc(650, 0x300, 1 * MiB, 11 * MiB, 20 * MiB);
    t.alloc(900, 0x300, -1 * MiB, 10 * MiB, 20 * MiB);
    t.launch("k_step", 20, 5, 40, 100);
    t.launch("k_step2", 1010, 5, 1020, 100);
    return t;
}

} // namespace

class TestMemory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void peaksLiveAtThePeakAndOperators() {
        auto trace = trainingStep().load();
        QVERIFY(trace);
        AnalysisOptions o;
        o.window.kind = WindowKind::All;
        const AnalysisResult r = analyze(*trace, o);
        const MemoryAnalysis m = analyzeMemory(*trace, r);
        const DeviceMemory* d = gpu(m);
        QVERIFY(d);
        const int64_t t0 = trace->slices().start[0];
        QCOMPARE(d->events, uint64_t(6));
        QCOMPARE(d->allocations, uint64_t(3));
        QCOMPARE(d->frees, uint64_t(3));
        QCOMPARE(d->allocatedBytes, 7 * MiB);
        QCOMPARE(d->freedBytes, 7 * MiB);
        QCOMPARE(d->peakAllocated, 16 * MiB);
        QCOMPARE(d->peakAllocatedAt - t0, int64_t(310'000));
        QCOMPARE(d->peakStep, int64_t(1));
        QCOMPARE(d->peakReserved, 20 * MiB);
        QCOMPARE(d->capacity, int64_t(40'000'000'000));
        // Live at the peak: A and B; the rest was there before the trace.
        QCOMPARE(d->liveAttributed, 6 * MiB);
        QCOMPARE(d->liveBeforeTrace, 10 * MiB);
        QCOMPARE(d->liveByOperator.size(), size_t(2));
        QCOMPARE(d->liveByOperator[0].name, std::string("aten::addmm"));
        QCOMPARE(d->liveByOperator[0].bytes, 4 * MiB);
        QCOMPARE(d->liveByOperator[1].name, std::string("aten::relu"));
        // The program's frame, not the built-in wrapper inside it.
        QCOMPARE(d->liveByFrame.size(), size_t(1));
        QCOMPARE(d->liveByFrame[0].name, std::string("model.py(10): forward"));
        QCOMPARE(d->liveByFrame[0].blocks, uint64_t(2));
        // Frees matched by address.
        QCOMPARE(d->rows.size(), size_t(6));
        QCOMPARE(d->rows[0].freedAt - t0, int64_t(600'000));
        QCOMPARE(d->rows[1].freedAt - t0, int64_t(510'000));
        // Operators: self (innermost) and total (at any depth).
        const MemoryOperatorRow* addmm = op(*d, "aten::addmm");
        const MemoryOperatorRow* linear = op(*d, "aten::linear");
        const MemoryOperatorRow* bwd =
            op(*d, "autograd::engine::evaluate_function: AddmmBackward0");
        QVERIFY(addmm && linear && bwd);
        QCOMPARE(addmm->allocations, uint64_t(1));
        QCOMPARE(addmm->selfIncrease, 4 * MiB);
        QCOMPARE(linear->allocations, uint64_t(0));
        QCOMPARE(linear->selfIncrease, int64_t(0));
        QCOMPARE(linear->totalIncrease, 4 * MiB);
        QCOMPARE(linear->calls, uint64_t(1));
        QCOMPARE(bwd->frees, uint64_t(2));
        QCOMPARE(bwd->allocations, uint64_t(1));
        QCOMPARE(bwd->selfIncrease, -5 * MiB);
        QVERIFY(!op(*d, "ProfilerStep#1")); // not an operator
        // Activations: A and B, allocated before step 1's backward and freed in it.
        QCOMPARE(d->activationBytes, 6 * MiB);
        QCOMPARE(d->activationStep, int64_t(1));
        QVERIFY(advised(*d, "batch_headroom"));
        QVERIFY(!advised(*d, "near_capacity"));
        QVERIFY(!advised(*d, "cache_held"));
    }

    void adviceOnlyWhereItsPremiseHolds() {
        // 3 GiB reserved of a 3.2 GB device, 100 MiB allocated: near the limit and the cache
        // held; no backward pass, so no batch headroom.
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::empty", 10, 10);
        t.alloc(15, 0x10, 100 * MiB, 100 * MiB, 3 * GiB);
        t.launch("k", 20, 5, 40, 100);
        auto trace = t.load(8, 3'200'000'000);
        const AnalysisResult r = analyze(*trace);
        const MemoryAnalysis m = analyzeMemory(*trace, r);
        const DeviceMemory* d = gpu(m);
        QVERIFY(d);
        QVERIFY(advised(*d, "near_capacity"));
        QVERIFY(advised(*d, "cache_held"));
        QVERIFY(!advised(*d, "batch_headroom"));
        QCOMPARE(d->activationBytes, int64_t(-1));
        bool said = false;
        for (const auto& n : m.notes) said = said || n.find("backward") != std::string::npos;
        QVERIFY(said);
        // Without deviceProperties: no capacity, no near-limit advice, and a note says why.
        auto bare = t.load(-1);
        const AnalysisResult rb = analyze(*bare);
        const MemoryAnalysis mb = analyzeMemory(*bare, rb);
        QVERIFY(gpu(mb) && gpu(mb)->capacity == 0);
        QVERIFY(!advised(*gpu(mb), "near_capacity"));
        QVERIFY(advised(*gpu(mb), "cache_held")); // needs no capacity
    }

    void unmatchedFreesAndNoEvents() {
        // A free of a block allocated before the trace, an event without an address, a
        // device type that is not read: counted, never a crash.
        TraceText t;
        t.step(1, 0, 1000);
        t.alloc(10, 0x999, -MiB, 5 * MiB, 8 * MiB);
        t.alloc(20, 0, 2 * MiB, 7 * MiB, 8 * MiB);
        t.add(
            R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 1, "ts": 30, "args": {"Device Type": 13, "Device Id": 0, "Bytes": 64, "Total Allocated": 64, "Total Reserved": 0}})");
        t.launch("k", 40, 5, 50, 100);
        auto trace = t.load();
        const AnalysisResult r = analyze(*trace);
        const MemoryAnalysis m = analyzeMemory(*trace, r);
        const DeviceMemory* d = gpu(m);
        QVERIFY(d);
        QCOMPARE(d->frees, uint64_t(1));
        QCOMPARE(d->peakAllocated, 7 * MiB);
        QCOMPARE(d->liveAttributed, 2 * MiB); // the block without an address stays live
        QCOMPARE(d->rows[0].freedAt, int64_t(-1));
        QVERIFY(!m.notes.empty());
        TraceText none;
        none.launch("k", 0, 5, 10, 100);
        auto plain = none.load();
        QVERIFY(analyzeMemory(*plain, analyze(*plain)).empty());
    }
};

QTEST_APPLESS_MAIN(TestMemory)
#include "test_memory.moc"
