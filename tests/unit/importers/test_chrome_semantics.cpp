// One tiny inline trace per import rule of ../shared/spec/formats.md (Perfetto-style diff tests).
#include "stallscope/importers/importer.h"
#include "stallscope/model/copy_kind.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::model;

namespace {

std::shared_ptr<const Trace> load(const std::string& json, unsigned threads = 1) {
    importers::ImportOptions o;
    o.threads = threads;
    auto r = importers::importBuffer(json, o);
    if (!r) qWarning("import failed: %s", r.error().message.c_str());
    return r ? r.value() : nullptr;
}

SliceId byName(const Trace& t, std::string_view name) {
    for (uint32_t i = 0; i < t.slices().size(); ++i)
        if (t.str(t.slices().name[i]) == name) return SliceId(i);
    return {};
}

const TrackInfo& trackOf(const Trace& t, SliceId s) { return t.track(t.slices().track[s.index()]); }

const std::string kEvents = R"J(
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 100, "dur": 50, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 110, "dur": 10, "args": {"External id": 3, "cbid": 211, "correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130, "dur": 40, "args": {"correlation": 7, "stream": 7, "device": 0, "blocks per SM": 2.5, "est. achieved occupancy %": 37}}
)J";

} // namespace

class TestChromeSemantics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bareArrayAndObjectAgree();
    void kernelArgsAndCorrelationAreExtracted();
    void caps2021CategoriesAndStringRows();
    void timestampEras();
    void stringAndIntegerPids();
    void notANumberValues();
    void flowVintages();
    void beginEndAndInstantsAndCounters();
    void metadataNamesAndOrder();
    void legacyAutogradFormat();
    void rocmAndUnknownCategories();
    void argsAreReadBackOnDemand();
    void devicesAndDistributedInfo();
    void traceEventsWordInsideAnEarlierString();
    void unsortedEventsAreSorted();
    void escapedNames();
};

// Definitions are hidden from moc: Qt 6.4's moc cannot tokenize raw strings with
// delimiters, which the inline traces need.
#ifndef Q_MOC_RUN
void TestChromeSemantics::bareArrayAndObjectAgree() {
    auto a = load("[" + kEvents + "]");
    auto o = load("{\"schemaVersion\": 1, \"traceEvents\": [" + kEvents + "]}");
    QVERIFY(a && o);
    QCOMPARE(a->slices().size(), size_t(3));
    QCOMPARE(o->slices().size(), size_t(3));
    QCOMPARE(a->slices().start, o->slices().start);
    QCOMPARE(o->metadata().schemaVersion.value_or(0), int64_t(1));
    QVERIFY(a->metadata().formatName.find("bare array") != std::string::npos);
}

void TestChromeSemantics::kernelArgsAndCorrelationAreExtracted() {
    auto t = load("[" + kEvents + "]");
    QVERIFY(t);
    const SliceId k = byName(*t, "gemm");
    const SliceId launch = byName(*t, "cudaLaunchKernel");
    QCOMPARE(t->slices().kind[k.index()], EventKind::Kernel);
    QCOMPARE(t->slices().correlation[k.index()], 7u);
    QCOMPARE(SliceExtra::blocksPerSm(t->slices().extra[k.index()]), 2.5f);
    QCOMPARE(SliceExtra::estOccupancyPct(t->slices().extra[k.index()]), 37.0f);
    QCOMPARE(t->launchOf(k), launch);
    QCOMPARE(t->enclosingOp(launch), byName(*t, "aten::mm"));
    QCOMPARE(t->slices().extra[byName(*t, "aten::mm").index()], uint64_t(3));  // External id
    QCOMPARE(trackOf(*t, k).kind, TrackKind::GpuStream);
    QCOMPARE(t->slices().start[k.index()], int64_t(130000));
}

