// CUPTI records -> the injection's converter -> the recorder's CaptureSession -> the trace
// model and the Kineto JSON it writes: GPU work on its device/stream rows, launch calls on the
// program's threads linked to their work, copies named by kind (pageable/pinned), the
// external id of the operator, synchronisation, NVTX ranges and the device's properties.
#include "capture_test_util.h"
#include "stallscope_cupti_convert.h"
#include "test_support.h"

#include "stallscope/importers/importer.h"

#include <cupti.h>

#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace stallscope;
using namespace stallscope::capture;
using namespace stallscope::capture::cupti;

namespace {

constexpr int64_t kPid = 2024;
constexpr int64_t kTid = 2031;      // the OS thread id
constexpr uint32_t kCuptiTid = 777; // what CUPTI calls that thread
constexpr uint64_t t0 = 1'700'000'000'000'000'000;

template <typename T> T blank(CUpti_ActivityKind kind) {
    T r;
    std::memset(&r, 0, sizeof r);
    r.kind = kind;
    return r;
}

CUpti_ActivityAPI call(uint32_t cbid, uint32_t corr, uint64_t start) {
    auto a = blank<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
    a.cbid = cbid, a.correlationId = corr, a.start = start, a.end = start + 4000;
    a.processId = kPid, a.threadId = kCuptiTid;
    return a;
}

CUpti_ActivityMemcpy6 copy(uint8_t src, uint8_t dst, uint8_t kind, uint32_t corr, uint64_t start) {
    auto m = blank<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    m.copyKind = kind, m.srcKind = src, m.dstKind = dst, m.bytes = 1 << 20;
    m.start = start, m.end = start + 50'000, m.deviceId = 0, m.contextId = 1, m.streamId = 7;
    m.correlationId = corr;
    return m;
}

const CUpti_Activity* rec(const void* p) {
    return static_cast<const CUpti_Activity*>(p);
}

size_t sliceNamed(const model::Trace& t, std::string_view name) {
    for (size_t i = 0; i < t.slices().size(); ++i)
        if (t.str(t.slices().name[i]) == name) return i;
    return SIZE_MAX;
}

std::pair<int64_t, int64_t> row(const model::Trace& t, size_t slice) {
    const auto& tr = t.track(t.slices().track[slice]);
    return {t.process(tr.process).key.number, tr.key.number};
}

/// The records of a small training step, converted in two flushes (GPU work before its
/// launch calls in buffer order), as the injection would send them.
struct Step {
    CUpti_ActivityAPI launch = call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, t0);
    CUpti_ActivityAPI h2d = call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, t0 + 10'000);
    CUpti_ActivityAPI d2h = call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 3, t0 + 20'000);
    CUpti_ActivityAPI sync =
        call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 4, t0 + 30'000);
    CUpti_ActivityKernel10 k = blank<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    CUpti_ActivityMemcpy6 pageable =
        copy(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
             CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 2, t0 + 150'000);
    CUpti_ActivityMemcpy6 pinned =
        copy(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
             CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 3, t0 + 210'000);
    CUpti_ActivitySynchronization2 waits =
        blank<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    CUpti_ActivityExternalCorrelation op =
        blank<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    CUpti_ActivityMarker2 rangeStart = blank<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER),
                          rangeEnd{};
    CUpti_ActivityDevice5 dev = blank<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);

    Step() {
        sync.end = t0 + 300'000;
        k.name = "_Z4gemmPKfS0_Pf", k.correlationId = 1, k.start = t0 + 40'000,
        k.end = t0 + 140'000;
        k.deviceId = 0, k.contextId = 1, k.streamId = 7, k.gridX = 80, k.gridY = k.gridZ = 1;
        k.blockX = 256, k.blockY = k.blockZ = 1, k.registersPerThread = 64;
        pinned.streamId = 13;
        waits.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        waits.start = t0 + 31'000, waits.end = t0 + 299'000;
        waits.contextId = 1, waits.streamId = 13, waits.correlationId = 4;
        op.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, op.externalId = 4321,
        op.correlationId = 1;
        rangeStart.flags = CUPTI_ACTIVITY_FLAG_MARKER_START, rangeStart.id = 9,
        rangeStart.timestamp = t0 - 1000;
        rangeStart.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD, rangeStart.name = "train_step";
        rangeStart.objectId.pt.processId = kPid, rangeStart.objectId.pt.threadId = kCuptiTid;
        rangeEnd = rangeStart;
        rangeEnd.flags = CUPTI_ACTIVITY_FLAG_MARKER_END, rangeEnd.timestamp = t0 + 310'000,
        rangeEnd.name = nullptr;
        dev.name = "NVIDIA H200", dev.computeCapabilityMajor = 9, dev.numMultiprocessors = 132;
        dev.numThreadsPerWarp = 32, dev.maxWarpsPerMultiprocessor = 64, dev.isCudaVisible = 1;
        dev.maxRegistersPerMultiprocessor = 65536, dev.maxSharedMemoryPerMultiprocessor = 233472;
        dev.globalMemorySize = 150ull << 30;
    }
    void convert(ActivityConverter& conv) const {
        const CUpti_Activity* first[] = {rec(&dev), rec(&rangeStart), rec(&k), rec(&launch),
                                         rec(&op)};
        const CUpti_Activity* second[] = {rec(&pageable), rec(&pinned), rec(&h2d),     rec(&d2h),
                                          rec(&waits),    rec(&sync),   rec(&rangeEnd)};
        conv.convert(first);
        conv.convert(second);
    }
};

} // namespace

