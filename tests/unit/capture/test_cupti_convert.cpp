// CUPTI records (the real structs of the toolkit's cupti_activity.h, filled in memory) through
// the converter the injection library uses: GPU work, API calls, correlation and external
// ids, synchronisation, batches and their strings, the clock, the recording range.
#include "stallscope_cupti_convert.h"
#include "stallscope_cupti_names.h"

#include <cupti.h>

#include <QTest>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace stallscope::capture;
using namespace stallscope::capture::cupti;

namespace {

constexpr int64_t kPid = 4242;
constexpr uint64_t kBase = 5'000'000'000;              // CUPTI clock (e.g. monotonic raw)
constexpr int64_t kOffset = 1'700'000'000'000'000'000; // -> CLOCK_REALTIME

template <typename T> T blank(CUpti_ActivityKind kind) {
    T r;
    std::memset(&r, 0, sizeof r);
    r.kind = kind;
    return r;
}

CUpti_ActivityKernel10 kernel(const char* name, uint32_t corr, uint64_t start, uint64_t end,
                              uint32_t stream = 7) {
    auto k = blank<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k.name = name;
    k.correlationId = corr;
    k.start = start;
    k.end = end;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    return k;
}

CUpti_ActivityMemcpy6 copy(uint8_t kind, uint8_t src, uint8_t dst, uint64_t bytes, uint32_t corr,
                           uint64_t start) {
    auto m = blank<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = kind;
    m.srcKind = src;
    m.dstKind = dst;
    m.bytes = bytes;
    m.correlationId = corr;
    m.start = start;
    m.end = start + 1000;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 7;
    return m;
}

CUpti_ActivityAPI apiCall(CUpti_ActivityKind kind, uint32_t cbid, uint32_t corr, uint64_t start,
                          uint32_t thread = 77) {
    auto a = blank<CUpti_ActivityAPI>(kind);
    a.cbid = cbid;
    a.correlationId = corr;
    a.start = start;
    a.end = start + 500;
    a.processId = kPid;
    a.threadId = thread;
    return a;
}

CUpti_ActivityExternalCorrelation
external(uint32_t corr, uint64_t id,
         CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
    auto e = blank<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    e.externalKind = kind;
    e.externalId = id;
    e.correlationId = corr;
    return e;
}

template <typename... R> std::vector<const CUpti_Activity*> records(const R&... r) {
    return {reinterpret_cast<const CUpti_Activity*>(&r)...};
}

ClockMap offsetClock() {
    ClockMap c;
    // realtime 1000 ns apart around the CUPTI reading, which is far outside: mapped.
    const ClockSample s{kOffset + int64_t(kBase) - 500, kBase, kOffset + int64_t(kBase) + 500};
    c.calibrate({&s, 1});
    return c;
}

/// What a recorder does with the batches: strings first, then the activities.
struct Received {
    std::vector<std::string> strings;
    std::vector<pb::Activity> activities;
    uint64_t batches = 0;

    void take(std::vector<pb::Batch> batches) {
        for (pb::Batch& b : batches) {
            ++this->batches;
            for (const std::string& s : b.new_strings()) strings.push_back(s);
            for (const pb::Activity& a : b.activities()) {
                QVERIFY(a.name_id() < strings.size());
                QVERIFY(a.category_id() < strings.size());
                activities.push_back(a);
            }
        }
    }
    std::string name(const pb::Activity& a) const { return strings.at(a.name_id()); }
    std::string category(const pb::Activity& a) const { return strings.at(a.category_id()); }
    const pb::Activity& byName(const std::string& n) const {
        for (const pb::Activity& a : activities)
            if (name(a) == n) return a;
        static pb::Activity none;
        return none;
    }
};

} // namespace