void TestChromeSemantics::caps2021CategoriesAndStringRows() {
    // 2021: Caps categories, tid "25738" for ops but 25738 for flows, GPU tid "stream 7".
    auto t = load(R"J({"traceEvents": [
      {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 25738, "tid": "25738", "ts": 1, "dur": 9, "args": {"external id": 4}},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 25738, "tid": "25738", "ts": 2, "dur": 3, "args": {"correlation": 9, "external id": 4, "external ts": 1}},
      {"ph": "s", "id": 9, "pid": 25738, "tid": 25738, "ts": 2, "cat": "async", "name": "launch"},
      {"ph": "X", "cat": "Kernel", "name": "add_kernel", "pid": 0, "tid": "stream 7", "ts": 6, "dur": 2, "args": {"correlation": 9}},
      {"ph": "f", "id": 9, "pid": 0, "tid": "stream 7", "ts": 6, "cat": "async", "name": "launch", "bp": "e"},
      {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 9, "dur": 1, "args": {"bytes": 128, "memory bandwidth (GB/s)": "N/A"}},
      {"name": "thread_name", "ph": "M", "ts": 1, "pid": 25738, "tid": "25738", "args": {"name": "thread 25738 (python)"}}
    ]})J");
    QVERIFY(t);
    QCOMPARE(t->slices().kind[byName(*t, "aten::add").index()], EventKind::CpuOp);
    QCOMPARE(t->slices().kind[byName(*t, "cudaLaunchKernel").index()], EventKind::Runtime);
    const SliceId k = byName(*t, "add_kernel");
    QCOMPARE(trackOf(*t, k).key.number, int64_t(7));
    QCOMPARE(t->str(trackOf(*t, k).name), std::string_view("stream 7"));
    // One CPU thread row: "25738" and 25738 are the same thread.
    QCOMPARE(trackOf(*t, byName(*t, "aten::add")).kind, TrackKind::CpuThread);
    uint32_t cpuRows = 0;
    for (const auto& tr : t->tracks()) cpuRows += tr.kind == TrackKind::CpuThread;
    QCOMPARE(cpuRows, 1u);
    QCOMPARE(t->str(trackOf(*t, byName(*t, "aten::add")).name), std::string_view("thread 25738 (python)"));
    QCOMPARE(t->flows().size(), size_t(1));
    QCOMPARE(t->flows()[0].kind, FlowKind::Launch);
    QCOMPARE(t->flows()[0].to, k);
    QCOMPARE(t->slices().extra[byName(*t, "Memset (Device)").index()], uint64_t(128));
    QVERIFY(t->metadata().formatName.find("2021") != std::string::npos);
    QVERIFY(t->diagnostics().empty());
}

void TestChromeSemantics::timestampEras() {
    // Integer µs, 3-decimal absolute µs (> 2^53 ns), relative µs + baseTimeNanoseconds
    // written after traceEvents (as Kineto does).
    auto abs = load(R"J({"displayTimeUnit": "ns", "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495521131.123, "dur": 135.162}
    ]})J");
    QVERIFY(abs);
    QCOMPARE(abs->slices().start[0], int64_t(1712195495521131123));
    QCOMPARE(abs->slices().dur[0], int64_t(135162));
    QCOMPARE(abs->metadata().displayTimeUnit, std::string("ns"));

    auto rel = load(R"J({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 4458676522690.655, "dur": 156.777}
    ], "traceName": "x.json", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1711964646000000000})J");
    QVERIFY(rel);
    QCOMPARE(rel->metadata().baseTimeNs.value_or(0), int64_t(1711964646000000000));
    QCOMPARE(rel->slices().start[0], int64_t(1711964646000000000) + 4458676522690655);
    QCOMPARE(rel->slices().dur[0], int64_t(156777));
    QCOMPARE(rel->metadata().traceName, std::string("x.json"));
    QVERIFY(rel->metadata().formatName.find("relative") != std::string::npos);
}

void TestChromeSemantics::stringAndIntegerPids() {
    auto t = load(R"J([
      {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 100},
      {"ph": "X", "cat": "cpu_op", "name": "op", "pid": "42", "tid": 1, "ts": 5, "dur": 1},
      {"ph": "X", "cat": "cpu_op", "name": "op2", "pid": 42, "tid": "1", "ts": 7, "dur": 1},
      {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 100}
    ])J");
    QVERIFY(t);
    const TrackInfo& spans = trackOf(*t, byName(*t, "PyTorch Profiler (0)"));
    QVERIFY(t->process(spans.process).key.isString());
    QCOMPARE(t->str(t->process(spans.process).key.text), std::string_view("Spans"));
    QCOMPARE(spans.kind, TrackKind::Other);
    QCOMPARE(t->slices().track[byName(*t, "op").index()], t->slices().track[byName(*t, "op2").index()]);
    QCOMPARE(t->instants().size(), size_t(1));
    QCOMPARE(t->instants().scope[0], 'g');
}

