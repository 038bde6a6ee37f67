// The importers of other profilers' files, on tiny files made by the test: each row becomes
// the Kineto event that means the same, and the facts the analysis relies on survive the way
// in (correlations per process, graph launches owning many ops, autograd NVTX ranges as
// operators with their shapes, sync calls named by the call, copies by their direction).
// The real files: test_foreign_formats_import (counts against an independent reader).
#include "gzip_text.h"
#include "sqlite_file.h"
#include "test_support.h"

#include "stallscope/importers/importer.h"

#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
using model::EventKind;
using model::SliceId;

namespace {

/// Imports `bytes` written to a file; null (and a failed QVERIFY2 message) on error.
std::shared_ptr<const model::Trace> importBytes(const std::string& bytes, std::string& error) {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "input";
    test::writeFile(path, bytes);
    auto r = importers::importPath(path);
    if (!r) {
        error = r.error().message;
        return nullptr;
    }
    return r.value().traces.front().trace;
}

/// The slices named `name`, in time order.
std::vector<uint32_t> named(const model::Trace& t, std::string_view name) {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < t.slices().size(); ++i)
        if (t.str(t.slices().name[i]) == name) out.push_back(i);
    std::sort(out.begin(), out.end(),
              [&](uint32_t a, uint32_t b) { return t.slices().start[a] < t.slices().start[b]; });
    return out;
}

std::string arg(const model::Trace& t, uint32_t slice, std::string_view key) {
    std::vector<model::ArgValue> args;
    std::string err;
    if (!t.sliceArgs(SliceId(slice), args, err)) return "(" + err + ")";
    for (const auto& a : args)
        if (a.key == key) return a.json;
    return {};
}

int64_t pidOf(const model::Trace& t, uint32_t slice) {
    return t.process(t.track(t.slices().track[slice]).process).key.number;
}

// Two processes (pids 5 and 6) each launch a kernel with correlation id 1: nsys numbers
// correlations per process. Process 5 also copies, synchronises, and runs two NVTX ranges.
const char* kNsight = R"SQL(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm_kernel'),
  (3, 'cuMemAlloc_v2'), (4, 'cudaDeviceSynchronize_v3020'), (5, 'cudaMemcpyAsync_v3020'),
  (6, 'main thread');
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'CUDA runtime'),
  (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver');
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark', 'NvtxMark'),
  (59, 'NvtxPushPopRange', 'NvtxPushPopRange'), (75, 'NvtxDomainCreate', 'NvtxDomainCreate');
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device');
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'),
  (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES
  (2, 'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT', 'Stream wait sync');
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H200', 150121545728, 132, 9, 0);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT,
  nameEnum INTEGER, value TEXT);
INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local', 'CpuCores', 1, '48'),
  (1, 'Local', 'CpuDescription', 13, 'AMD EPYC 7413 24-Core Processor'),
  (1, 'Local', 'CudaDriverVersion', 611, '12080'), (1, 'Local', 'Hostname', 619, 'node-7');
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (83886080, 5, 'python3');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (6, 0, 83886089);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1000, 3000, 0, 83886089, 1, 1, 0), (1500, 2500, 0, 100663306, 1, 1, 0),
  (4000, 4100, 1, 83886089, 2, 3, 0), (5000, 6000, 0, 83886089, 3, 5, 0),
  (7000, 9000, 0, 83886089, 4, 4, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (3500, 4500, 0, 7, 1, 83886080, 2, 2, 64, 1, 1, NULL),
  (2600, 2700, 0, 9, 1, 100663296, 2, 2, 8, 1, 1, 12);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER,
  srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (6100, 6900, 0, 7, 3, 83886080, 4096, 1, 0, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
  (7100, 8900, 0, 4294967295, 4, 83886080, 2);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
  globalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO NVTX_EVENTS VALUES
  (900, 3100, 59, 'aten::mm, seq = 3, op_id = 7, sizes = [[2, 3], [3, 4]]', 83886089, NULL, 0),
  (800, 9500, 59, 'train step', 83886089, NULL, 0),
  (9600, NULL, 34, 'checkpoint', 83886089, NULL, 0),
  (100, 100, 75, 'my domain', 83886089, NULL, 0);
)SQL";

} // namespace

