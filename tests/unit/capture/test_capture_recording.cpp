// Recording end to end over the real socket: fake sources connect, stream, misbehave
// (corrupt and cut messages, death mid-batch) and the recorder keeps what arrived; target
// processes exit, crash, are stopped, see the environment; --delay/--duration become
// Control START/STOP; snapshots are taken while batches stream in.
#include "capture_test_util.h"
#include "test_support.h"

#include "stallscope/capture/fake_source.h"
#include "stallscope/capture/recorder.h"
#include "stallscope/importers/importer.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <thread>
#include <unistd.h>

using namespace stallscope;
using namespace stallscope::capture;
using Clock = std::chrono::steady_clock;

namespace {

std::shared_ptr<const model::Trace> importOk(const std::filesystem::path& p) {
    auto r = importers::importFile(p);
    if (!r) qWarning("%s", r.error().message.c_str());
    return r ? r.value() : nullptr;
}

bool anyProblemContains(const SessionStats& st, const std::string& what) {
    for (const auto& p : st.problems)
        if (p.find(what) != std::string::npos) return true;
    return false;
}

} // namespace

class TestCaptureRecording : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::filesystem::path path(const char* name) const { return m_dir.filePath(name).toStdString(); }

    /// A recording without a program, fed by one fake source over the socket.
    std::shared_ptr<const model::Trace> recordFake(const FakeSourceOptions& o, const char* out, FakeSourceResult& r,
                                                   RecordStatus& st) {
        Recording rec;
        RecordOptions ro;
        ro.output = path(out);
        std::string error;
        if (!test::okOr(rec.start(ro), error)) return qWarning("%s", error.c_str()), nullptr;
        r = FakeSource(o).playTo(rec.socketPath().string());
        auto trace = test::valueOr(rec.finish(std::chrono::seconds(20)), error);
        st = rec.status();
        if (!trace) qWarning("%s", error.c_str());
        return trace;
    }