void TestChromeSemantics::notANumberValues() {
    auto t = load(R"J([
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 10, "dur": 0, "args": {"bytes": 4, "memory bandwidth (GB/s)": "N/A"}},
      {"ph": "X", "cat": "cpu_op", "name": "bad dur", "pid": 1, "tid": 1, "ts": 10, "dur": "N/A"},
      {"ph": "X", "cat": "cpu_op", "name": "bad ts", "pid": 1, "tid": 1, "ts": "N/A", "dur": 1}
    ])J");
    QVERIFY(t);
    QCOMPARE(t->slices().size(), size_t(2));
    QVERIFY(t->slices().flags[byName(*t, "bad dur").index()] & kSliceDurationClamped);
    QCOMPARE(t->diagnostics().count(DiagnosticKind::NotANumber), uint64_t(2));
    QCOMPARE(t->importStats().entries, uint64_t(3));
}

void TestChromeSemantics::flowVintages() {
    auto t = load(R"J([
      {"ph": "X", "cat": "cpu_op", "name": "fwd", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
      {"ph": "X", "cat": "cpu_op", "name": "bwd", "pid": 1, "tid": 2, "ts": 50, "dur": 10},
      {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 0, "cat": "fwdbwd", "name": "fwdbwd"},
      {"ph": "f", "id": 1, "pid": 1, "tid": 2, "ts": 50, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 3, "args": {"correlation": 5}},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 3, "args": {"correlation": 5}},
      {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 2, "cat": "async_cpu_to_gpu", "name": "async_cpu_to_gpu"},
      {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 20, "cat": "async_cpu_to_gpu", "name": "async_cpu_to_gpu", "bp": "e"},
      {"ph": "X", "cat": "user", "name": "producer", "pid": 1, "tid": 1, "ts": 30, "dur": 5, "bind_id": "0xabc", "flow_out": true},
      {"ph": "X", "cat": "user", "name": "consumer", "pid": 1, "tid": 2, "ts": 40, "dur": 5, "bind_id": "0xabc", "flow_in": true},
      {"ph": "f", "id": 99, "pid": 0, "tid": 7, "ts": 500, "cat": "ac2g", "name": "ac2g", "bp": "e"}
    ])J");
    QVERIFY(t);
    QCOMPARE(t->flows().size(), size_t(3));
    int fwdbwd = 0, launch = 0, other = 0;
    for (const auto& f : t->flows()) {
        if (f.kind == FlowKind::ForwardBackward) {
            ++fwdbwd;
            QCOMPARE(f.from, byName(*t, "fwd"));
            QCOMPARE(f.to, byName(*t, "bwd"));
        } else if (f.kind == FlowKind::Launch) {
            ++launch;
            QCOMPARE(f.to, byName(*t, "k"));
        } else {
            ++other;
            QCOMPARE(f.from, byName(*t, "producer"));
            QCOMPARE(f.to, byName(*t, "consumer"));
        }
    }
    QCOMPARE(fwdbwd + launch + other, 3);
    QCOMPARE(t->diagnostics().count(DiagnosticKind::UnboundFlow), uint64_t(1));  // stray ac2g end
}

