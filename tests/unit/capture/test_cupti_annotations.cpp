// NVTX markers (push/pop pairs across flushes, marks, domains, unmatched ends, the bound on
// open ranges), CUPTI overheads and device descriptions through the injection's converter.
#include "stallscope_cupti_convert.h"

#include <cupti.h>

#include <QTest>

#include <cstring>
#include <string>
#include <vector>

using namespace stallscope::capture;
using namespace stallscope::capture::cupti;

namespace {

constexpr int64_t kPid = 31337;

CUpti_ActivityMarker2 marker(uint32_t id, CUpti_ActivityFlag flag, uint64_t ts, const char* name,
                             const char* domain = nullptr, uint32_t thread = 5) {
    CUpti_ActivityMarker2 m;
    std::memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = flag;
    m.timestamp = ts;
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = kPid;
    m.objectId.pt.threadId = thread;
    m.name = name;
    m.domain = domain;
    return m;
}

const CUpti_Activity* rec(const void* r) {
    return static_cast<const CUpti_Activity*>(r);
}

struct Received {
    std::vector<std::string> strings;
    std::vector<pb::Activity> activities;
    void take(std::vector<pb::Batch> batches) {
        for (pb::Batch& b : batches) {
            for (const std::string& s : b.new_strings()) strings.push_back(s);
            for (const pb::Activity& a : b.activities()) activities.push_back(a);
        }
    }
    std::string name(size_t i) const { return strings.at(activities.at(i).name_id()); }
    std::string category(size_t i) const { return strings.at(activities.at(i).category_id()); }
};

} // namespace

