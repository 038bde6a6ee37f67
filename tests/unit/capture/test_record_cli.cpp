// `stallscope-cli record` as a user runs it: exit codes, the written trace, the findings,
// --duration, Ctrl-C, usage and output errors, and `--version`.
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/importers/importer.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace stallscope;

class TestRecordCli : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString cli() const { return qEnvironmentVariable("STALLSCOPE_CLI"); }
    int run(const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr, int timeoutMs = 60000) {
        QProcess p;
        p.start(cli(), args);
        if (!p.waitForFinished(timeoutMs)) return -1;
        if (out) *out = p.readAllStandardOutput();
        if (err) *err = p.readAllStandardError();
        return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    }
    std::shared_ptr<const model::Trace> load(const QString& path) {
        auto r = importers::importFile(path.toStdString());
        return r ? r.value() : nullptr;
    }

private Q_SLOTS:
    void initTestCase() {
        if (cli().isEmpty()) QSKIP("STALLSCOPE_CLI is not set (run through ctest)");
    }

    void versionSaysWhetherCaptureIsBuilt() {
        QByteArray out;
        QCOMPARE(run({"--version"}, &out), 0);
        QVERIFY2(out.contains("live GPU capture: built") || out.contains("live GPU capture: not built"), out.constData());
    }

    void targetExitCodeAndAnEmptyTrace() {
        const QString path = m_dir.filePath("exit3.json");
        QByteArray out, err;
        QCOMPARE(run({"record", "-o", path, "--", "/bin/sh", "-c", "echo from-the-target; exit 3"}, &out, &err), 3);
        QVERIFY2(out.contains("from-the-target"), out.constData());
        QVERIFY(out.contains("the program exited with 3"));
        QVERIFY(out.contains("Wrote " + path.toUtf8()));
        QVERIFY2(out.contains("note: no GPU"), out.constData());
        auto t = load(path);
        QVERIFY(t);
        QCOMPARE(t->slices().size(), size_t(0));
        QVERIFY(!QFile::exists(path + ".partial.json"));
    }

    void fakeSourceGzipAndFindings() {
        const QString path = m_dir.filePath("fake.pt.trace.json.gz");
        QByteArray out, err;
        QCOMPARE(run({"record", "--fake-source", "-o", path}, &out, &err), 0);
        QVERIFY2(out.contains("Top findings:"), out.constData());
        QVERIFY(out.contains("saves ") || out.contains("no fix to replay"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.read(2), QByteArray("\x1f\x8b"));
        auto t = load(path);
        QVERIFY(t);
        const auto r = analysis::analyze(*t);
        QVERIFY(!r.findings.empty());
        QCOMPARE(r.findings.front().kind, analysis::FindingKind::DataLoading);
        QCOMPARE(r.steps.size(), size_t(20));
    }

    void durationStopsTheTarget() {
        const QString path = m_dir.filePath("duration.json");
        QElapsedTimer timer;
        timer.start();
        QByteArray out;
        QCOMPARE(run({"record", "--duration", "0.3", "-o", path, "--", "sleep", "30"}, &out), 130);
        QVERIFY(timer.elapsed() < 8000);
        QVERIFY2(out.contains("killed by SIGINT"), out.constData());
        QVERIFY(load(path));
    }

    void interruptStopsTheRecording() {
        const QString path = m_dir.filePath("interrupted.json");
        QProcess p;
        p.start(cli(), {"record", "-o", path, "--", "sleep", "30"});
        QVERIFY(p.waitForStarted());
        QTest::qWait(300);
        QElapsedTimer timer;
        timer.start();
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);  // like Ctrl-C, but only to the recorder
        QVERIFY(p.waitForFinished(15000));
        QVERIFY(timer.elapsed() < 8000);
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);  // the program was stopped with SIGINT
        QVERIFY(p.readAllStandardError().contains("stopping"));
        QVERIFY(load(path));
    }

    void demoRecordedThroughTheRecorder() {
        QByteArray version;
        QCOMPARE(run({"--version"}, &version), 0);
        if (version.contains("record --demo): not built")) QSKIP("built without LibTorch: no demos");
        const QString path = m_dir.filePath("demo.json.gz");
        QByteArray out, err;
        QCOMPARE(run({"record", "--demo", "dataloader", "--steps", "12", "-o", path}, &out, &err), 0);
        // The demo program joined the recording through the socket; the CLI wrote and
        // analysed the trace: the data-loading stall is found without GPU rows.
        QVERIFY2(out.contains("sent to the enclosing recording"), out.constData());
        QVERIFY2(out.contains("0 bad messages"), out.constData());
        QVERIFY2(out.contains("Steps wait for the input pipeline"), out.constData());
        QVERIFY(out.contains("data_loading"));
        const auto t = load(path);
        QVERIFY(t);
        size_t steps = 0;
        for (uint32_t i = 0; i < t->slices().size(); ++i) steps += t->str(t->slices().name[i]).substr(0, 13) == "ProfilerStep#";
        QCOMPARE(steps, size_t(12));
        QCOMPARE(run({"record", "--demo", "no-such-demo", "-o", m_dir.filePath("none.json")}, &out, &err), 1);
        QVERIFY2(out.contains("dataloader-fixed") || err.contains("dataloader-fixed"), err.constData());  // the list
        QCOMPARE(run({"record", "--demo", "list"}, &out), 0);
        QVERIFY(out.contains("item-sync-fixed"));
        QCOMPARE(run({"record", "--demo", "dataloader", "--", "true"}), 2);
        QCOMPARE(run({"record", "--steps", "3", "--", "true"}), 2);
    }

    void cudaProfilerRangeReachesTheProgram() {
        // The injection library reads it from the program's environment.
        QByteArray out;
        QCOMPARE(run({"record", "--cuda-profiler-range", "-o", m_dir.filePath("range.json"), "--", "/bin/sh", "-c",
                      "echo range=$STALLSCOPE_CAPTURE_PROFILER_RANGE"},
                     &out),
                 0);
        QVERIFY2(out.contains("range=1"), out.constData());
    }

    void usageErrorsExitTwo() {
        QByteArray err;
        QCOMPARE(run({"record"}, nullptr, &err), 2);
        QVERIFY(err.contains("record needs a COMMAND"));
        QCOMPARE(run({"record", "--duration"}), 2);
        QCOMPARE(run({"record", "--duration", "0", "--", "true"}), 2);
        QCOMPARE(run({"record", "--delay", "soon", "--", "true"}), 2);
        QCOMPARE(run({"record", "--bogus", "--", "true"}), 2);
        QCOMPARE(run({"record", "-o"}), 2);
    }

    void unwritableOutputOrMissingProgramExitOne() {
        QByteArray err;
        QCOMPARE(run({"record", "-o", "/nonexistent-dir/x.json", "--", "true"}, nullptr, &err), 1);
        QVERIFY2(err.contains("cannot create"), err.constData());
        QCOMPARE(run({"record", "-o", m_dir.filePath("y.json"), "--", "stallscope-no-such-program"}, nullptr, &err), 1);
        QVERIFY2(err.contains("cannot start"), err.constData());
        QVERIFY(!QFile::exists(m_dir.filePath("y.json")));
    }
};

QTEST_GUILESS_MAIN(TestRecordCli)
#include "test_record_cli.moc"
