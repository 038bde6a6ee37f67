// File > Record... as a user sees it: a program runs under the recorder, a training loop
// streams into the recording (the fake capture source: CPU ops, launches, kernels and copies
// over the real socket), the timeline grows snapshot by snapshot while the event loop stays
// responsive, Stop ends the program, and the recording is analysed like an opened file.
// With STALLSCOPE_SCREENSHOT_DIR set, the window is saved while it grows and at the end
// (the pictures in docs/screenshots/).
#include "findings_panel.h"
#include "live_recording.h"
#include "main_window.h"
#include "record_dialog.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/finding_kind.h"
#include "stallscope/capture/fake_source.h"
#include "stallscope/importers/importer.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>

#include <atomic>
#include <thread>

using namespace stallscope;
using namespace stallscope::gui;

namespace {

size_t liveSlices(const MainWindow& w) {
    const auto* t = w.timeline()->layout().trace();
    return t ? t->slices().size() : 0;
}

void saveScreenshot(QWidget& w, const char* name) {
    const QByteArray dir = qgetenv("STALLSCOPE_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QString::fromUtf8(dir) + "/" + name));
}

/// Longest wait of a 10 ms timer while `until` is false: how long the event loop was blocked.
int maxEventLoopStallMs(const std::function<bool()>& until, int timeoutMs) {
    QElapsedTimer total, since;
    total.start();
    since.start();
    int worst = 0;
    QTimer ping;
    QObject::connect(&ping, &QTimer::timeout, [&] {
        worst = std::max(worst, int(since.elapsed()) - 10);
        since.restart();
    });
    ping.start(10);
    while (!until() && total.elapsed() < timeoutMs) QTest::qWait(5);
    return worst;
}

} // namespace

class TestLiveRecording : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void timelineGrowsWhileRecordingThenTheAnalysis() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        capture::RecordOptions o;
        o.command = {"sleep", "60"};  // the program: it never uses a GPU; the fake source does
        o.output = (m_dir.filePath("live.pt.trace.json.gz")).toStdString();
        QVERIFY(w.startRecording(o));
        LiveRecording* live = w.liveRecording();
        QVERIFY(live && live->active());
        QVERIFY(w.stopButton()->isVisible());
        QVERIFY(!live->socketPath().empty());

        // A training loop joins: 80 steps of ~20 ms sent as they happen.
        std::atomic<bool> cancel{false};
        capture::FakeSourceOptions fo;
        fo.steps = 80;
        fo.realTime = true;
        fo.waitForStart = true;
        std::atomic<bool> done{false};
        capture::FakeSourceResult played;
        std::thread source([&] {
            played = capture::FakeSource(fo).playTo(live->socketPath(), &cancel);
            done = true;
        });

        QTRY_VERIFY_WITH_TIMEOUT(liveSlices(w) > 0, 15000);
        const size_t first = liveSlices(w);
        const int firstSnapshots = live->snapshots();
        QVERIFY(w.statusLabel()->text().startsWith("Recording"));
        QVERIFY(w.findings()->detail()->toPlainText().contains("findings appear here"));
        saveScreenshot(w, "recording-live-1.png");
        // The timeline grows with each snapshot, and the UI never waits for one.
        const int stall = maxEventLoopStallMs([&] { return liveSlices(w) > first * 2 && live->snapshots() > firstSnapshots + 1; }, 15000);
        QVERIFY2(liveSlices(w) > first, qPrintable(QString("no growth past %1 slices").arg(first)));
        QVERIFY(live->snapshots() >= firstSnapshots + 2);
        qInfo("live timeline: %zu slices at the first snapshot, %zu later (%d snapshots); longest event-loop stall %d ms",
              first, liveSlices(w), live->snapshots(), stall);
        QVERIFY2(stall < 250, qPrintable(QString("event loop blocked %1 ms").arg(stall)));
        size_t kernels = 0;  // GPU rows are live too, not only the CPU side
        for (model::EventKind k : w.timeline()->layout().trace()->slices().kind) kernels += k == model::EventKind::Kernel;
        QVERIFY(kernels > 0);
        saveScreenshot(w, "recording-live-2.png");

