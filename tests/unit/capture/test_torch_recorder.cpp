// The LibTorch recorder: RecordFunction callbacks -> capture envelopes (names, times,
// nesting, shapes, sequence numbers, threads, string table, drops), and the same through a
// CaptureSession into a trace the importer reads. No LibTorch header here: the operators
// come from stallscope_torch's runSampleOperators().
#include "test_support.h"

#include "stallscope/capture/session.h"
#include "stallscope/importers/importer.h"
#include "stallscope/torch/sample_ops.h"
#include "stallscope/torch/torch_recorder.h"

#include <QTest>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace stallscope;
namespace pb = stallscope::capture::pb;
using torchrec::RecorderOptions;
using torchrec::TorchRecorder;

namespace {

class CollectingSink final : public capture::EnvelopeSink {
public:
    bool send(const pb::Envelope& e) override {
        std::lock_guard lock(m_mutex);
        m_envelopes.push_back(e);
        return true;
    }
    std::vector<pb::Envelope> envelopes() const {
        std::lock_guard lock(m_mutex);
        return m_envelopes;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<pb::Envelope> m_envelopes;
};

struct Op {
    std::string name;
    bool user = false;
    int64_t start = 0, end = 0, tid = 0, seq = -1;
    uint32_t depth = 0;
    uint64_t externalId = 0;
    std::string shapes;
};

struct Decoded {
    std::vector<pb::Hello> hellos;
    std::vector<pb::Bye> byes;
    std::vector<Op> ops;
    std::map<int64_t, std::string> threads;
    uint64_t dropped = 0, batches = 0;
    bool sequenceContiguous = true, stringsUnique = true, idsValid = true, envelopeAfterBye = false;
};

Decoded decode(const std::vector<pb::Envelope>& envs) {
    Decoded d;
    std::vector<std::string> strings;
    std::set<std::string> seen;
    for (const pb::Envelope& e : envs) {
        if (!d.byes.empty()) d.envelopeAfterBye = true;
        if (e.has_hello()) d.hellos.push_back(e.hello());
        if (e.has_bye()) d.byes.push_back(e.bye());
        if (e.has_thread_name()) d.threads[e.thread_name().tid()] = e.thread_name().name();
        if (!e.has_batch()) continue;
        const pb::Batch& b = e.batch();
        d.sequenceContiguous &= b.sequence() == d.batches;
        ++d.batches;
        d.dropped += b.dropped_records();
        for (const std::string& s : b.new_strings()) {
            d.stringsUnique &= seen.insert(s).second;
            strings.push_back(s);
        }
        for (const pb::Activity& a : b.activities()) {
            d.idsValid &= a.name_id() < strings.size();
            if (a.name_id() >= strings.size()) continue;
            d.ops.push_back(Op{strings[a.name_id()], a.kind() == pb::Activity::USER_ANNOTATION,
                               a.start_ns(), a.end_ns(), a.tid(), a.sequence_number(),
                               a.depth_hint(), a.external_id(), a.input_shapes()});
        }
    }
    return d;
}

std::vector<const Op*> named(const Decoded& d, const std::string& name) {
    std::vector<const Op*> out;
    for (const Op& o : d.ops)
        if (o.name == name) out.push_back(&o);
    return out;
}

/// The forward aten::mm of runSampleOperators() (the backward pass runs two more mm).
constexpr const char* kForwardMmShapes = "[[8, 16], [16, 4]]";

std::vector<const Op*> forwardMms(const Decoded& d) {
    std::vector<const Op*> out;
    for (const Op* o : named(d, "aten::mm"))
        if (o->shapes == kForwardMmShapes) out.push_back(o);
    return out;
}

int64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t gettidNow() {
    return static_cast<int64_t>(syscall(SYS_gettid));
}

std::string withoutSpaces(std::string s) {
    std::erase(s, ' ');
    return s;
}

bool inside(const Op& inner, const Op& outer) {
    return inner.start >= outer.start && inner.end <= outer.end;
}

} // namespace

class TestTorchRecorder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recordsOperatorsShapesAndSequenceNumbers() {
        CollectingSink sink;
        TorchRecorder rec;
        std::string error;
        const int64_t t0 = nowNs();
        QVERIFY2(test::okOr(rec.start(sink), error), error.c_str());
        QVERIFY(rec.recording());
        QCOMPARE(torchrec::runSampleOperators("sample"), 512.0);
        rec.stop();
        const int64_t t1 = nowNs();
        QVERIFY(!rec.recording());
        const Decoded d = decode(sink.envelopes());