class TestForeignImporters : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nsightRowsAsKinetoEvents() {
        const std::string db = test::sqliteFromSql(kNsight);
        QVERIFY(!db.empty());
        for (const std::string& bytes : {db, test::gzipText(db)}) {
            std::string error;
            const auto t = importBytes(bytes, error);
            QVERIFY2(t, error.c_str());
            QVERIFY(t->metadata().formatName.starts_with("Nsight Systems SQLite export"));
            const auto& s = t->slices();
            // The version suffix of nsys's API names goes; a function's own _v2 stays.
            const auto launches = named(*t, "cudaLaunchKernel");
            QCOMPARE(launches.size(), size_t(2));
            QCOMPARE(named(*t, "cuMemAlloc_v2").size(), size_t(1));
            QCOMPARE(s.kind[named(*t, "cuMemAlloc_v2")[0]], EventKind::Driver);
            QCOMPARE(arg(*t, launches[0], "nsys name"), std::string("\"cudaLaunchKernel_v7000\""));
            // Correlation 1 in two processes: each kernel links to its own process's call.
            const auto kernels = named(*t, "gemm_kernel");
            QCOMPARE(kernels.size(), size_t(2));
            for (const uint32_t k : kernels) {
                QCOMPARE(s.kind[k], EventKind::Kernel);
                const SliceId call = t->launchOf(SliceId(k));
                QVERIFY(call.valid());
                QCOMPARE(pidOf(*t, call.index()), int64_t(arg(*t, k, "stream") == "9" ? 6 : 5));
            }
            QCOMPARE(arg(*t, kernels[0], "graph id"), std::string("12")); // the 2600 ns one
            QCOMPARE(arg(*t, kernels[1], "graph id"), std::string());
            // Copies by direction and memory kinds, as Kineto names them.
            const auto copies = named(*t, "Memcpy HtoD (Pageable -> Device)");
            QCOMPARE(copies.size(), size_t(1));
            QCOMPARE(s.kind[copies[0]], EventKind::Memcpy);
            QCOMPARE(arg(*t, copies[0], "bytes"), std::string("4096"));
            // The file labels the sync "stream wait"; its call is cudaDeviceSynchronize.
            const auto sync = named(*t, "Context Sync");
            QCOMPARE(sync.size(), size_t(1));
            QCOMPARE(s.kind[sync[0]], EventKind::CudaSync);
            QCOMPARE(arg(*t, sync[0], "stream"), std::string("-1"));
            // PyTorch's autograd NVTX range is an operator with its shapes; the rest annotations.
            const auto mm = named(*t, "aten::mm");
            QCOMPARE(mm.size(), size_t(1));
            QCOMPARE(s.kind[mm[0]], EventKind::CpuOp);
            QCOMPARE(arg(*t, mm[0], "Input Dims"), std::string("[[2, 3], [3, 4]]"));
            QCOMPARE(arg(*t, mm[0], "Sequence number"), std::string("3"));
            QCOMPARE(s.kind[named(*t, "train step")[0]], EventKind::UserAnnotation);
            QCOMPARE(t->instants().size(), size_t(1)); // the mark
            QCOMPARE(t->diagnostics().count(model::DiagnosticKind::SourceNotRead), uint64_t(1));
            // The GPU by its TARGET_INFO_GPU row; times are the file's nanoseconds.
            QCOMPARE(t->metadata().devices.size(), size_t(1));
            QCOMPARE(t->metadata().devices[0].name, std::string("NVIDIA H200"));
            QCOMPARE(t->metadata().devices[0].numSms, 132);
            // The machine (TARGET_INFO_SYSTEM_ENV) as top-level keys, Kineto's where it has one.
            const auto& top = t->metadata().other;
            for (const std::pair<std::string, std::string>& kv :
                 std::vector<std::pair<std::string, std::string>>{
                     {"host_cpu", "\"AMD EPYC 7413 24-Core Processor\""},
                     {"host_cpu_cores", "48"},
                     {"hostname", "\"node-7\""},
                     {"cuda_driver_version", "12080"}})
                QVERIFY2(std::find(top.begin(), top.end(), kv) != top.end(), kv.first.c_str());
            QCOMPARE(s.start[kernels[1]], int64_t(3500));
            QCOMPARE(s.dur[kernels[1]], int64_t(1000));
        }
    }

    // Two processes, each running work on a GPU of its own (a job's ranks on one node): read
    // as two ranks in pid order, each with its host process and its GPU, its kernel linked to
    // its call, and a note that the export does not say the job's ranks. Processes sharing a
    // GPU (kNsight: pids 5 and 6 on GPU 0) stay one trace, with a note.
    void nsightProcessesOnGpusOfTheirOwnAreRanks() {
        const std::string db = test::sqliteFromSql(R"SQL(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm_kernel');
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H200', 150121545728, 132, 9, 0),
  (1, 'NVIDIA H200', 150121545728, 132, 9, 0);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (100663296, 6, 'python3'), (83886080, 5, 'python3');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1000, 3000, 83886085, 1, 1), (1500, 2500, 100663302, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (3500, 4500, 0, 7, 1, 83886080, 2), (2600, 2700, 1, 9, 1, 100663296, 2);
)SQL");
        QVERIFY(!db.empty());
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "ranks.sqlite";
        test::writeFile(path, db);
        auto r = importers::importPath(path);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const auto& traces = r.value().traces;
        QCOMPARE(traces.size(), size_t(2));
        for (size_t rank = 0; rank < 2; ++rank) {
            const model::Trace& t = *traces[rank].trace;
            QCOMPARE(traces[rank].rank, int32_t(rank));
            const auto kernels = named(t, "gemm_kernel");
            QCOMPARE(kernels.size(), size_t(1));
            const SliceId call = t.launchOf(SliceId(kernels[0]));
            QVERIFY(call.valid());
            QCOMPARE(pidOf(t, call.index()), int64_t(5 + rank)); // pid order
            QCOMPARE(t.process(t.track(t.slices().track[kernels[0]]).process).gpuDevice,
                     int32_t(rank));
            bool said = false;
            for (const auto& d : t.diagnostics().examples(model::DiagnosticKind::SourceLacks))
                said |= d.detail.find("read as ranks numbered in pid order (pid 5 rank 0, "
                                      "pid 6 rank 1)") != std::string::npos;
            QVERIFY(said);
        }
        std::string error;
        const auto shared = importBytes(test::sqliteFromSql(kNsight), error);
        QVERIFY2(shared, error.c_str());
        bool oneTrace = false;
        for (const auto& d : shared->diagnostics().examples(model::DiagnosticKind::SourceLacks))
            oneTrace |= d.detail.find("processes 5, 6 all ran work on GPU 0: read as one trace") !=
                        std::string::npos;
        QVERIFY(oneTrace);
    }

    // One hipGraphLaunch owns the graph's Task ops: both link to it. The tracer's own rows are
    // counted, not read; an autograd marker is an operator.
    void rpdGraphLaunchOwnsItsOps() {
        const std::string db = test::sqliteFromSql(R"SQL(
CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, string TEXT);
INSERT INTO rocpd_string VALUES (1, 'hipGraphLaunch'), (2, 'Task'), (3, 'fused_kernel'),
  (4, 'UserMarker'), (5, 'aten::linear'), (6, 'OpTable::writeRows'), (7, ''),
  (8, 'CopyHostToDevice'), (9, 'hipMemcpyAsync');
CREATE TABLE rocpd_metadata (id INTEGER, tag TEXT, value TEXT);
INSERT INTO rocpd_metadata VALUES (1, 'schema_version', '2');
CREATE TABLE rocpd_api (id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, start INTEGER,
  end INTEGER, apiName_id INTEGER, args_id INTEGER);
INSERT INTO rocpd_api VALUES (10, 40, 41, 1000, 2000, 1, 7), (11, 40, 41, 500, 2500, 4, 5),
  (12, 40, 42, 100, 200, 6, 7), (13, 40, 41, 3000, 3100, 9, 7);
CREATE TABLE rocpd_op (id INTEGER PRIMARY KEY, gpuId INTEGER, queueId INTEGER, start INTEGER,
  end INTEGER, description_id INTEGER, opType_id INTEGER);
INSERT INTO rocpd_op VALUES (20, 2, 0, 2100, 2200, 3, 2), (21, 2, 0, 2200, 2400, 3, 2),
  (22, 2, 0, 3200, 3300, 7, 8);
CREATE TABLE rocpd_api_ops (id INTEGER PRIMARY KEY, api_id INTEGER, op_id INTEGER);
INSERT INTO rocpd_api_ops VALUES (1, 10, 20), (2, 10, 21), (3, 13, 22);
CREATE TABLE rocpd_copyapi (api_ptr_id INTEGER, size INTEGER, pinned INTEGER);
INSERT INTO rocpd_copyapi VALUES (13, 65536, 1);
CREATE TABLE ext_autogradapi (api_ptr_id INTEGER, autogradName_id INTEGER, seq INTEGER,
  op_id INTEGER, sizes TEXT, input_op_ids TEXT);
INSERT INTO ext_autogradapi VALUES (11, 5, 9, 1, '[[8, 16], [32, 16]]', '');
)SQL");
        QVERIFY(!db.empty());
        std::string error;
        const auto t = importBytes(db, error);
        QVERIFY2(t, error.c_str());
        const auto launch = named(*t, "hipGraphLaunch");
        QCOMPARE(launch.size(), size_t(1));
        QCOMPARE(t->gpuWorkOf(SliceId(launch[0])).size(), size_t(2));
        for (const uint32_t k : named(*t, "fused_kernel")) {
            QCOMPARE(t->slices().kind[k], EventKind::Kernel);
            QCOMPARE(t->launchOf(SliceId(k)).index(), launch[0]);
            QCOMPARE(pidOf(*t, k), int64_t(2));
        }
        const auto copy = named(*t, "Memcpy HtoD (Pinned -> Device)");
        QCOMPARE(copy.size(), size_t(1));
        QCOMPARE(arg(*t, copy[0], "bytes"), std::string("65536"));
        const auto op = named(*t, "aten::linear");
        QCOMPARE(op.size(), size_t(1));
        QCOMPARE(t->slices().kind[op[0]], EventKind::CpuOp);
        QCOMPARE(arg(*t, op[0], "Input Dims"), std::string("[[8, 16], [32, 16]]"));
        QVERIFY(named(*t, "OpTable::writeRows").empty());
        QCOMPARE(t->diagnostics().count(model::DiagnosticKind::SourceNotRead), uint64_t(1));
        QVERIFY(t->metadata().devices.empty()); // RPD does not name its GPUs
    }

    // rocprofv3 JSON: names from kernel_symbols and strings, the GPU agent as the device,
    // correlation_id.internal linking the HIP call and its dispatch.
    void rocprofDispatchesAndCalls() {
        const std::string json = R"J({"rocprofiler-sdk-tool": [{
  "metadata": {"pid": 77, "init_time": 1, "fini_time": 9000},
  "agents": [{"type": 1, "id": {"handle": 1}},
             {"type": 2, "id": {"handle": 5}, "gpu_index": 3, "name": "gfx942",
              "product_name": "AMD Instinct MI300X", "cu_count": 304, "wave_front_size": 64}],
  "kernel_symbols": [{"kernel_id": 0, "formatted_kernel_name": "Cijk_gemm"}],
  "strings": {"buffer_records": [{"kind": "NONE", "operations": []},
    {"kind": "HIP_RUNTIME_API", "operations": ["hipApiName", "hipLaunchKernel"]}]},
  "buffer_records": {
    "hip_api": [{"kind": 1, "operation": 1, "thread_id": 78, "correlation_id": {"internal": 4},
                 "start_timestamp": 1000, "end_timestamp": 1500}],
    "kernel_dispatch": [{"kind": 11, "operation": 2, "thread_id": 78,
      "correlation_id": {"internal": 4}, "start_timestamp": 2000, "end_timestamp": 2750,
      "stream_id": {"handle": 6},
      "dispatch_info": {"agent_id": {"handle": 5}, "queue_id": {"handle": 16}, "kernel_id": 0,
        "grid_size": {"x": 256, "y": 1, "z": 1}, "workgroup_size": {"x": 64, "y": 1, "z": 1}}}],
    "hsa_api": [{"kind": 2, "operation": 0}]}}]})J";
        for (const std::string& bytes : {json, test::gzipText(json)}) {
            std::string error;
            const auto t = importBytes(bytes, error);
            QVERIFY2(t, error.c_str());
            const auto k = named(*t, "Cijk_gemm");
            QCOMPARE(k.size(), size_t(1));
            QCOMPARE(pidOf(*t, k[0]), int64_t(3));
            QCOMPARE(t->slices().dur[k[0]], int64_t(750));
            const SliceId call = t->launchOf(SliceId(k[0]));
            QVERIFY(call.valid());
            QCOMPARE(t->str(t->slices().name[call.index()]), std::string_view("hipLaunchKernel"));
            QCOMPARE(pidOf(*t, call.index()), int64_t(77));
            QCOMPARE(t->metadata().devices.at(0).name, std::string("AMD Instinct MI300X"));
            QCOMPARE(t->metadata().devices.at(0).numSms, 304);
            QCOMPARE(t->diagnostics().count(model::DiagnosticKind::SourceNotRead), uint64_t(1));
        }
    }
};

QTEST_GUILESS_MAIN(TestForeignImporters)
#include "test_foreign_importers.moc"
