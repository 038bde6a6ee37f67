// The injection library's pure parts: the clock mapping, the recording gates and intervals,
// the bounded buffer pool and drop accounting, the settings, names and callback-id tables.
#include "stallscope_cupti_buffers.h"
#include "stallscope_cupti_clock.h"
#include "stallscope_cupti_config.h"
#include "stallscope_cupti_links.h"
#include "stallscope_cupti_names.h"
#include "stallscope_cupti_range.h"

#include <cupti.h>

#include <QTest>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace stallscope::capture;
using namespace stallscope::capture::cupti;

namespace {
constexpr int64_t kSec = 1'000'000'000;
}

class TestCuptiSupport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void clockIdentityWhenCuptiReadsRealtime() {
        ClockMap c;
        const ClockSample samples[] = {{1000, 1400, 2000}, {5000, 5003, 5006}};
        QVERIFY(c.calibrate(samples));
        QVERIFY(c.identity());
        QCOMPARE(c.toRealtime(123456789), int64_t(123456789)); // exact, no rounding
        QVERIFY(c.note().find("no conversion") != std::string::npos);
    }
    void clockOffsetFromNarrowestBracket() {
        ClockMap c;
        const int64_t rt = 1'700'000'000 * kSec;
        const ClockSample samples[] = {
            {rt, 42, rt + 9000},       // wide
            {rt + 100, 142, rt + 120}, // narrowest: midpoint rt + 110 <-> 142
            {rt + 50, 90, rt - 10},    // the realtime clock stepped back: ignored
            {rt + 200, 0, rt + 201}};  // cuptiGetTimestamp failed: ignored
        QVERIFY(c.calibrate(samples));
        QVERIFY(!c.identity());
        QCOMPARE(c.offset(), rt + 110 - 142);
        QCOMPARE(c.uncertainty(), int64_t(10));
        QCOMPARE(c.toRealtime(1142), rt + 1110);
        QVERIFY(c.note().find("offset") != std::string::npos);
        const ClockSample useless[] = {{10, 0, 20}};
        QVERIFY(!c.calibrate(useless));
        QCOMPARE(c.offset(), rt + 110 - 142); // kept
    }
    void intervalsOverlap() {
        RecordingIntervals r;
        QVERIFY(!r.overlaps(0, 100));
        r.open(100);
        r.close(200);
        r.open(300);
        QVERIFY(!r.overlaps(0, 99));
        QVERIFY(!r.overlaps(0, 100)); // ends as recording starts
        QVERIFY(r.overlaps(0, 101));
        QVERIFY(r.overlaps(150, 150)); // an instant inside
        QVERIFY(r.overlaps(100, 100));
        QVERIFY(!r.overlaps(200, 200)); // the end is excluded
        QVERIFY(r.overlaps(199, 250));
        QVERIFY(!r.overlaps(210, 290));
        QVERIFY(r.overlaps(250, 350));
        QVERIFY(r.overlaps(1'000'000, 1'000'000)); // still open
        r.close(400);
        r.open(400); // reopened at the moment it closed: one interval
        QCOMPARE(r.intervals().size(), size_t(2));
        r.pruneBefore(250);
        QCOMPARE(r.intervals().size(), size_t(1));
        QVERIFY(!r.overlaps(150, 150));
    }
    void delayAndDuration() {
        const int64_t init = 1000 * kSec;
        RangeControl rc({.delayNs = 2 * kSec, .durationNs = 3 * kSec}, init);
        QVERIFY(!rc.recording());
        QCOMPARE(rc.nextDeadline(init), init + 2 * kSec);
        rc.tick(init + 2 * kSec + 5'000'000); // the timer is 5 ms late
        QVERIFY(rc.recording());
        QCOMPARE(rc.snapshot().intervals().front().begin, init + 2 * kSec); // stamped at the edge
        QCOMPARE(rc.nextDeadline(init + 3 * kSec), init + 5 * kSec);
        QVERIFY(!rc.finished(init + 4 * kSec));
        rc.tick(init + 6 * kSec);
        QVERIFY(!rc.recording());
        QVERIFY(rc.finished(init + 6 * kSec));
        const auto iv = rc.snapshot().intervals();
        QCOMPARE(iv.size(), size_t(1));
        QCOMPARE(iv[0].end, init + 5 * kSec);
        QCOMPARE(rc.nextDeadline(init + 6 * kSec), RecordingIntervals::kOpen);
    }
    void recorderAndProfilerGates() {
        RangeControl rc({.profilerRange = true}, 0);
        QVERIFY(!rc.recording()); // waits for cudaProfilerStart
        rc.profilerStart(10);
        QVERIFY(rc.recording());
        rc.recorderStop(20); // the recorder's STOP closes it whatever the profiler says
        QVERIFY(!rc.recording());
        rc.recorderStart(30);
        QVERIFY(rc.recording());
        rc.profilerStop(40);
        rc.profilerStart(50);
        rc.profilerStop(60);
        QVERIFY(!rc.finished(1'000'000)); // no duration: never finished
        const auto iv = rc.snapshot().intervals();
        QCOMPARE(iv.size(), size_t(3));
        QCOMPARE(std::make_pair(iv[0].begin, iv[0].end), std::make_pair(int64_t(10), int64_t(20)));
        QCOMPARE(std::make_pair(iv[1].begin, iv[1].end), std::make_pair(int64_t(30), int64_t(40)));
        QCOMPARE(std::make_pair(iv[2].begin, iv[2].end), std::make_pair(int64_t(50), int64_t(60)));
        RangeControl open({}, 0);
        QVERIFY(open.recording()); // no gate: records from the first CUDA call
    }
    void bufferPoolIsBounded() {
        BufferPool pool(1000, 2);
        QCOMPARE(pool.bufferBytes(), size_t(1000));
        uint8_t* a = pool.acquire();
        uint8_t* b = pool.acquire();
        QVERIFY(a && b && a != b);
        QCOMPARE(reinterpret_cast<uintptr_t>(a) % 8, uintptr_t(0));
        QVERIFY(pool.acquire() == nullptr); // exhausted: CUPTI drops and counts
        QVERIFY(pool.acquire() == nullptr);
        QCOMPARE(pool.exhaustedCount(), uint64_t(2));
        pool.release(a);
        QCOMPARE(pool.acquire(), a); // recycled, not reallocated
        QCOMPARE(pool.allocated(), size_t(2));
        uint8_t foreign[16];
        pool.release(foreign);
        pool.release(b);
        pool.release(b); // twice
        QCOMPARE(pool.foreignReleases(), uint64_t(2));
        QCOMPARE(pool.inUse(), size_t(1));
        QCOMPARE(BufferPool(13, 0).bufferBytes(), size_t(16)); // rounded to 8, at least one buffer
    }
    void bufferPoolUnderThreads() {
        BufferPool pool(64, 4);
        std::vector<std::thread> threads;
        std::atomic<int> live{0}, maxLive{0};
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 2000; ++i) {
                    uint8_t* p = pool.acquire();
                    if (!p) continue;
                    const int n = ++live;
                    int m = maxLive.load();
                    while (n > m && !maxLive.compare_exchange_weak(m, n)) {
                    }
                    p[0] = 1;
                    --live;
                    pool.release(p);
                }
            });
        for (auto& t : threads) t.join();
        QVERIFY(maxLive.load() <= 4);
        QVERIFY(pool.allocated() >= 1 && pool.allocated() <= 4);
        QCOMPARE(pool.inUse(), size_t(0));
        QCOMPARE(pool.foreignReleases(), uint64_t(0));
    }
    void dropLedgerReportsOncePerBatch() {
        DropLedger d;
        pb::Batch empty;
        d.report(empty);
        QCOMPARE(empty.dropped_records(), uint64_t(0));
        QVERIFY(empty.drop_reason().empty());
        d.add(DropLedger::Cause::CuptiBufferFull, 1200);
        d.add(DropLedger::Cause::NoTimestamp, 3);
        d.addPoolExhausted(2, 256u << 20);
        pb::Batch b;
        d.report(b);
        QCOMPARE(b.dropped_records(), uint64_t(1203));
        QVERIFY(b.drop_reason().find("1200 dropped by CUPTI") != std::string::npos);
        QVERIFY(b.drop_reason().find("buffer pool (256 MiB) exhausted 2 times") !=
                std::string::npos);
        pb::Batch next;
        d.report(next);
        QCOMPARE(next.dropped_records(), uint64_t(0)); // reported once
        d.add(DropLedger::Cause::NotDelivered, 7);
        QCOMPARE(d.total(), uint64_t(1210));
        QVERIFY(d.summary().find("7 records not delivered") != std::string::npos);
        QVERIFY(d.summary().find("STALLSCOPE_CAPTURE_BUFFER_MB") != std::string::npos);
    }
    void settingsFromTheEnvironment() {
        std::map<std::string, std::string> env = {{"STALLSCOPE_CAPTURE_SOCKET", " /tmp/rec.sock "},
                                                  {kDelayEnv, "2.5"},
                                                  {kDurationEnv, "10"},
                                                  {kProfilerRangeEnv, "1"},
                                                  {kBufferMbEnv, "64"},
                                                  {kFlushMsEnv, "50"},
                                                  {kAllApiEnv, "yes"}};
        auto lookup = [&](const char* n) -> const char* {
            auto it = env.find(n);
            return it == env.end() ? nullptr : it->second.c_str();
        };
        CaptureConfig c = parseCaptureConfig(lookup);
        QCOMPARE(c.socketPath, std::string("/tmp/rec.sock"));
        QCOMPARE(c.delayNs, int64_t(2'500'000'000));
        QCOMPARE(c.durationNs, 10 * kSec);
        QVERIFY(c.profilerRange && c.allApi);
        QCOMPARE(c.bufferMb, size_t(64));
        QCOMPARE(c.maxBuffers(), size_t(16)); // of 4 MiB
        QCOMPARE(c.flushMs, 50);
        QVERIFY(c.problems.empty());
        env = {{kDelayEnv, "soon"},
               {kDurationEnv, "-1"},
               {kBufferMbEnv, "1"},
               {kProfilerRangeEnv, "maybe"}};
        c = parseCaptureConfig(lookup);
        QVERIFY(c.socketPath.empty());
        QCOMPARE(c.delayNs, int64_t(0));
        QCOMPARE(c.durationNs, int64_t(0));
        QCOMPARE(c.bufferMb, size_t(256));
        QVERIFY(!c.profilerRange);
        QCOMPARE(c.problems.size(), size_t(4));
        QVERIFY(c.problems[0].find("STALLSCOPE_CAPTURE_DELAY='soon'") != std::string::npos);
    }
    void namesAsKinetoWritesThem() {
        QCOMPARE(memcpyName(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                            CUPTI_ACTIVITY_MEMORY_KIND_DEVICE),
                 std::string("Memcpy HtoD (Pageable -> Device)"));
        QCOMPARE(memcpyName(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
                            CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC),
                 std::string("Memcpy DtoD (Managed -> Device Static)"));
        QCOMPARE(memcpyName(77, 99, 1), std::string("Memcpy <unknown> (Unknown -> Pageable)"));
        QCOMPARE(memsetName(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), std::string("Memset (Pinned)"));
        QCOMPARE(std::string(syncTypeName(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)),
                 std::string("Stream Wait Event"));
        QCOMPARE(std::string(overheadKindName(CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL)),
                 std::string("Command Buffer Full"));
        QCOMPARE(demangleKernelName("_Z6kernelv"), std::string("kernel()"));
        QCOMPARE(demangleKernelName("triton_poi_fused_add_0"),
                 std::string("triton_poi_fused_add_0"));
        QCOMPARE(demangleKernelName("_Znot-a-name"), std::string("_Znot-a-name"));
    }
    void callbackIdTablesComeFromTheHeaders() {
        QCOMPARE(runtimeApiName(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
                 std::string("cudaLaunchKernel"));
        QCOMPARE(runtimeApiName(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000),
                 std::string("cudaLaunchKernel_ptsz"));
        QCOMPARE(runtimeApiName(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020),
                 std::string("cudaMemcpyAsync"));
        QCOMPARE(runtimeApiName(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020),
                 std::string("cudaStreamSynchronize"));
        QCOMPARE(driverApiName(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
                 std::string("cuLaunchKernel"));
        QCOMPARE(driverApiName(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2),
                 std::string("cuMemcpyHtoDAsync"));
        QCOMPARE(runtimeApiName(1'000'000), std::string("cudaRuntimeApi#1000000"));
        QCOMPARE(apiDisplayName("cudaFoo_v2_extra"), std::string("cudaFoo_v2_extra"));
        QCOMPARE(apiDisplayName("cuInit"), std::string("cuInit"));
        QVERIFY(!keepRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020));
        QVERIFY(keepRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020));
        QVERIFY(keepDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx));
        QVERIFY(keepDriverApi(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2));
        QVERIFY(keepDriverApi(CUPTI_DRIVER_TRACE_CBID_cuMemMap));
        QVERIFY(!keepDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
        QVERIFY(!keepDriverApi(CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2));
        // Every id of the headers has a distinct, suffix-free display name per version.
        std::set<std::string> names;
        for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id) {
            if (runtimeCbidEnumName(id).empty()) continue;
            const std::string n = runtimeApiName(id);
            QVERIFY2(n.rfind("cuda", 0) == 0 || n.rfind("__cuda", 0) == 0, n.c_str());
            names.insert(n);
        }
        QVERIFY(names.size() > 400);
    }
    void externalIdsAreBounded() {
        ExternalCorrelations e(3);
        for (uint32_t c = 1; c <= 5; ++c)
            e.add(c, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 100 + c);
        QCOMPARE(e.size(), size_t(3));
        QCOMPARE(e.find(1), uint64_t(0)); // the oldest went
        QCOMPARE(e.find(5), uint64_t(105));
        e.add(5, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 999); // an annotation: op kept
        QCOMPARE(e.find(5), uint64_t(105));
        e.add(0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1); // no correlation: ignored
        QCOMPARE(e.find(0), uint64_t(0));
        QCOMPARE(cuptiThreadKey(0x7f12'3456'7890ul), 0x3456'7890u);
    }
};

QTEST_APPLESS_MAIN(TestCuptiSupport)
#include "test_cupti_support.moc"