class TestCuptiSession : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::shared_ptr<const model::Trace> m_trace;
    SessionStats m_stats;
    std::string path() const { return m_dir.filePath("cupti.json").toStdString(); }

private Q_SLOTS:
    void initTestCase() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        conv.setThreadMap({{kCuptiTid, kTid}});
        Step().convert(conv);
        CaptureSession s(path());
        std::string error;
        QVERIFY2(test::okOr(s.open(), error), error.c_str());
        const uint32_t src = s.addSource();
        pb::Envelope hello;
        hello.mutable_hello()->set_protocol_version(kProtocolVersion);
        hello.mutable_hello()->set_source("cupti");
        hello.mutable_hello()->set_pid(kPid);
        QVERIFY(s.receive(src, hello));
        for (pb::Device& d : conv.takeDevices()) {
            pb::Envelope e;
            *e.mutable_device() = d;
            QVERIFY(s.receive(src, e));
        }
        uint64_t seq = 0;
        for (pb::Batch& b : conv.takeBatches()) {
            b.set_sequence(seq++);
            pb::Envelope e;
            *e.mutable_batch() = b;
            QVERIFY(s.receive(src, e));
        }
        m_stats = s.stats();
        m_trace = test::valueOr(s.finish(path()), error);
        QVERIFY2(m_trace, error.c_str());
    }
    void everyRecordArrived() {
        QCOMPARE(m_stats.badMessages, uint64_t(0));
        QCOMPARE(m_stats.records, uint64_t(9));
        QCOMPARE(m_stats.gpuActivities, uint64_t(3));
    }
    void gpuWorkOnDeviceStreamRowsLinkedToLaunches() {
        const model::Trace& t = *m_trace;
        const size_t kernel = sliceNamed(t, "gemm(float const*, float const*, float*)");
        QVERIFY(kernel != SIZE_MAX);
        QCOMPARE(t.slices().kind[kernel], model::EventKind::Kernel);
        QCOMPARE(row(t, kernel), std::make_pair(int64_t(0), int64_t(7))); // device 0, stream 7
        QCOMPARE(t.slices().dur[kernel], int64_t(100'000));
        const size_t launchSlice = sliceNamed(t, "cudaLaunchKernel");
        QCOMPARE(row(t, launchSlice), std::make_pair(kPid, kTid)); // the program's own thread
        QCOMPARE(size_t(t.launchOf(model::SliceId(uint32_t(kernel))).value), launchSlice);
        QCOMPARE(capture_test::linkedGpuWork(t), size_t(3)); // kernel and both copies
    }
    void copiesNamedByMemoryKind() {
        const model::Trace& t = *m_trace;
        const size_t pageableCopy = sliceNamed(t, "Memcpy HtoD (Pageable -> Device)");
        const size_t pinnedCopy = sliceNamed(t, "Memcpy DtoH (Device -> Pinned)");
        QVERIFY(pageableCopy != SIZE_MAX && pinnedCopy != SIZE_MAX);
        QCOMPARE(t.slices().kind[pinnedCopy], model::EventKind::Memcpy);
        QCOMPARE(t.slices().extra[pageableCopy], uint64_t(1) << 20); // bytes
        QCOMPARE(row(t, pageableCopy), std::make_pair(int64_t(0), int64_t(7)));
        QCOMPARE(row(t, pinnedCopy), std::make_pair(int64_t(0), int64_t(13)));
    }
    void synchronisationRangesAndDevice() {
        const model::Trace& t = *m_trace;
        const size_t waits = sliceNamed(t, "Stream Sync");
        QCOMPARE(t.slices().kind[waits], model::EventKind::CudaSync);
        QCOMPARE(row(t, waits), std::make_pair(int64_t(0), int64_t(13)));
        const size_t step = sliceNamed(t, "train_step");
        const size_t launch = sliceNamed(t, "cudaLaunchKernel");
        QCOMPARE(t.slices().kind[step], model::EventKind::UserAnnotation);
        QCOMPARE(row(t, step), std::make_pair(kPid, kTid));
        QCOMPARE(t.slices().start[step] + t.slices().dur[step] - t.slices().start[launch],
                 int64_t(310'000));
        QCOMPARE(t.metadata().devices.size(), size_t(1));
        QCOMPARE(t.metadata().devices[0].name, std::string("NVIDIA H200"));
        QCOMPARE(t.metadata().devices[0].numSms, 132);
    }
    void writtenFileReadsBackWithExternalIds() {
        auto again = importers::importFile(path());
        QVERIFY(again);
        QString why;
        QVERIFY2(capture_test::sameTrace(*m_trace, *again.value(), why), qPrintable(why));
        const size_t k = sliceNamed(*again.value(), "gemm(float const*, float const*, float*)");
        std::vector<model::ArgValue> args;
        std::string error;
        QVERIFY(again.value()->sliceArgs(model::SliceId(uint32_t(k)), args, error));
        bool external = false;
        for (const auto& a : args) external |= a.key == "External id" && a.json == "4321";
        QVERIFY(external);
    }
};

QTEST_GUILESS_MAIN(TestCuptiSession)
#include "test_cupti_session.moc"