        QCOMPARE(d.hellos.size(), size_t(1));
        QCOMPARE(d.hellos[0].source(), std::string("libtorch"));
        QCOMPARE(d.hellos[0].pid(), int64_t(getpid()));
        QCOMPARE(d.hellos[0].protocol_version(), capture::kProtocolVersion);
        QVERIFY(d.sequenceContiguous && d.stringsUnique && d.idsValid);

        const auto ranges = named(d, "sample");
        const auto mms = forwardMms(d);
        const auto relus = named(d, "aten::relu");
        QCOMPARE(ranges.size(), size_t(1));
        QCOMPARE(mms.size(), size_t(1));
        QVERIFY(named(d, "aten::mm").size() >= 3); // + the backward pass's
        QCOMPARE(relus.size(), size_t(1));
        const Op& range = *ranges[0];
        const Op& mm = *mms[0];
        QVERIFY(range.user && !mm.user);
        QCOMPARE(relus[0]->shapes, std::string("[[8, 4]]"));
        QVERIFY(range.shapes.empty()); // user ranges have no inputs
        // Times: CLOCK_REALTIME, nested by time and by depth, on this thread.
        QVERIFY(t0 <= range.start && range.end <= t1);
        QVERIFY(mm.start < mm.end);
        QVERIFY(inside(mm, range) && inside(*relus[0], range));
        QVERIFY(mm.end <= relus[0]->start); // relu(mm(...)): mm ran first
        QVERIFY(mm.depth > range.depth);
        QCOMPARE(mm.tid, gettidNow());
        QCOMPARE(range.tid, gettidNow());
        QVERIFY(d.threads.count(gettidNow()));
        QVERIFY(mm.externalId != 0 && mm.externalId != range.externalId);
        // The forward op and its backward node share the autograd sequence number.
        QVERIFY(mm.seq >= 0);
        bool backwardMatched = false;
        for (const Op& o : d.ops)
            backwardMatched |= o.name.find("MmBackward0") != std::string::npos && o.seq == mm.seq;
        QVERIFY2(backwardMatched, "no MmBackward0 node with aten::mm's sequence number");
        // Bye closes the stream with the totals.
        QCOMPARE(d.byes.size(), size_t(1));
        QCOMPARE(d.byes[0].reason(), pb::Bye::STOPPED);
        QCOMPARE(d.byes[0].total_records(), uint64_t(d.ops.size()));
        QCOMPARE(d.byes[0].total_dropped(), uint64_t(0));
        QVERIFY(!d.envelopeAfterBye);
        QCOMPARE(rec.stats().records, uint64_t(d.ops.size()));
        QCOMPARE(rec.stats().batches, d.batches);
    }

    void stepRangesTileTheLoop() {
        CollectingSink sink;
        TorchRecorder rec;
        std::string error;
        QVERIFY2(test::okOr(rec.start(sink), error), error.c_str());
        for (int i = 0; i < 3; ++i) {
            rec.step(i);
            QCOMPARE(torchrec::runSampleOperators(), 512.0);
        }
        rec.endStep();
        rec.stop();
        const Decoded d = decode(sink.envelopes());
        const auto mms = forwardMms(d);
        QCOMPARE(mms.size(), size_t(3));
        int64_t previousEnd = 0;
        for (int i = 0; i < 3; ++i) {
            const auto s = named(d, "ProfilerStep#" + std::to_string(i));
            QCOMPARE(s.size(), size_t(1));
            QVERIFY(s[0]->user);
            QVERIFY(s[0]->start >= previousEnd);
            QVERIFY(inside(*mms[size_t(i)], *s[0]));
            previousEnd = s[0]->end;
        }
    }

    void recordsOtherThreadsUnderTheirNames() {
        CollectingSink sink;
        TorchRecorder rec;
        std::string error;
        QVERIFY2(test::okOr(rec.start(sink), error), error.c_str());
        int64_t workerTid = 0;
        std::thread worker([&] {
            pthread_setname_np(pthread_self(), "torch-test-w");
            workerTid = gettidNow();
            torchrec::runSampleOperators("on worker");
        });
        worker.join();
        torchrec::runSampleOperators("on main");
        rec.stop();
        const Decoded d = decode(sink.envelopes());
        QCOMPARE(rec.stats().threads, uint64_t(2));
        QCOMPARE(d.threads.at(workerTid), std::string("torch-test-w"));
        const auto w = named(d, "on worker"), m = named(d, "on main");
        QCOMPARE(w.size(), size_t(1));
        QCOMPARE(m.size(), size_t(1));
        QCOMPARE(w[0]->tid, workerTid);
        QCOMPARE(m[0]->tid, gettidNow());
        size_t mmOnWorker = 0;
        for (const Op* o : forwardMms(d)) mmOnWorker += o->tid == workerTid;
        QCOMPARE(mmOnWorker, size_t(1));
    }