class TestCuptiAnnotations : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void pushPopPairAcrossFlushesIsOneRange() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        conv.setThreadMap({{5u, 4711}});
        auto start = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 1000, "forward");
        auto end = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 9000, nullptr);
        const CUpti_Activity* first[] = {rec(&start)};
        conv.convert(first);
        QVERIFY(conv.takeBatches().empty()); // still open
        QCOMPARE(conv.openMarkers(), size_t(1));
        const CUpti_Activity* second[] = {rec(&end)};
        conv.convert(second);
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        const pb::Activity& a = r.activities[0];
        QCOMPARE(a.kind(), pb::Activity::NVTX_RANGE);
        QCOMPARE(r.name(0), std::string("forward"));
        QCOMPARE(r.category(0), std::string("user_annotation"));
        QCOMPARE(a.start_ns(), int64_t(1000));
        QCOMPARE(a.end_ns(), int64_t(9000));
        QCOMPARE(a.pid(), kPid);
        QCOMPARE(a.tid(), int64_t(4711)); // the OS thread id
        QCOMPARE(conv.openMarkers(), size_t(0));
    }
    void nestedRangesDomainsAndMarks() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        auto outerStart = marker(10, CUPTI_ACTIVITY_FLAG_MARKER_START, 100, "step");
        auto innerStart =
            marker(11, CUPTI_ACTIVITY_FLAG_MARKER_START, 200, "ncclAllReduce", "NCCL");
        auto mark = marker(12, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 250, "checkpoint");
        auto innerEnd = marker(11, CUPTI_ACTIVITY_FLAG_MARKER_END, 300, nullptr);
        auto outerEnd = marker(10, CUPTI_ACTIVITY_FLAG_MARKER_END, 400, nullptr);
        const CUpti_Activity* all[] = {rec(&outerStart), rec(&innerStart), rec(&mark),
                                       rec(&innerEnd), rec(&outerEnd)};
        conv.convert(all);
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(3));
        QCOMPARE(r.name(0), std::string("checkpoint"));
        QCOMPARE(r.activities[0].kind(), pb::Activity::NVTX_MARK);
        QCOMPARE(r.category(0), std::string("cpu_instant_event"));
        QCOMPARE(r.activities[0].start_ns(), r.activities[0].end_ns());
        QCOMPARE(r.name(1), std::string("NCCL: ncclAllReduce"));
        QCOMPARE(std::make_pair(r.activities[1].start_ns(), r.activities[1].end_ns()),
                 std::make_pair(int64_t(200), int64_t(300)));
        QCOMPARE(r.name(2), std::string("step"));
        QCOMPARE(r.activities[2].end_ns(), int64_t(400));
    }
    void unmatchedEndsAndOverflowAreCounted() {
        DropLedger drops;
        ActivityConverter conv({.maxOpenMarkers = 2}, drops);
        auto orphan = marker(99, CUPTI_ACTIVITY_FLAG_MARKER_END, 50, nullptr);
        auto a = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 100, "a");
        auto b = marker(2, CUPTI_ACTIVITY_FLAG_MARKER_START, 110, "b");
        auto c = marker(3, CUPTI_ACTIVITY_FLAG_MARKER_START, 120, "c"); // forgets "a"
        auto endA = marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 130, nullptr);
        auto endC = marker(3, CUPTI_ACTIVITY_FLAG_MARKER_END, 140, nullptr);
        const CUpti_Activity* all[] = {rec(&orphan), rec(&a),    rec(&b),
                                       rec(&c),      rec(&endA), rec(&endC)};
        conv.convert(all);
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(1));
        QCOMPARE(r.name(0), std::string("c"));
        QCOMPARE(drops.total(DropLedger::Cause::MarkerOverflow), uint64_t(1));
        QCOMPARE(drops.total(DropLedger::Cause::MarkerWithoutStart), uint64_t(2)); // 99, and 1
        QCOMPARE(conv.openMarkers(), size_t(1));                                   // "b"
    }
    void manyClosedRangesBehindALongOneStayBounded() {
        MarkerPairer pairer(8);
        pairer.start(1, OpenMarker{"epoch", 0, 0, 0});
        for (uint32_t i = 2; i < 100000; ++i) {
            QCOMPARE(pairer.start(i, OpenMarker{"op", 0, 0, 0}), size_t(0));
            QVERIFY(pairer.end(i).has_value());
        }
        QCOMPARE(pairer.open(), size_t(1));
        QVERIFY(pairer.end(1).has_value()); // the long range was never forgotten
    }
    void overheadRows() {
        DropLedger drops;
        ActivityConverter conv({.pid = kPid}, drops);
        conv.setThreadMap({{8u, 808}});
        CUpti_ActivityOverhead3 flush, inst;
        std::memset(&flush, 0, sizeof flush);
        flush.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
        flush.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
        flush.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        flush.objectId.pt.processId = kPid;
        flush.objectId.pt.threadId = 8;
        flush.start = 10, flush.end = 20;
        inst = flush;
        inst.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION;
        inst.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
        inst.objectId.dcs.deviceId = 1, inst.objectId.dcs.contextId = 2,
        inst.objectId.dcs.streamId = 3;
        inst.correlationId = 77;
        const CUpti_Activity* all[] = {rec(&flush), rec(&inst)};
        conv.convert(all);
        Received r;
        r.take(conv.takeBatches());
        QCOMPARE(r.activities.size(), size_t(2));
        QCOMPARE(r.name(0), std::string("Buffer Flush"));
        QCOMPARE(r.category(0), std::string("overhead"));
        QCOMPARE(r.activities[0].kind(), pb::Activity::OVERHEAD);
        QCOMPARE(std::make_pair(r.activities[0].pid(), r.activities[0].tid()),
                 std::make_pair(kPid, int64_t(808)));
        QCOMPARE(r.name(1), std::string("Instrumentation"));
        QCOMPARE(std::make_tuple(r.activities[1].device(), r.activities[1].context(),
                                 r.activities[1].stream()),
                 std::make_tuple(1, 2, 3));
        QCOMPARE(r.activities[1].correlation(), 77u);
    }
    void devicesAreDescribedOnce() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        CUpti_ActivityDevice5 d;
        std::memset(&d, 0, sizeof d);
        d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
        d.id = 0;
        d.name = "NVIDIA H200";
        d.computeCapabilityMajor = 9, d.computeCapabilityMinor = 0;
        d.globalMemorySize = 150ull << 30;
        d.numMultiprocessors = 132;
        d.numThreadsPerWarp = 32;
        d.maxWarpsPerMultiprocessor = 64;
        d.maxRegistersPerMultiprocessor = 65536;
        d.maxSharedMemoryPerMultiprocessor = 233472;
        d.isCudaVisible = 1;
        CUpti_ActivityDevice5 again = d;
        again.numMultiprocessors = 133; // a later description replaces the earlier one
        CUpti_ActivityDevice5 hidden = d;
        hidden.id = 1, hidden.isCudaVisible = 0; // outside CUDA_VISIBLE_DEVICES
        const CUpti_Activity* all[] = {rec(&d), rec(&again), rec(&hidden)};
        conv.convert(all);
        const std::vector<pb::Device> devices = conv.takeDevices();
        QCOMPARE(devices.size(), size_t(1));
        const pb::Device& x = devices[0];
        QCOMPARE(x.id(), 0);
        QCOMPARE(x.name(), std::string("NVIDIA H200"));
        QCOMPARE(std::make_pair(x.compute_major(), x.compute_minor()), std::make_pair(9, 0));
        QCOMPARE(x.total_memory(), int64_t(150) << 30);
        QCOMPARE(x.num_sms(), 133);
        QCOMPARE(x.max_threads_per_sm(), 2048);
        QCOMPARE(x.max_registers_per_sm(), 65536);
        QCOMPARE(x.shared_memory_per_sm(), int64_t(233472));
        QCOMPARE(x.warp_size(), 32);
        QVERIFY(conv.takeDevices().empty());
        QVERIFY(conv.takeBatches().empty()); // descriptions are not activities
    }
    void otherKindsAreCountedNotConverted() {
        DropLedger drops;
        ActivityConverter conv({}, drops);
        CUpti_ActivityMarkerData2 data;
        std::memset(&data, 0, sizeof data);
        data.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
        const CUpti_Activity* all[] = {rec(&data), nullptr};
        conv.convert(all);
        QCOMPARE(conv.counters().records, uint64_t(1));
        QCOMPARE(conv.counters().otherKinds, uint64_t(1));
        QVERIFY(conv.takeBatches().empty());
    }
};

QTEST_APPLESS_MAIN(TestCuptiAnnotations)
#include "test_cupti_annotations.moc"