void TestChromeSemantics::beginEndAndInstantsAndCounters() {
    auto t = load(R"J({"traceEvents": [
      {"ph": "B", "name": "outer", "cat": "app", "pid": 1, "tid": 1, "ts": 0},
      {"ph": "B", "name": "inner", "cat": "app", "pid": 1, "tid": 1, "ts": 5},
      {"ph": "E", "pid": 1, "tid": 1, "ts": 8},
      {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
      {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 6, "s": "t"},
      {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 7, "args": {"Device Type": 1, "Device Id": 0, "Addr": 1, "Bytes": 512, "Total Allocated": 2048, "Total Reserved": 4096}},
      {"ph": "C", "name": "GPU 0 Utilization", "pid": 0, "ts": 0, "args": {"GPU Utilization": 0.5, "other": 2}},
      {"ph": "C", "name": "GPU 0 Utilization", "pid": 0, "ts": 10, "args": {"GPU Utilization": 1}},
      {"ph": "b", "name": "async", "id": 1, "pid": 1, "tid": 1, "ts": 1}
    ]})J");
    QVERIFY(t);
    const SliceId outer = byName(*t, "outer"), inner = byName(*t, "inner");
    QCOMPARE(t->slices().dur[outer.index()], int64_t(20000));
    QCOMPARE(t->slices().parent[inner.index()], outer);
    QCOMPARE(t->instants().size(), size_t(1));
    QCOMPARE(t->memorySamples().size(), size_t(1));
    QCOMPARE(t->memorySamples()[0].totalReserved, int64_t(4096));
    QCOMPARE(t->memorySamples()[0].deviceType, int16_t(1));
    QCOMPARE(t->counterSeries().size(), size_t(2));
    QCOMPARE(t->counterSamples().size(), size_t(3));
    QCOMPARE(t->diagnostics().count(DiagnosticKind::UnsupportedPhase), uint64_t(1));
    QCOMPARE(t->importStats().byPhase.at("C"), uint64_t(2));
}

void TestChromeSemantics::metadataNamesAndOrder() {
    auto t = load(R"J([
      {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "python"}},
      {"name": "process_labels", "ph": "M", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
      {"name": "process_sort_index", "ph": "M", "pid": 0, "tid": 0, "args": {"sort_index": 16777216}},
      {"name": "process_name", "ph": "M", "pid": 99, "tid": 0, "args": {"name": "python"}},
      {"name": "process_labels", "ph": "M", "pid": 99, "tid": 0, "args": {"labels": "CPU"}},
      {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
      {"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": 7, "args": {"sort_index": 7}},
      {"name": "process_uptime_seconds", "ph": "M", "pid": 0, "tid": 0, "args": {"uptime": 1}},
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
      {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 99, "tid": 99, "ts": 0, "dur": 3}
    ])J");
    QVERIFY(t);
    const TrackInfo& gpu = trackOf(*t, byName(*t, "k"));
    QCOMPARE(t->str(gpu.name), std::string_view("stream 7 "));
    QVERIFY(gpu.hasSortIndex);
    const ProcessInfo& gp = t->process(gpu.process);
    QCOMPARE(t->str(gp.labels), std::string_view("GPU 0"));
    QCOMPARE(gp.gpuDevice, 0);
    // CPU process rows come before GPU rows.
    const TrackId first = t->displayOrder().front();
    QCOMPARE(t->track(first).kind, TrackKind::CpuThread);
}

void TestChromeSemantics::legacyAutogradFormat() {
    auto t = load(R"J([{"name": "ProfilerStep#1", "ph": "X", "ts": 10, "dur": 100, "tid": 1, "pid": "CPU functions", "args": {}},
                      {"name": "aten::add", "ph": "X", "ts": 20, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}])J");
    QVERIFY(t);
    QCOMPARE(t->metadata().formatName, std::string("legacy autograd profiler JSON"));
    QCOMPARE(t->slices().kind[byName(*t, "aten::add").index()], EventKind::CpuOp);
    QCOMPARE(trackOf(*t, byName(*t, "aten::add")).kind, TrackKind::CpuThread);
    QCOMPARE(t->slices().parent[byName(*t, "aten::add").index()], byName(*t, "ProfilerStep#1"));
}

