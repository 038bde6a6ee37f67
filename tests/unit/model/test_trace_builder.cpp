// TraceBuilder -> Trace: ordering, nesting, B/E pairing, flows, correlation, counters,
// time base, snapshots, and the visible-range index.
#include "stallscope/model/trace_builder.h"

#include <QTest>

#include <atomic>
#include <random>

using namespace stallscope::model;

namespace {

struct Fixture {
    TraceBuilder b;
    TrackId cpu, cpu2, gpu;
    StringId cpuCat, rtCat, kCat;

    Fixture() {
        const ProcessId p = b.process(RowKey{100, {}});
        const ProcessId g = b.process(RowKey{0, {}});
        cpu = b.track(p, RowKey{100, {}});
        cpu2 = b.track(p, RowKey{101, {}});
        gpu = b.track(g, RowKey{7, {}});
        cpuCat = b.intern("cpu_op");
        rtCat = b.intern("cuda_runtime");
        kCat = b.intern("kernel");
    }
    void slice(TrackId t, int64_t start, int64_t dur, const char* name, EventKind kind,
               uint32_t corr = SliceTable::kNoCorrelation) {
        SliceRow r;
        r.start = start;
        r.dur = dur;
        r.track = t;
        r.name = b.intern(name);
        r.category = kind == EventKind::Kernel ? kCat : kind == EventKind::Runtime ? rtCat : cpuCat;
        r.kind = kind;
        r.correlation = corr;
        b.appendSlice(r);
    }
};

SliceId findSlice(const Trace& t, std::string_view name) {
    for (uint32_t i = 0; i < t.slices().size(); ++i)
        if (t.str(t.slices().name[i]) == name) return SliceId(i);
    return {};
}

} // namespace

