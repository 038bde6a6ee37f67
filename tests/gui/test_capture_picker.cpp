// A folder with several captures of a worker in the main window: one rank per worker in the rank
// list, its captures in the toolbar's Capture list in time order marked warm-up or steady with
// their window and utilisation, the latest steady one shown first, and choosing another shows
// that capture's timeline and findings.
#include "capture_series_folder.h"

#include "capture_picker.h"
#include "findings_panel.h"
#include "load_worker.h"
#include "main_window.h"
#include "ranks_panel.h"
#include "screenshot.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>

using namespace stallscope;
using namespace stallscope::gui;
using workspace::CapturePhase;

namespace {

std::shared_ptr<Document> loadFolder(const QTemporaryDir& dir) {
    QString error;
    auto doc = LoadWorker::loadNow(dir.path(), {}, &error);
    if (!doc) qFatal("%s", qPrintable(error));
    return doc;
}

/// The picker's toolbar action is visible (the window not shown: the action's own flag).
bool pickerShown(const MainWindow& w) {
    for (QToolBar* tb : w.findChildren<QToolBar*>())
        for (QAction* a : tb->actions())
            if (tb->widgetForAction(a) == w.capturePicker()) return a->isVisible();
    return false;
}

/// The window shows trace `index`: its timeline and its findings.
bool shows(const MainWindow& w, const Document& doc, size_t index) {
    const LoadedTrace& lt = doc.traces[index];
    const FindingsModel* m = w.findings()->model();
    if (w.currentRank() != int(index) || w.timeline()->layout().trace() != lt.entry.trace.get() ||
        m->rowCount() != int(lt.analysis->findings.size()))
        return false;
    return lt.analysis->findings.empty() || m->finding(0) == &lt.analysis->findings[0];
}

} // namespace