class TestCuptiConvert : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void kernelFieldsAndClock() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        conv.setClock(offsetClock());
        auto k = kernel("_Z10add_kernelPfS_i", 11, kBase + 100, kBase + 5100);
        k.gridX = 128, k.gridY = 2, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
        k.registersPerThread = 32, k.staticSharedMemory = 1024, k.dynamicSharedMemory = 4096;
        k.deviceId = 1, k.contextId = 3, k.streamId = 13;
        conv.convert(records(k));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        const pb::Activity& a = r.activities[0];
        QCOMPARE(a.kind(), pb::Activity::KERNEL);
        QCOMPARE(r.name(a), std::string("add_kernel(float*, float*, int)")); // demangled
        QCOMPARE(r.category(a), std::string("kernel"));
        QCOMPARE(a.start_ns(), kOffset + int64_t(kBase) + 100);
        QCOMPARE(a.end_ns(), kOffset + int64_t(kBase) + 5100);
        QCOMPARE(a.correlation(), 11u);
        QCOMPARE(a.device(), 1);
        QCOMPARE(a.context(), 3);
        QCOMPARE(a.stream(), 13);
        QCOMPARE(a.pid(), kPid);
        QCOMPARE(std::vector<int>({a.grid_x(), a.grid_y(), a.grid_z()}),
                 std::vector<int>({128, 2, 1}));
        QCOMPARE(std::vector<int>({a.block_x(), a.block_y(), a.block_z()}),
                 std::vector<int>({256, 1, 1}));
        QCOMPARE(a.registers_per_thread(), 32);
        QCOMPARE(a.static_shared_memory(), 1024);
        QCOMPARE(a.dynamic_shared_memory(), 4096);
        QCOMPARE(a.external_id(), uint64_t(0));
        QCOMPARE(r.strings.at(0), std::string()); // id 0 is "" (no name / no category)
    }
    void copiesPageablePinnedAndPeer() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        auto h2dPageable =
            copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                 CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 20, 21, kBase);
        auto h2dPinned = copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                              CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 22, kBase + 2000);
        auto d2hPinned = copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                              CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 8, 23, kBase + 4000);
        d2hPinned.runtimeCorrelationId = 99; // issued through the runtime: that call links
        auto peer = blank<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
        peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        peer.srcKind = peer.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        peer.bytes = 1 << 26, peer.start = kBase + 6000, peer.end = kBase + 9000;
        peer.deviceId = 0, peer.srcDeviceId = 0, peer.dstDeviceId = 3, peer.contextId = 1;
        peer.streamId = 21, peer.correlationId = 24;
        conv.convert(records(h2dPageable, h2dPinned, d2hPinned, peer));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(4));
        const pb::Activity& a = r.byName("Memcpy HtoD (Pageable -> Device)");
        QCOMPARE(a.kind(), pb::Activity::MEMCPY);
        QCOMPARE(a.copy_kind(), pb::Activity::HTOD);
        QCOMPARE(a.src_kind(), pb::Activity::PAGEABLE);
        QCOMPARE(a.dst_kind(), pb::Activity::DEVICE);
        QCOMPARE(a.bytes(), uint64_t(1) << 20);
        QCOMPARE(a.correlation(), 21u);
        QCOMPARE(std::make_pair(a.device(), a.stream()), std::make_pair(0, 7));
        QCOMPARE(r.category(a), std::string("gpu_memcpy"));
        const pb::Activity& b = r.byName("Memcpy HtoD (Pinned -> Device)");
        QCOMPARE(b.src_kind(), pb::Activity::PINNED);
        QCOMPARE(b.bytes(), uint64_t(4096));
        const pb::Activity& c = r.byName("Memcpy DtoH (Device -> Pinned)");
        QCOMPARE(c.copy_kind(), pb::Activity::DTOH);
        QCOMPARE(c.dst_kind(), pb::Activity::PINNED);
        QCOMPARE(c.correlation(), 99u);
        const pb::Activity& p = r.byName("Memcpy PtoP (Device -> Device)");
        QCOMPARE(p.copy_kind(), pb::Activity::PTOP);
        QCOMPARE(p.dst_device(), 3);
        QCOMPARE(std::make_pair(p.device(), p.stream()), std::make_pair(0, 21));
        QCOMPARE(p.end_ns() - p.start_ns(), int64_t(3000));
    }
    void memset() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        auto m = blank<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
        m.bytes = 512, m.start = kBase, m.end = kBase + 10, m.streamId = 0xFFFFFFFFu;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, m.correlationId = 31, m.contextId = 1;
        conv.convert(records(m));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        QCOMPARE(r.name(r.activities[0]), std::string("Memset (Device)"));
        QCOMPARE(r.category(r.activities[0]), std::string("gpu_memset"));
        QCOMPARE(r.activities[0].dst_kind(), pb::Activity::DEVICE);
        QCOMPARE(r.activities[0].bytes(), uint64_t(512));
        QCOMPARE(r.activities[0].stream(), -1); // CUPTI's "no stream" is -1
    }
    void launchCallsLinkToTheirGpuWork() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        conv.setThreadMap({{77u, 9001}}); // CUPTI thread key -> OS tid
        auto launch = apiCall(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 41, kBase);
        auto launch13 =
            apiCall(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                    42, kBase + 600);
        auto memcpyCall =
            apiCall(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 43,
                    kBase + 1200, 78);
        auto k1 = kernel("k1", 41, kBase + 2000, kBase + 3000);
        auto k2 = kernel("k2", 42, kBase + 3000, kBase + 4000);
        auto c = copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                      CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 64, 43, kBase + 4000);
        auto triton = apiCall(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                              44, kBase + 5000);
        auto noisy = apiCall(CUPTI_ACTIVITY_KIND_RUNTIME,
                             CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 45, kBase);
        auto noisyDriver =
            apiCall(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 46, kBase);
        conv.convert(records(k1, launch, k2, launch13, c, memcpyCall, triton, noisy, noisyDriver));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(7));
        QCOMPARE(conv.counters().apiFiltered, uint64_t(2)); // cudaGetDevice, cuCtxGetCurrent
        std::map<uint32_t, std::vector<std::string>> byCorrelation;
        for (const pb::Activity& a : r.activities)
            byCorrelation[a.correlation()].push_back(r.name(a));
        QCOMPARE(byCorrelation[41], std::vector<std::string>({"k1", "cudaLaunchKernel"}));
        QCOMPARE(
            byCorrelation[42],
            std::vector<std::string>({"k2", "cudaLaunchKernel"})); // CUDA 13's __cudaLaunchKernel
        QCOMPARE(byCorrelation[43],
                 std::vector<std::string>({"Memcpy HtoD (Pinned -> Device)", "cudaMemcpyAsync"}));
        QCOMPARE(byCorrelation[44], std::vector<std::string>({"cuLaunchKernel"}));
        const pb::Activity& call = r.byName("cudaMemcpyAsync");
        QCOMPARE(call.kind(), pb::Activity::RUNTIME);
        QCOMPARE(r.category(call), std::string("cuda_runtime"));
        QCOMPARE(call.pid(), kPid);
        QCOMPARE(call.tid(), int64_t(78)); // not registered: CUPTI's id as is
        QCOMPARE(r.byName("cudaLaunchKernel").tid(), int64_t(9001));
        QCOMPARE(r.byName("cuLaunchKernel").kind(), pb::Activity::DRIVER);
        QCOMPARE(r.category(r.byName("cuLaunchKernel")), std::string("cuda_driver"));
        // Every name crossed once: 2 launches share "cudaLaunchKernel".
        QCOMPARE(std::count(r.strings.begin(), r.strings.end(), "cudaLaunchKernel"), 1);
        QVERIFY(std::find(r.strings.begin(), r.strings.end(), "cudaGetDevice") == r.strings.end());
    }
    void allApiKeepsEverythingButOwnThread() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid, .allApi = true}, drops);
        conv.setThreadMap({{5u, 3333}});
        conv.ignoreThread(3333);
        auto noisy = apiCall(CUPTI_ACTIVITY_KIND_RUNTIME,
                             CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1, kBase);
        auto ours = apiCall(CUPTI_ACTIVITY_KIND_RUNTIME,
                            CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020, 2, kBase, 5);
        conv.convert(records(noisy, ours));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        QCOMPARE(r.name(r.activities[0]), std::string("cudaGetDevice"));
        QCOMPARE(conv.counters().ownThread, uint64_t(1));
    }
    void externalIdsReachCallAndGpuWork() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        auto launch = apiCall(CUPTI_ACTIVITY_KIND_RUNTIME,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 51, kBase);
        auto k = kernel("k", 51, kBase + 100, kBase + 200);
        // The external record comes after both in the buffer: the first pass sees it.
        auto annotation = external(51, 700, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
        auto op = external(51, 512); // CUSTOM0, an operator: wins over the annotation
        conv.convert(records(launch, k, annotation, op));
        // A later flush: GPU work whose launch was correlated in the previous one.
        auto late = kernel("late", 52, kBase + 300, kBase + 400);
        auto lateOp = external(52, 513);
        conv.convert(records(lateOp));
        conv.convert(records(late));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(3));
        QCOMPARE(r.byName("cudaLaunchKernel").external_id(), uint64_t(512));
        QCOMPARE(r.byName("k").external_id(), uint64_t(512));
        QCOMPARE(r.byName("late").external_id(), uint64_t(513));
    }
    void synchronisationRows() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        auto ctx = blank<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
        ctx.contextId = 4, ctx.deviceId = 2;
        auto stream = blank<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
        stream.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        stream.start = kBase, stream.end = kBase + 800, stream.contextId = 4, stream.streamId = 7;
        stream.correlationId = 61;
        auto context = stream;
        context.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
        context.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE, context.correlationId = 62;
        auto unknownCtx = stream;
        unknownCtx.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
        unknownCtx.contextId = 9, unknownCtx.correlationId = 63;
        auto wait = stream;
        wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, wait.correlationId = 64;
        conv.convert(records(stream, context, unknownCtx, wait, ctx));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(4));
        const pb::Activity& s = r.byName("Stream Sync");
        QCOMPARE(s.kind(), pb::Activity::SYNCHRONIZATION);
        QCOMPARE(r.category(s), std::string("cuda_sync"));
        QCOMPARE(std::make_tuple(s.device(), s.context(), s.stream()), std::make_tuple(2, 4, 7));
        QCOMPARE(s.correlation(), 61u);
        QCOMPARE(r.byName("Context Sync").stream(), -1);
        QCOMPARE(r.byName("Event Sync").device(), -1); // context never described
        QCOMPARE(r.byName("Stream Wait Event").correlation(), 64u);
    }
    void batchesCarryTheirStrings() {
        DropLedger drops;
        ActivityConverter conv({.maxActivitiesPerBatch = 2}, drops);
        std::vector<std::string> names;
        std::vector<CUpti_ActivityKernel10> ks;
        for (int i = 0; i < 5; ++i) names.push_back("kernel_" + std::to_string(i));
        for (int i = 0; i < 5; ++i)
            ks.push_back(kernel(names[size_t(i)].c_str(), uint32_t(i + 1), kBase, kBase + 1));
        ks.push_back(kernel("kernel_1", 9, kBase + 5, kBase + 6));
        std::vector<const CUpti_Activity*> rs;
        for (const auto& k : ks) rs.push_back(reinterpret_cast<const CUpti_Activity*>(&k));
        conv.convert(rs);
        std::vector<pb::Batch> batches = conv.takeBatches();
        QCOMPARE(batches.size(), size_t(3));
        for (const pb::Batch& b : batches) QVERIFY(b.activities_size() <= 2);
        Received r;
        r.take(std::move(batches)); // each batch resolves with the strings sent up to it
        QCOMPARE(r.activities.size(), size_t(6));
        for (size_t i = 0; i < 5; ++i) QCOMPARE(r.name(r.activities[i]), names[i]);
        QCOMPARE(r.name(r.activities[5]), std::string("kernel_1"));
        QCOMPARE(std::count(r.strings.begin(), r.strings.end(), "kernel_1"), 1);
        QVERIFY(conv.takeBatches().empty()); // nothing new: no empty batch
    }
    void untimedRecordsAreCountedDrops() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        auto k = kernel("k", 1, 0, 0); // "could not be collected for lack of device memory"
        conv.convert(records(k));
        QVERIFY(conv.takeBatches().empty());
        QCOMPARE(drops.total(DropLedger::Cause::NoTimestamp), uint64_t(1));
        pb::Batch b;
        drops.report(b);
        QCOMPARE(b.dropped_records(), uint64_t(1));
        QVERIFY(b.drop_reason().find("without timestamps") != std::string::npos);
    }
    void recordingIntervalsFilter() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        RecordingIntervals range;
        range.open(int64_t(kBase) + 1000);
        range.close(int64_t(kBase) + 2000);
        conv.setRecordingIntervals(range);
        auto before = kernel("before", 1, kBase, kBase + 999);
        auto across = kernel("across", 2, kBase + 1900, kBase + 2500); // kept whole
        auto after = kernel("after", 3, kBase + 2000, kBase + 2100);
        conv.convert(records(before, across, after));
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        QCOMPARE(r.name(r.activities[0]), std::string("across"));
        QCOMPARE(conv.counters().outsideRange, uint64_t(2));
    }
};

QTEST_APPLESS_MAIN(TestCuptiConvert)
#include "test_cupti_convert.moc"
