// Bad input in the GUI: every entry of the importer's bad-input table, opened in a main
// window that already shows a trace, gives a clear message in the window (the red banner
// for a file that cannot be read, the amber one with a link to the import notes for a
// file read with losses, the status line for notes) and leaves the previous document
// shown and usable; a trace too large for the memory budget is refused with its size.
#include "bad_input_table.h"
#include "test_support.h"

#include "findings_panel.h"
#include "main_window.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include <QApplication>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

using namespace stallscope;
using namespace stallscope::gui;

namespace {

QString samplePath() {
    return QString::fromUtf8(std::getenv("STALLSCOPE_SOURCE_DIR")) + "/resources/samples/synthetic_training.pt.trace.json.gz";
}

/// Opens `path` and waits until the worker is done (loaded or failed).
bool openAndSettle(MainWindow& w, const QString& path) {
    w.openPath(path);
    return QTest::qWaitFor([&] { return !w.loading(); }, 30000) && (QTest::qWait(20), true);
}

} // namespace

class TestGuiBadInput : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void everyBadInputGivesAMessageAndKeepsThePreviousDocument() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QTemporaryDir dir;
        int failures = 0, warnings = 0;
        for (const test::BadInput& b : test::badInputTable()) {
            const std::string what = "'" + b.name + "'";
            // A good document first: the one a failed open must leave in place.
            QVERIFY(openAndSettle(w, samplePath()));
            const Document* before = w.document();
            QVERIFY2(before, what.c_str());
            QVERIFY(!w.errorBanner()->isVisible());
            const int finding = w.findings()->selectedFinding();
            const auto path = std::filesystem::path(dir.path().toStdString()) / ("input-" + std::to_string(failures + warnings) + ".json");
            test::writeFile(path, b.bytes);
            QVERIFY2(openAndSettle(w, QString::fromStdString(path.string())), what.c_str());
            const QString banner = w.errorBanner()->isVisible() ? w.errorBanner()->text() : QString();
            if (!b.ok) {
                // Red banner naming the file and what is wrong; the previous trace stays.
                QVERIFY2(w.errorBanner()->isVisible() && !w.bannerIsWarning(), what.c_str());
                QVERIFY2(banner.contains(QString::fromStdString(path.filename().string())), qPrintable(banner));
                QVERIFY2(banner.contains(QString::fromStdString(b.fragment)), qPrintable(what.c_str() + (": " + banner)));
                QVERIFY2(w.document() == before, what.c_str());
                QCOMPARE(w.timeline()->layout().trace(), before->traces.front().entry.trace.get());
                QCOMPARE(w.findings()->selectedFinding(), finding);
                // Still usable: zoom, pan, the next finding.
                const TimelineViewport vp = w.timeline()->viewport();
                QTest::keyClick(w.timeline(), Qt::Key_W);
                QVERIFY2(w.timeline()->viewport().nsPerPx < vp.nsPerPx, what.c_str());
                QTest::keyClick(w.timeline(), Qt::Key_D);
                w.selectFinding(1);
                QCOMPARE(w.findings()->selectedFinding(), 1);
                (void)w.grab();
                ++failures;
                continue;
            }
            // Read (maybe with losses): the new document is shown, and what was lost is said.
            QVERIFY2(w.document() && w.document() != before, what.c_str());
            const model::Diagnostics& d = w.document()->traces.front().entry.trace->diagnostics();
            if (b.diagnostic != model::DiagnosticKind::Count) {
                QVERIFY2(d.count(b.diagnostic) > 0, what.c_str());
                // Said by kind: the one kind by its summary, several as a count of kinds.
                const QString status = w.statusLabel()->text();
                QVERIFY2(status.contains("import notes of") ||
                             status.contains(QString::fromStdString(
                                 std::string(model::diagnosticInfo(b.diagnostic).summary))),
                         qPrintable(status));
                if (model::diagnosticInfo(b.diagnostic).severity == model::Severity::Error) {
                    QVERIFY2(w.errorBanner()->isVisible() && w.bannerIsWarning(), what.c_str());
                    QVERIFY2(banner.contains(QString::fromStdString(std::string(model::diagnosticInfo(b.diagnostic).summary))
                                                 .toHtmlEscaped()),
                             qPrintable(banner));
                    ++warnings;
                }
            }
            (void)w.grab();
        }
        QVERIFY(failures >= 12);
        QVERIFY(warnings >= 8);
    }

    void aTraceOverTheMemoryBudgetIsRefusedWithItsSize() {
        MainWindow w;
        w.show();
        QVERIFY(openAndSettle(w, samplePath()));
        const Document* before = w.document();
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "big.pt.trace.json";
        test::writeFile(path, test::bad_input_detail::manyEvents(20000));  // ~3 MB of JSON
        qputenv("STALLSCOPE_MEMORY_BUDGET", "256K");
        QVERIFY(openAndSettle(w, QString::fromStdString(path.string())));
        qunsetenv("STALLSCOPE_MEMORY_BUDGET");
        const QString banner = w.errorBanner()->text();
        QVERIFY(w.errorBanner()->isVisible() && !w.bannerIsWarning());
        QVERIFY2(banner.contains("MB of JSON") && banner.contains("needs about") && banner.contains("262 kB"),
                 qPrintable(banner));
        QVERIFY(w.document() == before);
        // Without the limit it opens.
        QVERIFY(openAndSettle(w, QString::fromStdString(path.string())));
        QVERIFY(w.document() != before && !w.errorBanner()->isVisible());
    }
};

QTEST_MAIN(TestGuiBadInput)
#include "test_gui_bad_input.moc"