class TestCapturePicker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void oneWorkerFourCaptures() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "WWSS");
        const auto doc = loadFolder(dir);
        QCOMPARE(doc->traces.size(), size_t(4));
        QCOMPARE(doc->series.size(), size_t(1));
        QVERIFY(doc->ranks.ranks.empty()); // one rank: no cross-rank comparison
        const workspace::RankSeries& s = doc->series.front();
        MainWindow w;
        w.setDocument(doc);
        // One rank: no rank list; its captures listed, the latest steady one shown.
        QCOMPARE(w.rankCombo()->count(), 1);
        QVERIFY(pickerShown(w));
        CapturePicker* p = w.capturePicker();
        QCOMPARE(p->count(), 4);
        QCOMPARE(p->currentIndex(), 3);
        QVERIFY(shows(w, *doc, s.captures[3].trace));
        QVERIFY(w.statusLabel()->text().contains("capture 4 of 4 (steady)"));
        for (int i = 0; i < 4; ++i) {
            const QString text = p->itemText(i);
            QVERIFY2(
                text.startsWith(QString("#%1  %2 · ").arg(i + 1).arg(i < 2 ? "warm-up" : "steady")),
                qPrintable(text));
            QVERIFY2(text.contains(" % busy"), qPrintable(text));
            QCOMPARE(p->itemData(i).toInt(), int(s.captures[size_t(i)].trace));
            QVERIFY(!p->itemIcon(i).isNull());
            QVERIFY(!p->itemData(i, Qt::ToolTipRole).toString().isEmpty());
        }
        // The utilisation the lines state is each capture's own.
        QVERIFY(p->itemText(0).contains(
            QString("GPU %1 % busy").arg(s.captures[0].utilization * 100, 0, 'f', 1)));
        QVERIFY(s.captures[0].utilization < 0.1 && s.captures[3].utilization > 0.8);
        QVERIFY(p->itemData(3, Qt::ToolTipRole).toString().contains("summaries use it"));
        // Choosing a warm-up capture shows its timeline and findings, and says so.
        p->setCurrentIndex(0);
        QVERIFY(shows(w, *doc, s.captures[0].trace));
        QVERIFY(w.statusLabel()->text().contains("capture 1 of 4 (warm-up)"));
        QCOMPARE(p->count(), 4); // the list stays, on the chosen capture
        QCOMPARE(p->currentIndex(), 0);
        // The rank (its Ranks-panel row) keeps the capture chosen; the document's next load
        // starts on the latest steady one again.
        w.showRankAt(0);
        QVERIFY(shows(w, *doc, s.captures[0].trace));
        w.setDocument(doc);
        QVERIFY(shows(w, *doc, s.captures[3].trace));
        // The Ranks panel says what the captures are.
        auto* ranks = w.findChild<RanksPanel*>();
        QVERIFY(ranks);
        QVERIFY2(ranks->summary()->text().contains("rank 0: 4 captures, 2 warm-up, 2 steady"),
                 qPrintable(ranks->summary()->text()));
    }

    void twoWorkersTwoCapturesEach() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "host_a", "WS", 1, 2);
        test::writeCaptures(dir.path().toStdString(), "host_b", "WS", 0, 2);
        const auto doc = loadFolder(dir);
        QCOMPARE(doc->series.size(), size_t(2));
        QCOMPARE(doc->ranks.ranks.size(), size_t(2)); // each rank once
        for (const auto& n : doc->ranks.notes)
            QVERIFY(n.find("more than once") == std::string::npos);
        MainWindow w;
        w.setDocument(doc);
        QCOMPARE(w.rankCombo()->count(), 2);
        QCOMPARE(w.rankCombo()->itemText(0), QString("rank 0 · host_b · 2 captures"));
        QVERIFY(shows(w, *doc, doc->series[0].captures[1].trace));
        QCOMPARE(w.capturePicker()->count(), 2);
        // Another rank: its latest steady capture, its captures in the list.
        w.rankCombo()->setCurrentIndex(1);
        QVERIFY(shows(w, *doc, doc->series[1].captures[1].trace));
        QCOMPARE(w.capturePicker()->currentIndex(), 1);
        QCOMPARE(w.capturePicker()->itemData(0).toInt(), int(doc->series[1].captures[0].trace));
        w.capturePicker()->setCurrentIndex(0);
        QVERIFY(shows(w, *doc, doc->series[1].captures[0].trace));
        QCOMPARE(w.rankCombo()->currentIndex(), 1); // still rank 1
        // A rank from the Ranks panel: its latest steady capture.
        w.showRankAt(0);
        QVERIFY(shows(w, *doc, doc->series[0].captures[1].trace));
        QCOMPARE(w.rankCombo()->currentIndex(), 0);
    }

    // The docs' picture: --capture N shows that capture, --view captures paints the list open
    // (below the box, on the window); a capture the rank does not have is refused.
    void screenshotsOfACapture() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "WWSS");
        ScreenshotOptions o;
        o.input = dir.path();
        o.size = QSize(1200, 800);
        o.view = "timeline";
        o.output = dir.filePath("closed.png");
        QString error;
        QCOMPARE(takeScreenshot(o, &error), 0);
        o.view = "captures";
        o.output = dir.filePath("open.png");
        QCOMPARE(takeScreenshot(o, &error), 0);
        const QImage closed(dir.filePath("closed.png")), open(dir.filePath("open.png"));
        QCOMPARE(open.size(), QSize(1200, 800));
        QVERIFY(open != closed); // the list is in the picture
        o.capture = 1;
        o.view = "timeline";
        o.output = dir.filePath("first.png");
        QCOMPARE(takeScreenshot(o, &error), 0);
        QVERIFY(QImage(dir.filePath("first.png")) != closed); // another capture's timeline
        o.capture = 5;
        QCOMPARE(takeScreenshot(o, &error), 2);
        QVERIFY2(error.contains("4 captures"), qPrintable(error));
    }

    // Ranks of one capture each: the rank list as before, no Capture list.
    void oneCapturePerRankHasNoPicker() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "host_a", "S");
        test::writeCaptures(dir.path().toStdString(), "host_b", "S");
        const auto doc = loadFolder(dir);
        MainWindow w;
        w.setDocument(doc);
        QCOMPARE(w.rankCombo()->count(), 2);
        QCOMPARE(w.rankCombo()->itemText(1), QString("rank 1 · host_b"));
        QVERIFY(!pickerShown(w));
        QCOMPARE(w.capturePicker()->count(), 0);
        QCOMPARE(w.currentRank(), 0);
        w.rankCombo()->setCurrentIndex(1);
        QVERIFY(shows(w, *doc, 1));
        QVERIFY(!w.statusLabel()->text().contains("capture"));
    }
};

QTEST_MAIN(TestCapturePicker)
#include "test_capture_picker.moc"