    void flushesPeriodicallyWhileRecording() {
        CollectingSink sink;
        RecorderOptions o;
        o.flushIntervalMs = 20;
        TorchRecorder rec(o);
        std::string error;
        QVERIFY2(test::okOr(rec.start(sink), error), error.c_str());
        torchrec::runSampleOperators();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const Decoded before = decode(sink.envelopes()); // not stopped yet
        QVERIFY(before.batches >= 1);
        QVERIFY(!named(before, "aten::mm").empty());
        rec.stop();
    }

    void fullBuffersDropAndCount() {
        CollectingSink sink;
        RecorderOptions o;
        o.threadBufferRecords = 16;
        o.flushIntervalMs = 60'000; // nothing drains the buffer before stop()
        TorchRecorder rec(o);
        std::string error;
        QVERIFY2(test::okOr(rec.start(sink), error), error.c_str());
        for (int i = 0; i < 10; ++i) torchrec::runSampleOperators();
        rec.stop();
        const Decoded d = decode(sink.envelopes());
        const auto st = rec.stats();
        QCOMPARE(st.records, uint64_t(16));
        QCOMPARE(d.ops.size(), size_t(16));
        QVERIFY(st.dropped > 50);
        QCOMPARE(d.dropped, st.dropped);
        QCOMPARE(d.byes.at(0).total_dropped(), st.dropped);
    }

    void oneRecorderPerProcessAndNothingAfterStop() {
        CollectingSink a, b;
        TorchRecorder first, second;
        std::string error;
        QVERIFY2(test::okOr(first.start(a), error), error.c_str());
        QVERIFY(!test::okOr(second.start(b), error));
        QVERIFY(error.find("another TorchRecorder") != std::string::npos);
        QVERIFY(b.envelopes().empty());
        first.stop();
        first.stop(); // idempotent
        const size_t sent = a.envelopes().size();
        torchrec::runSampleOperators();
        { torchrec::UserRange r("not recorded"); }
        QCOMPARE(a.envelopes().size(), sent);
        QVERIFY2(test::okOr(second.start(b), error), error.c_str()); // free again
        torchrec::runSampleOperators();
        second.stop();
        QCOMPARE(forwardMms(decode(b.envelopes())).size(), size_t(1));
    }

    void sessionWritesATraceTheImporterReads() {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("stallscope-torchrec-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        const auto out = dir / "recorded.json";
        capture::CaptureSession session(out);
        std::string error;
        const base::Status opened = session.open();
        QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
        TorchRecorder rec;
        QVERIFY2(test::okOr(rec.start(session), error), error.c_str());
        for (int i = 0; i < 2; ++i) {
            rec.step(i);
            torchrec::runSampleOperators();
        }
        rec.stop();
        const auto finished = session.finish(out);
        QVERIFY2(finished && finished.value(), finished ? "" : finished.error().message.c_str());
        auto imported = importers::importFile(out);
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().message.c_str());
        const model::Trace& t = **imported;
        size_t relu = 0, steps = 0, forwardMm = 0;
        const auto& s = t.slices();
        std::vector<model::ArgValue> args;
        for (uint32_t i = 0; i < s.size(); ++i) {
            const std::string_view n = t.str(s.name[i]);
            if (n == "aten::relu" && s.kind[i] == model::EventKind::CpuOp) ++relu;
            if (n.substr(0, 13) == "ProfilerStep#" && s.kind[i] == model::EventKind::UserAnnotation)
                ++steps;
            if (n != "aten::mm" || !t.sliceArgs(model::SliceId(i), args, error)) continue;
            for (const auto& a : args)
                forwardMm += a.key == "Input Dims" && withoutSpaces(a.json) == "[[8,16],[16,4]]";
        }
        QCOMPARE(relu, size_t(2));
        QCOMPARE(steps, size_t(2));
        QCOMPARE(forwardMm, size_t(2)); // the shapes reach the trace's args
        std::filesystem::remove_all(dir);
    }
};

QTEST_GUILESS_MAIN(TestTorchRecorder)
#include "test_torch_recorder.moc"