void TestChromeSemantics::rocmAndUnknownCategories() {
    auto t = load(R"J([
      {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Host -> Device)", "pid": 2, "tid": 0, "ts": 1, "dur": 2, "args": {"device": 2, "stream": 0, "correlation": 117, "kind": "HtoD"}},
      {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 5, "tid": 5, "ts": 0, "dur": 3, "args": {"stream": "0x0", "correlation": 117, "size": "2560"}},
      {"ph": "X", "cat": "my_custom_cat", "name": "custom", "pid": 5, "tid": 5, "ts": 10, "dur": 3}
    ])J");
    QVERIFY(t);
    const SliceId copy = byName(*t, "Memcpy HtoD (Host -> Device)");
    QCOMPARE(t->slices().kind[copy.index()], EventKind::Memcpy);
    QCOMPARE(t->process(trackOf(*t, copy).process).gpuDevice, 2);
    const CopyInfo ci = parseCopyName(t->str(t->slices().name[copy.index()]));
    QCOMPARE(ci.direction, CopyDirection::HtoD);
    QCOMPARE(ci.src, MemoryKind::Host);
    QCOMPARE(t->launchOf(copy), byName(*t, "hipMemcpyWithStream"));
    const SliceId custom = byName(*t, "custom");
    QVERIFY(custom.valid());
    QCOMPARE(t->slices().kind[custom.index()], EventKind::Other);
    QCOMPARE(t->importStats().byCategory.at("my_custom_cat"), uint64_t(1));
}

void TestChromeSemantics::argsAreReadBackOnDemand() {
    auto t = load(R"J({"traceEvents": [
      {"args": {"Input Dims": [[64, 3, 224, 224], []], "Call stack": "a.py(1): f", "External id": 12, "note": "x\"y"},
       "ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1, "dur": 2}
    ]})J");
    QVERIFY(t);
    std::vector<ArgValue> args;
    std::string err;
    QVERIFY2(t->sliceArgs(SliceId(0), args, err), err.c_str());
    QCOMPARE(args.size(), size_t(4));
    QCOMPARE(args[0].key, std::string("Input Dims"));
    QCOMPARE(args[0].json, std::string("[[64, 3, 224, 224], []]"));
    QCOMPARE(args[2].json, std::string("12"));
    QCOMPARE(args[3].json, std::string("\"x\\\"y\""));
    // args before ph: fields are read in any order.
    QCOMPARE(t->slices().extra[0], uint64_t(12));
    std::string raw;
    QVERIFY(t->sliceRawText(SliceId(0), raw, err));
    QVERIFY(raw.front() == '{' && raw.back() == '}');
}

void TestChromeSemantics::devicesAndDistributedInfo() {
    auto t = load(R"J({"schemaVersion": 1,
      "computeProperties": [{"id": 0, "name": "Tesla V100", "totalGlobalMem": 34084028416, "major": 7, "minor": 0, "multiProcessorCount": 80}],
      "traceEvents": [],
      "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_config": [{"ranks": [0]}]}})J");
    QVERIFY(t);
    QCOMPARE(t->metadata().devices.size(), size_t(1));
    QCOMPARE(t->metadata().devices[0].computeMajor, 7);
    QCOMPARE(t->metadata().devices[0].numSms, 80);
    QVERIFY(t->metadata().distributed.present);
    QCOMPARE(t->metadata().distributed.rank, 3);
    QCOMPARE(t->metadata().distributed.worldSize, 8);
    QCOMPARE(t->metadata().distributed.backend, std::string("nccl"));
}

void TestChromeSemantics::traceEventsWordInsideAnEarlierString() {
    auto t = load(R"J({"INFO": "looking for \"traceEvents\": [ here", "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})J");
    QVERIFY(t);
    QCOMPARE(t->slices().size(), size_t(1));
    QCOMPARE(t->metadata().other.size(), size_t(1));
}

void TestChromeSemantics::unsortedEventsAreSorted() {
    auto t = load(R"J([
      {"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": 50, "dur": 5},
      {"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": 12, "dur": 2},
      {"ph": "X", "cat": "cpu_op", "name": "early", "pid": 1, "tid": 1, "ts": 10, "dur": 20}
    ])J");
    QVERIFY(t);
    QCOMPARE(t->str(t->slices().name[0]), std::string_view("early"));
    QCOMPARE(t->slices().parent[byName(*t, "child").index()], byName(*t, "early"));
}

void TestChromeSemantics::escapedNames() {
    auto t = load(R"J([{"ph": "X", "cat": "cpu_op", "name": "say \"hi\" \u00e9\n", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])J");
    QVERIFY(t);
    QCOMPARE(t->str(t->slices().name[0]), std::string_view("say \"hi\" \xc3\xa9\n"));
}
#endif

QTEST_APPLESS_MAIN(TestChromeSemantics)
#include "test_chrome_semantics.moc"