private Q_SLOTS:
    void fakeSourceOverTheSocket() {
        FakeSourceOptions o;
        o.steps = 3;
        o.recordsPerBatch = 64;
        FakeSourceResult r;
        RecordStatus st;
        auto trace = recordFake(o, "socket.json", r, st);
        QVERIFY(trace);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(st.session.records, r.recordsSent);
        QCOMPARE(st.session.sources, uint64_t(1));
        QCOMPARE(st.session.badMessages, uint64_t(0));
        QVERIFY(!st.running);
        QVERIFY(st.gpuNote.empty());
        QVERIFY(!std::filesystem::exists(path("socket.json.partial.json")));
        auto again = importOk(path("socket.json"));
        QVERIFY(again);
        QString why;
        QVERIFY2(capture_test::sameTrace(*trace, *again, why), qPrintable(why));
        QCOMPARE(capture_test::linkedGpuWork(*again), size_t(r.kernels + r.copies));
    }

    void corruptAndCutMessagesAreReportedNotFatal() {
        FakeSourceOptions o;
        o.steps = 3;
        o.recordsPerBatch = 40;
        o.corruptAfterBatch = 0;
        o.cutAfterBatch = 2;
        o.unknownStringInBatch = 3;
        FakeSourceResult r;
        RecordStatus st;
        auto trace = recordFake(o, "corrupt.json.gz", r, st);
        QVERIFY(trace);
        QCOMPARE(st.session.badMessages, uint64_t(3));
        QVERIFY(anyProblemContains(st.session, "does not parse"));
        QCOMPARE(st.session.records, r.recordsSent - 1);  // all but the one with the unknown string
        QCOMPARE(trace->slices().size(), size_t(r.recordsSent - 1));
        QCOMPARE(st.session.missingBatches, uint64_t(0));
    }

    void sourceDyingMidBatchLeavesWhatArrived() {
        FakeSourceOptions o;
        o.steps = 4;
        o.recordsPerBatch = 50;
        o.dieInBatch = 3;
        FakeSourceResult r;
        RecordStatus st;
        auto trace = recordFake(o, "died.json", r, st);
        QVERIFY(trace);
        QCOMPARE(r.batchesSent, uint64_t(3));
        QCOMPARE(st.session.records, r.recordsSent);
        QCOMPARE(st.session.badMessages, uint64_t(1));
        QVERIFY(anyProblemContains(st.session, "ends inside"));
        auto again = importOk(path("died.json"));
        QVERIFY(again);
        QCOMPARE(again->slices().size(), size_t(r.recordsSent));
        QCOMPARE(again->diagnostics().total(), uint64_t(0));
    }

    void targetExitCodeAndNoGpuNote() {
        Recording rec;
        RecordOptions ro;
        ro.command = {"/bin/sh", "-c", "exit 3"};
        ro.output = path("exit3.json");
        std::string error;
        QVERIFY2(test::okOr(rec.start(ro), error), error.c_str());
        auto trace = test::valueOr(rec.finish(std::chrono::seconds(20)), error);
        QVERIFY2(trace, error.c_str());
        const RecordStatus st = rec.status();
        QCOMPARE(st.exitCode, 3);
        QCOMPARE(st.exitDescription, std::string("exited with 3"));
        QVERIFY(!st.running);
        QVERIFY(!st.gpuNote.empty());
        QVERIFY2(st.gpuNote.find("no GPU") != std::string::npos, st.gpuNote.c_str());
        QCOMPARE(trace->slices().size(), size_t(0));
        auto again = importOk(path("exit3.json"));
        QVERIFY(again);
        QCOMPARE(again->slices().size(), size_t(0));
        std::string stats;
        for (const auto& [k, v] : again->metadata().other)
            if (k == "stallscope") stats = v;
        QVERIFY2(stats.find("\"exit_code\":3") != std::string::npos, stats.c_str());
        QVERIFY(stats.find("\"gpu_note\"") != std::string::npos);
    }

    void targetKilledBySignal() {
        Recording rec;
        RecordOptions ro;
        ro.command = {"/bin/sh", "-c", "kill -SEGV $$"};
        ro.output = path("segv.json");
        std::string error;
        QVERIFY(test::okOr(rec.start(ro), error));
        QVERIFY(test::valueOr(rec.finish(std::chrono::seconds(20)), error));
        QCOMPARE(rec.status().exitCode, 128 + 11);
        QVERIFY2(rec.status().exitDescription.find("killed by SIGSEGV") == 0, rec.status().exitDescription.c_str());
    }

    void stopEndsTheTarget() {
        Recording rec;
        RecordOptions ro;
        ro.command = {"sleep", "30"};
        ro.output = path("stopped.json");
        std::string error;
        QVERIFY(test::okOr(rec.start(ro), error));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        QVERIFY(rec.status().running);
        QVERIFY(rec.status().recording);
        const auto t0 = Clock::now();
        rec.stop();
        QVERIFY(test::valueOr(rec.finish(std::chrono::seconds(20)), error));
        QVERIFY(Clock::now() - t0 < std::chrono::seconds(5));
        QCOMPARE(rec.status().exitDescription, std::string("killed by SIGINT"));
        QCOMPARE(rec.status().exitCode, 130);
    }

    void targetSeesTheSocketAndTheEnvironment() {
        Recording rec;
        RecordOptions ro;
        ro.command = {"/bin/sh", "-c", "test -S \"$STALLSCOPE_CAPTURE_SOCKET\" && test \"$FOO\" = bar && test \"$(pwd)\" = /"};
        ro.environment = {{"FOO", "bar"}};
        ro.workingDirectory = "/";
        ro.output = path("env.json");
        std::string error;
        QVERIFY(test::okOr(rec.start(ro), error));
        QVERIFY(test::valueOr(rec.finish(std::chrono::seconds(20)), error));
        QCOMPARE(rec.status().exitCode, 0);
    }

    void commandThatDoesNotExist() {
        Recording rec;
        RecordOptions ro;
        ro.command = {"stallscope-no-such-program-here"};
        ro.output = path("missing.json");
        std::string error;
        QVERIFY(!test::okOr(rec.start(ro), error));
        QVERIFY2(error.find("cannot start 'stallscope-no-such-program-here'") == 0, error.c_str());
        QVERIFY(!std::filesystem::exists(path("missing.json.partial.json")));
        ro.command = {"true"};
        ro.output = path("no/such/dir/x.json");
        QVERIFY(!test::okOr(Recording().start(ro), error));
        QVERIFY2(error.find("cannot create") != std::string::npos, error.c_str());
        ro.output = path("readonly.json");
        QVERIFY(QFile(m_dir.filePath("readonly.json")).open(QIODevice::WriteOnly));
        std::filesystem::permissions(ro.output, std::filesystem::perms::owner_read);
        if (::access(ro.output.c_str(), W_OK) == 0) return;  // root writes anyway
        QVERIFY(!test::okOr(Recording().start(ro), error));
        QVERIFY2(error.find("read-only") != std::string::npos, error.c_str());
    }

    void delayAndDurationBecomeStartAndStop() {
        Recording rec;
        RecordOptions ro;
        ro.output = path("window.json");
        ro.delaySeconds = 0.3;
        ro.durationSeconds = 0.5;
        std::string error;
        QVERIFY(test::okOr(rec.start(ro), error));
        FakeSourceOptions o;
        o.steps = 1000;
        o.realTime = true;
        o.waitForStart = true;
        o.dataLoadingMs = 2;
        const auto t0 = Clock::now();
        const FakeSourceResult r = FakeSource(o).playTo(rec.socketPath().string());
        const double played = std::chrono::duration<double>(Clock::now() - t0).count();
        QVERIFY2(r.ok, r.error.c_str());
        QVERIFY2(played > 0.7 && played < 5, qPrintable(QString::number(played)));
        QVERIFY(r.steps > 5 && r.steps < 1000);
        auto trace = test::valueOr(rec.finish(std::chrono::seconds(20)), error);
        QVERIFY(trace);
        QCOMPARE(rec.status().session.records, r.recordsSent);
        QVERIFY(rec.status().elapsedSeconds >= 0.75);
    }

    void snapshotsWhileBatchesStreamIn() {
        Recording rec;
        RecordOptions ro;
        ro.output = path("live.json.gz");
        std::string error;
        QVERIFY(test::okOr(rec.start(ro), error));
        std::vector<std::thread> sources;
        std::vector<FakeSourceResult> results(2);
        for (int i = 0; i < 2; ++i)
            sources.emplace_back([&, i] {
                FakeSourceOptions o;
                o.steps = 30, o.realTime = true, o.dataLoadingMs = 3, o.pid = 500 + i, o.device = i;
                o.recordsPerBatch = 20;
                results[size_t(i)] = FakeSource(o).playTo(rec.socketPath().string());
            });
        size_t snapshots = 0, last = 0;
        while (rec.status().session.sources < 2 || rec.status().running) {
            auto t = rec.snapshot();
            QVERIFY(t);
            QVERIFY(t->slices().size() >= last);
            last = t->slices().size();
            ++snapshots;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        for (auto& th : sources) th.join();
        auto trace = test::valueOr(rec.finish(std::chrono::seconds(20)), error);
        QVERIFY2(trace, error.c_str());
        QVERIFY(snapshots > 10);
        QCOMPARE(trace->slices().size(), size_t(results[0].recordsSent + results[1].recordsSent));
    }
};

QTEST_GUILESS_MAIN(TestCaptureRecording)
#include "test_capture_recording.moc"