class TestTraceBuilder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void slicesAreGroupedAndSortedPerTrack() {
        Fixture f;
        f.slice(f.cpu, 300, 10, "c", EventKind::CpuOp);
        f.slice(f.gpu, 50, 5, "k", EventKind::Kernel);
        f.slice(f.cpu, 100, 500, "a", EventKind::CpuOp);
        f.slice(f.cpu, 100, 50, "b", EventKind::CpuOp);  // same start, shorter: after "a"
        auto t = f.b.finish();
        const auto [b0, e0] = t->sliceRange(f.cpu);
        QCOMPARE(e0 - b0, 3u);
        QCOMPARE(t->str(t->slices().name[b0]), std::string_view("a"));
        QCOMPARE(t->str(t->slices().name[b0 + 1]), std::string_view("b"));
        QCOMPARE(t->str(t->slices().name[b0 + 2]), std::string_view("c"));
        const auto [b1, e1] = t->sliceRange(f.gpu);
        QCOMPARE(e1 - b1, 1u);
        QCOMPARE(t->track(f.gpu).kind, TrackKind::GpuStream);
        QCOMPARE(t->track(f.cpu).kind, TrackKind::CpuThread);
        QCOMPARE(t->process(t->track(f.gpu).process).gpuDevice, 0);
        QCOMPARE(t->startNs(), int64_t(50));
        QCOMPARE(t->endNs(), int64_t(600));
    }

    // A clone finishes on its own; a finish told to stop gives nothing and empties the
    // builder (a progressive open's copy of a cancelled import).
    void finishStopsWhenToldAndClonesAreIndependent() {
        Fixture f;
        f.slice(f.cpu, 100, 50, "aten::mm", EventKind::CpuOp);
        f.slice(f.cpu, 10, 20, "aten::add", EventKind::CpuOp);
        TraceBuilder copy = f.b.clone();
        f.slice(f.cpu, 300, 5, "aten::relu", EventKind::CpuOp);
        std::atomic<bool> stop{true};
        QVERIFY(!copy.finish(&stop));
        QCOMPARE(copy.sliceColumns().size(), size_t(0));
        TraceBuilder again = f.b.clone();
        stop = false;
        const auto part = again.finish(&stop);
        QVERIFY(part);
        QCOMPARE(part->slices().size(), size_t(3));
        const auto whole = f.b.finish();
        QCOMPARE(whole->slices().size(), size_t(3));
        QCOMPARE(whole->slices().start[0], int64_t(10));
    }

    void nestingGivesDepthAndParent() {
        Fixture f;
        f.slice(f.cpu, 0, 100, "outer", EventKind::CpuOp);
        f.slice(f.cpu, 10, 50, "mid", EventKind::CpuOp);
        f.slice(f.cpu, 20, 10, "inner", EventKind::CpuOp);
        f.slice(f.cpu, 60, 40, "sibling", EventKind::CpuOp);   // starts where "mid" ends
        f.slice(f.cpu, 120, 10, "after", EventKind::CpuOp);    // starts where "crossing" ends
        f.slice(f.cpu, 90, 30, "crossing", EventKind::CpuOp);  // inside sibling, ends after it
        auto t = f.b.finish();
        const auto& s = t->slices();
        auto depth = [&](const char* n) { return s.depth[findSlice(*t, n).index()]; };
        auto parent = [&](const char* n) {
            const SliceId p = s.parent[findSlice(*t, n).index()];
            return p.valid() ? std::string(t->str(s.name[p.index()])) : std::string("-");
        };
        QCOMPARE(depth("outer"), uint16_t(0));
        QCOMPARE(parent("mid"), std::string("outer"));
        QCOMPARE(parent("inner"), std::string("mid"));
        QCOMPARE(depth("inner"), uint16_t(2));
        QCOMPARE(parent("sibling"), std::string("outer"));
        QCOMPARE(parent("after"), std::string("-"));
        QCOMPARE(parent("crossing"), std::string("sibling"));
        QVERIFY(s.flags[findSlice(*t, "crossing").index()] & kSliceCrossesParent);
        QCOMPARE(t->diagnostics().count(DiagnosticKind::CrossingSlices), uint64_t(1));
        QCOMPARE(t->track(f.cpu).maxDepth, uint16_t(2));
    }

    void beginEndPairsNestAndReportStrays() {
        Fixture f;
        auto be = [&](int64_t ts, const char* name, bool begin, TrackId tr) {
            BeginEnd e;
            e.ts = ts;
            e.track = tr;
            e.name = f.b.intern(name);
            e.category = f.cpuCat;
            e.begin = begin;
            e.srcOffset = static_cast<uint64_t>(ts);
            f.b.appendBeginEnd(e);
        };
        // Out of order in the file on purpose.
        be(50, "inner", false, f.cpu);
        be(10, "outer", true, f.cpu);
        be(20, "inner", true, f.cpu);
        be(90, "outer", false, f.cpu);
        be(95, "stray", false, f.cpu);    // E without B
        be(100, "open", true, f.cpu2);    // never closed
        f.slice(f.cpu2, 100, 200, "x", EventKind::CpuOp);
        auto t = f.b.finish();
        const auto& s = t->slices();
        const SliceId outer = findSlice(*t, "outer"), inner = findSlice(*t, "inner");
        QVERIFY(outer.valid() && inner.valid());
        QCOMPARE(s.start[outer.index()], int64_t(10));
        QCOMPARE(s.dur[outer.index()], int64_t(80));
        QCOMPARE(s.dur[inner.index()], int64_t(30));
        QCOMPARE(s.parent[inner.index()], outer);
        QCOMPARE(t->diagnostics().count(DiagnosticKind::UnmatchedEnd), uint64_t(1));
        QCOMPARE(t->diagnostics().count(DiagnosticKind::UnterminatedBegin), uint64_t(1));
        const SliceId open = findSlice(*t, "open");
        QVERIFY(s.flags[open.index()] & kSliceUnterminated);
        QCOMPARE(s.start[open.index()] + s.dur[open.index()], int64_t(300));  // closed at trace end
    }

    // "The end of the trace" is the span's end, counters and instants included: a B never
    // closed on a trace whose last event is a counter sample ends there (it ended at the
    // last slice, so an annotated copy whose findings reach the span's end read it back
    // longer; found by fuzzing).
    void unterminatedBeginClosesAtTheSpanEnd() {
        Fixture f;
        BeginEnd e;
        e.ts = -5;
        e.track = f.cpu;
        e.name = f.b.intern("open");
        e.category = f.cpuCat;
        e.begin = true;
        f.b.appendBeginEnd(e);
        f.b.appendInstant(40, f.cpu, f.b.intern("mark"), f.cpuCat, 't', 0, 0);
        auto t = f.b.finish();
        const SliceId open = findSlice(*t, "open");
        QVERIFY(open.valid());
        QCOMPARE(t->slices().end(open.index()), int64_t(40));
        QCOMPARE(t->endNs(), int64_t(40));
    }

    void flowsBindToSlices() {
        Fixture f;
        f.slice(f.cpu, 0, 100, "op", EventKind::CpuOp);
        f.slice(f.cpu, 10, 20, "cudaLaunchKernel", EventKind::Runtime, 5);
        f.slice(f.gpu, 40, 10, "kernelA", EventKind::Kernel, 5);
        f.slice(f.gpu, 60, 10, "kernelB", EventKind::Kernel);
        const StringId ac2g = f.b.intern("ac2g"), other = f.b.intern("custom");
        f.b.appendFlowEndpoint({15, f.cpu, 5, ac2g, 's', true});
        f.b.appendFlowEndpoint({40, f.gpu, 5, ac2g, 'f', true});
        // 'f' without bp:"e" binds to the next slice starting at or after ts.
        f.b.appendFlowEndpoint({12, f.cpu, 9, other, 's', true});
        f.b.appendFlowEndpoint({55, f.gpu, 9, other, 'f', false});
        // A stray end and a start on an empty spot.
        f.b.appendFlowEndpoint({500, f.gpu, 77, ac2g, 'f', true});
        f.b.appendFlowEndpoint({900, f.cpu, 78, ac2g, 's', true});
        auto t = f.b.finish();
        QCOMPARE(t->flows().size(), size_t(2));
        const auto& s = t->slices();
        const Flow& a = t->flows()[0].kind == FlowKind::Launch ? t->flows()[0] : t->flows()[1];
        const Flow& b = t->flows()[0].kind == FlowKind::Launch ? t->flows()[1] : t->flows()[0];
        QCOMPARE(t->str(s.name[a.from.index()]), std::string_view("cudaLaunchKernel"));
        QCOMPARE(t->str(s.name[a.to.index()]), std::string_view("kernelA"));
        QCOMPARE(t->str(s.name[b.from.index()]), std::string_view("cudaLaunchKernel"));
        QCOMPARE(t->str(s.name[b.to.index()]), std::string_view("kernelB"));
        QCOMPARE(t->diagnostics().count(DiagnosticKind::UnboundFlow), uint64_t(2));
    }

    void correlationIndexLinksLaunchGpuAndOp() {
        Fixture f;
        f.slice(f.cpu, 0, 100, "aten::mm", EventKind::CpuOp);
        f.slice(f.cpu, 10, 20, "cudaGraphLaunch", EventKind::Runtime, 42);
        f.slice(f.gpu, 40, 10, "k1", EventKind::Kernel, 42);
        f.slice(f.gpu, 55, 10, "k2", EventKind::Kernel, 42);
        f.slice(f.gpu, 70, 10, "orphan", EventKind::Kernel, 43);
        auto t = f.b.finish();
        const SliceId launch = findSlice(*t, "cudaGraphLaunch");
        QCOMPARE(t->gpuWorkOf(launch).size(), size_t(2));
        QCOMPARE(t->launchOf(findSlice(*t, "k2")), launch);
        QVERIFY(!t->launchOf(findSlice(*t, "orphan")).valid());
        QCOMPARE(t->enclosingOp(launch), findSlice(*t, "aten::mm"));
    }

    void duplicateLaunchCorrelationIsDiagnosed() {
        Fixture f;
        f.slice(f.cpu, 0, 10, "cudaLaunchKernel", EventKind::Runtime, 1);
        f.slice(f.cpu, 20, 10, "cudaLaunchKernel", EventKind::Runtime, 1);
        auto t = f.b.finish();
        QCOMPARE(t->diagnostics().count(DiagnosticKind::DuplicateCorrelation), uint64_t(1));
    }

    void timeBaseIsAddedExactly() {
        Fixture f;
        const int64_t base = 1711964646000000000;  // baseTimeNanoseconds of a 2024 trace
        f.b.setTimeBase(base);
        f.slice(f.cpu, 4458676522690655, 156777, "op", EventKind::CpuOp);
        f.b.appendFlowEndpoint({4458676522690655, f.cpu, 1, f.b.intern("fwdbwd"), 's', true});
        auto t = f.b.finish();
        QCOMPARE(t->slices().start[0], base + 4458676522690655);
        QCOMPARE(t->startNs(), base + 4458676522690655);
    }

    void timesBeyondTheModelRangeAreClampedAndCounted() {
        Fixture f;
        f.b.setTimeBase(kModelTimeLimitNs - 100);
        f.slice(f.cpu, -50, 10, "inside", EventKind::CpuOp);
        f.slice(f.cpu, 50, 100, "ends beyond", EventKind::CpuOp);
        f.slice(f.cpu, 200, 5, "starts beyond", EventKind::CpuOp);
        const ProcessId p = f.b.process(RowKey{0, {}});
        const CounterId c = f.b.counterSeries(p, f.b.intern("GPU 0 Utilization"), f.b.intern("v"));
        f.b.appendCounter(c, kMinNs, 0.5);  // INT64_MIN + base: far below -limit
        auto t = f.b.finish();
        const SliceTable& s = t->slices();
        QCOMPARE(s.size(), size_t(3));
        QCOMPARE(t->diagnostics().count(DiagnosticKind::TimeClamped), uint64_t(3));
        for (size_t i = 0; i < s.size(); ++i) {
            QVERIFY(s.start[i] >= -kModelTimeLimitNs && s.end(i) <= kModelTimeLimitNs);
            QVERIFY(s.dur[i] >= 0);
        }
        QCOMPARE(s.start[0], kModelTimeLimitNs - 150);                // untouched
        QCOMPARE(s.end(1), kModelTimeLimitNs);                        // cut at the limit
        QCOMPARE(s.start[2], kModelTimeLimitNs);                      // moved to it, 0 long
        QCOMPARE(s.dur[2], int64_t(0));
        QCOMPARE(t->counterSamples().ts[0], -kModelTimeLimitNs);
        // Any two model times subtract without overflow.
        QCOMPARE(t->endNs() - t->counterSamples().ts[0], 2 * kModelTimeLimitNs);
    }

    void countersAreSortedPerSeries() {
        Fixture f;
        const ProcessId p = f.b.process(RowKey{0, {}});
        const CounterId util = f.b.counterSeries(p, f.b.intern("GPU 0 Utilization"), f.b.intern("v"));
        const CounterId mem = f.b.counterSeries(p, f.b.intern("Memory"), f.b.intern("v"));
        f.b.appendCounter(util, 30, 0.5);
        f.b.appendCounter(mem, 5, 100);
        f.b.appendCounter(util, 10, 1.0);
        auto t = f.b.finish();
        const CounterSeries& cs = t->counterSeries()[util.index()];
        QCOMPARE(cs.sampleEnd - cs.sampleBegin, 2u);
        QCOMPARE(t->counterSamples().ts[cs.sampleBegin], int64_t(10));
        QCOMPARE(t->counterSamples().value[cs.sampleBegin + 1], 0.5);
    }

    void snapshotLeavesBuilderUsable() {
        Fixture f;
        f.slice(f.cpu, 0, 10, "first", EventKind::CpuOp);
        auto snap1 = f.b.snapshot();
        f.slice(f.cpu, 20, 10, "second", EventKind::CpuOp);
        auto snap2 = f.b.snapshot();
        auto final = f.b.finish();
        QCOMPARE(snap1->slices().size(), size_t(1));
        QCOMPARE(snap2->slices().size(), size_t(2));
        QCOMPARE(final->slices().size(), size_t(2));
        QCOMPARE(snap1->str(snap1->slices().name[0]), std::string_view("first"));
    }

    void visibleRangeIndexMatchesBruteForce() {
        Fixture f;
        std::mt19937_64 rng(7);
        for (int i = 0; i < 5000; ++i) {
            const int64_t start = static_cast<int64_t>(rng() % 1'000'000);
            // A few very long slices make "ends" non-monotone in start order.
            const int64_t dur = (i % 500 == 0) ? 400'000 : static_cast<int64_t>(rng() % 2000);
            f.slice(f.cpu, start, dur, "s", EventKind::CpuOp);
        }
        auto t = f.b.finish();
        const auto [b, e] = t->sliceRange(f.cpu);
        const auto& s = t->slices();
        for (int q = 0; q < 300; ++q) {
            const int64_t ns = static_cast<int64_t>(rng() % 1'100'000);
            uint32_t expect = e;
            for (uint32_t i = b; i < e; ++i)
                if (s.start[i] + s.dur[i] >= ns) {
                    expect = i;
                    break;
                }
            QCOMPARE(t->firstSliceEndingAtOrAfter(f.cpu, ns), expect);
        }
    }

    void perSliceFootprintStaysSmall() {
        Fixture f;
        for (int i = 0; i < 100000; ++i) f.slice(f.cpu, i * 10, 5, "op", EventKind::CpuOp);
        auto t = f.b.finish();
        const double perEvent = double(t->memoryBytes()) / double(t->eventCount());
        QVERIFY2(perEvent <= 64.0, qPrintable(QString("bytes per event %1").arg(perEvent)));
    }
};

QTEST_APPLESS_MAIN(TestTraceBuilder)
#include "test_trace_builder.moc"