        QTRY_VERIFY_WITH_TIMEOUT(done.load(), 30000);
        source.join();
        QVERIFY2(played.ok, played.error.c_str());
        // Stop: the program (sleep) is ended, the recording written and analysed.
        w.stopRecording();
        QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 30000);
        QVERIFY(!live->active());
        QVERIFY(!w.stopButton()->isVisible());
        QVERIFY2(w.statusLabel()->text().contains("Recorded"), qPrintable(w.statusLabel()->text()));
        const auto& lt = w.document()->traces.front();
        QVERIFY(lt.analysis);
        QCOMPARE(lt.analysis->steps.size(), size_t(80));
        QVERIFY(!lt.analysis->devices.empty());
        bool dataLoading = false, copies = false;
        for (const auto& f : lt.analysis->findings) {
            dataLoading |= f.kind == analysis::FindingKind::DataLoading;
            copies |= f.kind == analysis::FindingKind::BlockingH2dCopy;
        }
        QVERIFY(dataLoading && copies);  // the stalls the scripted loop has
        QCOMPARE(lt.entry.trace->slices().size(), size_t(played.recordsSent));
        // The file on disk is the same recording.
        auto reread = importers::importFile(o.output);
        QVERIFY(reread.ok());
        QCOMPARE((*reread)->slices().size(), lt.entry.trace->slices().size());
        QTest::qWait(50);
        saveScreenshot(w, "recording-finished.png");

        // A second recording after the first: a program that exits on its own.
        o.command = {"/bin/sh", "-c", "exit 4"};
        o.output = m_dir.filePath("second.json").toStdString();
        QVERIFY(w.startRecording(o));
        QVERIFY(!w.document());  // the first recording's document was closed
        // (Not by comparing Document addresses: the new one may reuse the old one's.)
        QTRY_VERIFY_WITH_TIMEOUT(w.document() && w.document()->path ==
                                                     m_dir.filePath("second.json").toStdString(),
                                 20000);
        QVERIFY2(w.statusLabel()->text().contains("exited with 4"), qPrintable(w.statusLabel()->text()));
    }

    void aProgramThatCannotStartIsAMessage() {
        MainWindow w;
        w.show();
        capture::RecordOptions o;
        o.command = {"stallscope-no-such-program"};
        o.output = m_dir.filePath("none.json").toStdString();
        QVERIFY(!w.startRecording(o));
        QVERIFY(w.errorBanner()->isVisible());
        QVERIFY2(w.errorBanner()->text().contains("Could not start"), qPrintable(w.errorBanner()->text()));
        QVERIFY(!w.liveRecording()->active());
        QVERIFY(!w.stopButton()->isVisible());
    }

    void recordDialogReadsItsFields() {
        RecordDialog d;
        capture::RecordOptions o;
        QString error;
        QVERIFY(!d.options(o, error));  // no command
        QVERIFY(error.contains("command"));
        d.setCommand("python3 \"my train.py\" --epochs 1");
        d.setOutput(m_dir.filePath("d.json"));
        auto* env = d.findChild<QPlainTextEdit*>();
        QVERIFY(env);
        env->setPlainText("CUDA_VISIBLE_DEVICES=1\nnot an assignment");
        QVERIFY(!d.options(o, error));
        QVERIFY(error.contains("KEY=VALUE"));
        env->setPlainText("CUDA_VISIBLE_DEVICES=1\nA=b=c");
        QVERIFY2(d.options(o, error), qPrintable(error));
        QCOMPARE(o.command, (std::vector<std::string>{"python3", "my train.py", "--epochs", "1"}));
        QCOMPARE(o.environment.size(), size_t(2));
        QCOMPARE(o.environment[1].second, std::string("b=c"));
        QCOMPARE(o.output.string(), m_dir.filePath("d.json").toStdString());
        // The demo picker lists the LibTorch demos when they were built, and fills the command.
        if (capture::demoExecutablePath().empty()) QSKIP("built without LibTorch: no demos to pick");
        QTRY_VERIFY_WITH_TIMEOUT(d.demos()->count() > 1, 20000);
        const int i = d.demos()->findData("dataloader");
        QVERIFY(i > 0);
        d.demos()->setCurrentIndex(i);
        Q_EMIT d.demos()->activated(i);
        QVERIFY2(d.options(o, error), qPrintable(error));
        QCOMPARE(o.command.back(), std::string("dataloader"));
        QCOMPARE(o.command.front(), capture::demoExecutablePath().string());
        d.show();
        saveScreenshot(d, "record-dialog.png");
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestLiveRecording)
#include "test_live_recording.moc"
