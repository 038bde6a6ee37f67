// File ▸ Attach… as a user sees it: the dialog answers Kineto's polls, lists the polling
// processes (stand-in Kineto clients written from libkineto's sources), Trace asks the
// selected one for its trace, the file Kineto writes is saved and opens in the main window,
// analysed. A taken socket name is said in the banner. With STALLSCOPE_SCREENSHOT_DIR set, the
// dialog is saved (docs/screenshots/attach-dialog.png).
#include "attach_dialog.h"
#include "main_window.h"

#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
using namespace stallscope::gui;

namespace {

struct Client {
    QProcess p;
    explicit Client(const QString& socketDir) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("KINETO_IPC_SOCKET_DIR", socketDir);
        p.setProcessEnvironment(e);
        p.start(QStringLiteral(STALLSCOPE_KINETO_CLIENT),
                {"--interval-ms", "200", "--lifetime-ms", "60000"});
    }
    ~Client() {
        p.kill();
        p.waitForFinished();
    }
};

capture::kineto::DaemonOptions inFolder(const QTemporaryDir& dir) {
    capture::kineto::DaemonOptions o;
    o.socketDir = dir.path().toStdString();
    o.socketDirFromEnvironment = false;
    return o;
}

} // namespace

class TestAttachDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void listsTracesAndOpens() {
        QTemporaryDir dir;
        qputenv("KINETO_ONDEMAND_TRACE_DIR", dir.path().toUtf8());
        Client first(dir.path()), second(dir.path());
        QVERIFY(first.p.waitForStarted() && second.p.waitForStarted());
        AttachDialog dialog(nullptr, inFolder(dir));
        QVERIFY(dialog.serving());
        dialog.setDurationSeconds(0.3);
        const QString out = dir.filePath("job.pt.trace.json.gz");
        dialog.setOutput(out);
        dialog.resize(900, 600);
        dialog.show();
        QTableWidget* table = dialog.processTable();
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, 10000);
        QStringList pids;
        for (int r = 0; r < 2; ++r) {
            pids << table->item(r, 0)->text();
            QVERIFY(table->item(r, 4)->text().contains("kineto_client"));
        }
        QVERIFY(pids.contains(QString::number(first.p.processId())));
        QVERIFY(pids.contains(QString::number(second.p.processId())));
        QVERIFY(dialog.traceButton()->isEnabled());

        // Only the second process is traced.
        const int row = table->item(0, 0)->text() == QString::number(second.p.processId()) ? 0 : 1;
        table->selectRow(row);
        QSignalSpy finished(&dialog, &AttachDialog::traceFinished);
        QTest::mouseClick(dialog.traceButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 30000);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QCOMPARE(dialog.tracePath(), out);
        QVERIFY(QFileInfo(out).size() > 100);
        QVERIFY2(dialog.log().contains("pid " + QString::number(second.p.processId()) + " wrote"),
                 qPrintable(dialog.log()));
        QVERIFY(!dialog.log().contains("pid " + QString::number(first.p.processId()) + " wrote"));
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        if (const QByteArray shots = qgetenv("STALLSCOPE_SCREENSHOT_DIR"); !shots.isEmpty()) {
            dialog.show();
            QTest::qWait(600); // a refresh: the traced process's state
            QVERIFY(dialog.grab().save(QString::fromUtf8(shots) + "/attach-dialog.png"));
        }

        // What the menu action does next: the trace opens, analysed.
        MainWindow w;
        w.openPath(dialog.tracePath());
        QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 20000);
        const auto& analysis = w.document()->traces.front().analysis;
        QVERIFY(analysis);
        QVERIFY(!analysis->findings.empty());
        QCOMPARE(analysis->findings.front().id.rfind("data_loading", 0), size_t(0));
        qunsetenv("KINETO_ONDEMAND_TRACE_DIR");
    }
    void aTakenNameIsSaid() {
        QTemporaryDir dir;
        capture::kineto::KinetoDaemon other;
        QVERIFY(other.start(inFolder(dir)).ok());
        AttachDialog dialog(nullptr, inFolder(dir));
        QVERIFY(!dialog.serving());
        QVERIFY(!dialog.traceButton()->isEnabled());
    }
};

QTEST_MAIN(TestAttachDialog)
#include "test_attach_dialog.moc"
