// The main window as a user drives it: open a file on the worker thread, see the top finding
// selected with its range shaded on the timeline, follow evidence to the event's details,
// select a range and read its statistics, switch ranks, pick a step, and get a clear banner
// (never a crash) for files that cannot be read.
#include "gzip_text.h"
#include "test_support.h"
#include "trace_text.h"

#include "details_panel.h"
#include "findings_panel.h"
#include "flame_panel.h"
#include "load_worker.h"
#include "main_window.h"
#include "modules_panel.h"
#include "overview_panel.h"
#include "panel.h"
#include "panel_id.h"
#include "range_panel.h"
#include "rank_collectives.h"
#include "rank_heatmap.h"
#include "ranks_panel.h"
#include "report_export.h"
#include "stats_panel.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/finding_kind.h"
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QThread>

using namespace stallscope;
using namespace stallscope::gui;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

QString samplePath() {
    return QString::fromUtf8(std::getenv("STALLSCOPE_SOURCE_DIR")) +
           "/resources/samples/synthetic_training.pt.trace.json.gz";
}

/// Kernels at 200..300 us and 600..900 us after 0.
std::string twoKernels() {
    TraceText t;
    t.step(0, 0, 1000);
    t.cpu("aten::conv2d", 100, 300);
    t.launch("k_conv", 150, 10, 200, 100);
    t.cpu("aten::relu", 500, 150);
    t.launch("k_relu", 560, 10, 600, 300);
    return t.json();
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    // The bottom tabs come from the panel list: one tab per row, in order, with its title,
    // and showView reaches each.
    void bottomTabsAreThePanelList() {
        MainWindow w;
        const auto& list = panels();
        QCOMPARE(w.bottomTabs()->count(), int(list.size()));
        for (size_t i = 0; i < list.size(); ++i) {
            QCOMPARE(w.bottomTabs()->tabText(int(i)),
                     QCoreApplication::translate("MainWindow", list[i].title));
            w.showView(list[i].id);
            QCOMPARE(w.bottomTabs()->currentIndex(), int(i));
        }
        QVERIFY(w.findChild<DetailsPanel*>() && w.findChild<RangePanel*>() &&
                w.findChild<FlamePanel*>());
    }

    void opensOnTheWorkerAndSelectsTheTopFinding() {
        MainWindow w;
        w.show();
        w.openPath(samplePath());
        QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 20000);
        QVERIFY(!w.loading());
        QVERIFY(!w.errorBanner()->isVisible());
        const auto& lt = w.document()->traces.front();
        QVERIFY(!lt.analysis->findings.empty());
        QCOMPARE(w.findings()->selectedFinding(), 0);
        const analysis::Finding& top = lt.analysis->findings.front();
        QCOMPARE(top.kind, analysis::FindingKind::DataLoading);
        // The timeline shades exactly the finding's ranges and shows the largest one.
        const auto& shaded = w.timeline()->state().shaded;
        QCOMPARE(shaded.size(), top.ranges.size());
        for (size_t i = 0; i < shaded.size(); ++i) {
            QCOMPARE(shaded[i].start, top.ranges[i].start);
            QCOMPARE(shaded[i].end, top.ranges[i].end);
        }
        const auto largest = *std::max_element(shaded.begin(), shaded.end(),
                                               [](auto& a, auto& b) { return a.length() < b.length(); });
        QVERIFY(w.timeline()->viewport().startNs <= largest.start);
        QVERIFY(w.timeline()->viewport().endNs() >= largest.end);
        QVERIFY(w.windowTitle().contains("synthetic_training"));
        // Selecting another finding moves the shading.
        if (lt.analysis->findings.size() > 1) {
            w.findings()->selectFinding(1);
            QCOMPARE(w.timeline()->state().shaded.size(), lt.analysis->findings[1].ranges.size());
        }
    }

    // A large file opens progressively: documents of the part read (marked partial, the
    // timeline of what is read, a notice of how much, no export) come before the whole one,
    // which replaces them and is exported as usual.
    void progressiveOpenShowsThePartReadThenTheWhole() {
        const auto path = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(path)) QSKIP("../shared/traces is absent");
        MainWindow w;
        w.show();
        w.loadWorker()->setPartialFirstMs(1);
        QAction* exportAction = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text().startsWith("&Export Report")) exportAction = a;
        QVERIFY(exportAction);
        struct Seen {
            uint64_t entries;
            double fraction;
            bool shown, notice, exportOff, timeline;
        };
        std::vector<Seen> seen;
        // After the window's own handler: what the user sees at each partial document.
        connect(w.loadWorker(), &LoadWorker::partial, &w, [&](std::shared_ptr<Document> d) {
            seen.push_back(
                {d->traces.front().entry.trace->importStats().entries, d->readFraction,
                 w.document() == d.get(),
                 w.errorBanner()->isVisible() && w.errorBanner()->text().startsWith("Reading "),
                 !exportAction->isEnabled(),
                 w.timeline()->layout().trace() == d->traces.front().entry.trace.get()});
        });
        w.openPath(QString::fromStdString(path.string()));
        QTRY_VERIFY_WITH_TIMEOUT(w.document() && !w.document()->partial, 60000);
        QVERIFY(!seen.empty());
        const uint64_t whole = w.document()->traces.front().entry.trace->importStats().entries;
        for (size_t i = 0; i < seen.size(); ++i) {
            QVERIFY(seen[i].shown && seen[i].notice && seen[i].exportOff && seen[i].timeline);
            QVERIFY(seen[i].entries > 0 && seen[i].entries < whole);
            QVERIFY(seen[i].fraction > 0 && seen[i].fraction <= 0.76);
            if (i) QVERIFY(seen[i].entries > seen[i - 1].entries);
        }
        QVERIFY(exportAction->isEnabled());
        QVERIFY(!w.errorBanner()->isVisible() || !w.errorBanner()->text().startsWith("Reading "));
        QVERIFY(!w.statusLabel()->text().startsWith("Reading"));
    }

    // A load that ended and sent its result before Cancel, with the result not yet delivered
    // to the window (the event loop busy): Cancel still drops it (the review's race: a
    // cancelled file replacing the newer one being opened).
    void cancelDropsAResultAlreadySent() {
        const auto path = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(path)) QSKIP("../shared/traces is absent");
        LoadWorker worker;
        worker.setPartialFirstMs(0);
        QSignalSpy loaded(&worker, &LoadWorker::loaded), failed(&worker, &LoadWorker::failed);
        worker.start(QString::fromStdString(path.string()), {});
        QElapsedTimer t;
        t.start();
        while (worker.busy() && t.elapsed() < 60000) QThread::msleep(5); // no event processed
        QVERIFY(!worker.busy());
        worker.cancel();
        QTest::qWait(200);
        QCOMPARE(loaded.count(), 0);
        QCOMPARE(failed.count(), 0);
        // Not cancelled, the same load is delivered.
        worker.start(QString::fromStdString(path.string()), {});
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
    }

    // Cancel during a progressive open: the window is free at once, the part read stays
    // shown with a notice, and nothing of the cancelled load arrives afterwards.
    void cancelKeepsThePartRead() {
        const auto path = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(path)) QSKIP("../shared/traces is absent");
        MainWindow w;
        w.show();
        w.loadWorker()->setPartialFirstMs(1);
        QPushButton* cancel = nullptr;
        for (QPushButton* b : w.findChildren<QPushButton*>())
            if (b->text() == "Cancel") cancel = b;
        QVERIFY(cancel);
        bool clicked = false;
        connect(w.loadWorker(), &LoadWorker::partial, &w, [&] {
            if (!clicked) cancel->click();
            clicked = true;
        });
        w.openPath(QString::fromStdString(path.string()));
        QTRY_VERIFY_WITH_TIMEOUT(clicked, 60000);
        const Document* shown = w.document();
        QVERIFY(shown && shown->partial);
        QVERIFY(!cancel->isVisible());
        QVERIFY2(w.errorBanner()->text().startsWith("Cancelled with"),
                 qPrintable(w.errorBanner()->text()));
        QTRY_VERIFY_WITH_TIMEOUT(!w.loading(), 20000);
        QTest::qWait(200);
        QCOMPARE(w.document(), shown); // no later partial, no whole document
        // Opening again after a cancel reads all of it.
        w.openPath(QString::fromStdString(path.string()));
        QTRY_VERIFY_WITH_TIMEOUT(w.document() && !w.document()->partial, 60000);
    }

    void evidenceOpensTheEventsDetails() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        const analysis::Finding& top = doc->traces.front().analysis->findings.front();
        QVERIFY(!top.evidence.empty());
        Q_EMIT w.findings()->evidenceActivated(top.evidence.front());
        QCOMPARE(w.timeline()->state().selected, top.evidence.front());
        QCOMPARE(w.bottomTabs()->currentWidget(),
                 static_cast<QWidget*>(w.findChild<DetailsPanel*>()));
        const auto& t = *doc->traces.front().entry.trace;
        const QString name = QString::fromUtf8(t.str(t.slices().name[top.evidence.front().index()]).data());
        QVERIFY(w.findChild<DetailsPanel*>()->browser()->toPlainText().contains(name.left(40)));
        // The selected event is in view.
        const int64_t s = t.slices().start[top.evidence.front().index()];
        QVERIFY(w.timeline()->viewport().startNs <= s && s <= w.timeline()->viewport().endNs());
    }

    void aRangeShowsItsBusyTimeAndKernels() {
        QTemporaryDir dir;
        const QString path = dir.filePath("two.pt.trace.json");
        test::writeFile(path.toStdString(), twoKernels());
        QString error;
        auto doc = LoadWorker::loadNow(path, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        const auto& t = *doc->traces.front().entry.trace;
        const int64_t t0 = t.slices().start[0];  // the step starts at 0 us
        w.timeline()->setRange(t0 + 250 * us, t0 + 650 * us);
        QCOMPARE(w.bottomTabs()->currentWidget(),
                 static_cast<QWidget*>(w.findChild<RangePanel*>()));
        const RangeStats& st = w.findChild<RangePanel*>()->stats();
        QCOMPARE(st.devices.size(), size_t(1));
        QCOMPARE(st.devices.front().busyNs, 100 * us);  // 50 us of each kernel
        QCOMPARE(st.kernels.size(), size_t(2));
        for (const auto& [name, ns] : st.kernels) QCOMPARE(ns, 50 * us);
        int64_t idle = 0;
        for (int64_t v : st.devices.front().idleByCause) idle += v;
        QCOMPARE(idle + st.devices.front().busyNs, 400 * us);  // every idle ns has a cause
        QVERIFY(w.findChild<RangePanel*>()->browser()->toPlainText().contains("k_relu"));
    }

    void stepComboZoomsToTheStep() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY(doc);
        MainWindow w;
        w.setDocument(doc);
        auto* steps = w.findChild<QComboBox*>("stepsCombo");
        QVERIFY(steps);
        const auto& a = *doc->traces.front().analysis;
        QCOMPARE(steps->count(), int(a.steps.size()) + 1);
        QWidget* tab = w.bottomTabs()->currentWidget();
        steps->setCurrentIndex(2);
        // The step's time is its span (to the next step's start), as the Step box says.
        const auto span = analysis::stepSpan(a.steps, 1, a.window.endNs);
        QVERIFY(steps->currentText().contains(
            QString::number(double(span.end - span.start) / 1e6, 'f', 1) + " ms"));
        QVERIFY(w.timeline()->viewport().startNs <= span.start);
        QVERIFY(w.timeline()->viewport().endNs() >= span.end);
        QVERIFY(w.timeline()->viewport().endNs() - w.timeline()->viewport().startNs <
                (span.end - span.start) * 11 / 10);
        // The step is the range: the Range tab's figures are the step's; the tab stays.
        QCOMPARE(w.bottomTabs()->currentWidget(), tab);
        const RangeStats& rs = w.findChild<RangePanel*>()->stats();
        QCOMPARE(rs.startNs, span.start);
        QCOMPARE(rs.endNs, span.end);
        // The findings, statistics and flame graph are re-analysed for that step alone, and the
        // scope is named on screen; All steps returns to the analysed window.
        QTRY_VERIFY_WITH_TIMEOUT(w.scopedAnalysis() != nullptr, 20000);
        const analysis::AnalysisResult& scoped = *w.scopedAnalysis();
        const int64_t number = a.steps[1].number;
        QVERIFY2(scoped.window.description.find("#" + std::to_string(number)) != std::string::npos,
                 scoped.window.description.c_str());
        QCOMPARE(scoped.window.length(), span.end - span.start); // one step length, here too
        QVERIFY(w.scopeShown());
        QVERIFY(w.scopeLabel()->text().contains(QString("step #%1").arg(number)));
        auto* stats = w.findChild<StatsPanel*>();
        QCOMPARE(stats->model(StatsPanel::KernelsTab)->rowCount(),
                 int(scoped.stats.kernels.size()));
        QVERIFY(scoped.stats.kernels.size() <= a.stats.kernels.size());
        QCOMPARE(w.findings()->model()->rowCount(), int(scoped.findings.size()));
        // The overview and the modules follow the scope too: their figures are the step's.
        auto* overview = w.findChild<OverviewPanel*>();
        auto* modules = w.findChild<ModulesPanel*>();
        QVERIFY(overview && modules);
        OverviewPanel scopedOverview, windowOverview;
        scopedOverview.setData(std::make_shared<const analysis::AnalysisResult>(scoped));
        windowOverview.setData(doc->traces.front().analysis);
        QVERIFY(scopedOverview.table()->rowCount() < windowOverview.table()->rowCount());
        QCOMPARE(overview->table()->rowCount(), scopedOverview.table()->rowCount());
        QCOMPARE(overview->summary()->text(), scopedOverview.summary()->text());
        ModulesPanel scopedModules;
        scopedModules.setData(doc->traces.front().entry.trace,
                              std::make_shared<const analysis::AnalysisResult>(scoped));
        QCOMPARE(modules->csv(), scopedModules.csv());
        steps->setCurrentIndex(0);
        QVERIFY(w.scopedAnalysis() == nullptr);
        QVERIFY(!w.scopeShown());
        QCOMPARE(stats->model(StatsPanel::KernelsTab)->rowCount(), int(a.stats.kernels.size()));
        QCOMPARE(overview->table()->rowCount(), windowOverview.table()->rowCount());
    }

    // A selected range can be analysed on its own (Range tab ▸ Analyse this range): the
    // findings, statistics and flame graph become the range's, the toolbar names it, and its
    // link returns to the window.
    void rangeCanBeAnalysedOnItsOwn() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path =
            test::sharedTraces() /
            "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        QString error;
        auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        const auto& a = *doc->traces.front().analysis;
        const int64_t lo = a.window.startNs + a.window.length() / 4,
                      hi = lo + a.window.length() / 3;
        auto* range = w.findChild<RangePanel*>();
        QVERIFY(range);
        QVERIFY(!range->analyseButton()->isEnabled()); // nothing selected yet
        Q_EMIT w.timeline()->rangeSelected(lo, hi);
        QVERIFY(range->analyseButton()->isEnabled());
        range->analyseButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(w.scopedAnalysis() != nullptr, 20000);
        const analysis::AnalysisResult& scoped = *w.scopedAnalysis();
        QCOMPARE(scoped.window.startNs, lo);
        QCOMPARE(scoped.window.endNs, hi);
        QVERIFY(w.scopeShown());
        QVERIFY2(w.scopeLabel()->text().contains("range "), qPrintable(w.scopeLabel()->text()));
        auto* stats = w.findChild<StatsPanel*>();
        QCOMPARE(stats->model(StatsPanel::KernelsTab)->rowCount(),
                 int(scoped.stats.kernels.size()));
        uint64_t calls = 0, allCalls = 0;
        for (const auto& k : scoped.stats.kernels) calls += k.count;
        for (const auto& k : a.stats.kernels) allCalls += k.count;
        QVERIFY(calls > 0 && calls < allCalls); // a third of the window, not all of it
        QCOMPARE(w.findings()->model()->rowCount(), int(scoped.findings.size()));
        Q_EMIT w.scopeLabel()->linkActivated("window");
        QVERIFY(w.scopedAnalysis() == nullptr);
        QVERIFY(!w.scopeShown());
        QCOMPARE(stats->model(StatsPanel::KernelsTab)->rowCount(), int(a.stats.kernels.size()));
    }

    // Warm-up steps (issue 25) are marked in the step list; the steady ones are not.
    void stepComboMarksWarmupSteps() {
        test::TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 10'000;
            t.step(s, b, 10'000);
            if (s == 0) {
                t.runtime("cudaStreamCreateWithFlags", b, 3000, 0);
                t.launch("k_first", b + 3000, 5000, b + 8010, 1000);
            }
            t.launch("k_compute", b + 9100, 5, b + 9110, 800);
        }
        QTemporaryDir dir;
        const QString path = dir.filePath("warmup.pt.trace.json");
        test::writeFile(path.toStdString(), t.json());
        QString error;
        auto doc = LoadWorker::loadNow(path, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        auto* steps = w.findChild<QComboBox*>("stepsCombo");
        QVERIFY(steps);
        QCOMPARE(steps->count(), 5);
        QVERIFY2(steps->itemText(1).contains("warm-up"), qPrintable(steps->itemText(1)));
        for (int i = 2; i < 5; ++i) QVERIFY(!steps->itemText(i).contains("warm-up"));
    }

    void keysWorkInsideTheWindowOnce() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY(doc);
        MainWindow w;
        w.setDocument(doc);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.activateWindow();
        w.timeline()->setFocus();
        w.timeline()->fitAll();
        const double before = w.timeline()->viewport().nsPerPx;
        QTest::keyClick(w.timeline(), Qt::Key_W);  // a menu shortcut and a timeline key: zooms once
        QVERIFY(std::abs(w.timeline()->viewport().nsPerPx - before * 0.8) < before * 1e-6);
        QTest::keyClick(w.timeline(), Qt::Key_0);
        QVERIFY(std::abs(w.timeline()->viewport().nsPerPx - before) < before * 1e-6);
        // After clicking a table (the findings, the statistics), 0 still fits all: a table's
        // type-to-search does not swallow the window's keys.
        for (QAbstractItemView* table :
             {static_cast<QAbstractItemView*>(w.findings()->findChild<QTableView*>()),
              static_cast<QAbstractItemView*>(w.findChild<StatsPanel*>()->view(0))}) {
            QVERIFY(table);
            QTest::keyClick(w.timeline(), Qt::Key_W);
            QVERIFY(w.timeline()->viewport().nsPerPx < before * 0.9);
            w.showView(table == w.findings()->findChild<QTableView*>() ? MainWindow::View::Details
                                                                       : MainWindow::View::Stats);
            table->setFocus();
            QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                              table->visualRect(table->model()->index(0, 0)).center());
            QTest::keyClick(table, Qt::Key_0);
            QVERIFY2(std::abs(w.timeline()->viewport().nsPerPx - before) < before * 1e-6,
                     qPrintable(table->metaObject()->className()));
        }
    }

    void flameAndStatisticsLeadToTheTimeline() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY(doc);
        MainWindow w;
        w.setDocument(doc);
        const auto& t = *doc->traces.front().entry.trace;
        // Double-clicking a flame frame searches its name and selects the first event.
        const model::StringId name = t.strings().find("aten::copy_");
        QVERIFY(name.valid());
        auto* flame = w.findChild<FlamePanel*>();
        QVERIFY(flame);
        Q_EMIT flame->frameActivated(name);
        // The search runs off the GUI thread; the first match is selected when it is done.
        QTRY_VERIFY_WITH_TIMEOUT(w.timeline()->matchCount() > 0, 5000);
        QTRY_VERIFY_WITH_TIMEOUT(w.timeline()->state().selected.valid(), 5000);
        QCOMPARE(t.slices().name[w.timeline()->state().selected.index()], name);
        // A statistics row's example event is selected and revealed.
        auto* stats = w.findChild<StatsPanel*>();
        QVERIFY(stats);
        const model::SliceId example = doc->traces.front().analysis->stats.kernels.front().example;
        Q_EMIT stats->eventRequested(example);
        QCOMPARE(w.timeline()->state().selected, example);
        const int64_t s = t.slices().start[example.index()];
        QVERIFY(w.timeline()->viewport().startNs <= s && s <= w.timeline()->viewport().endNs());
        // The other way: the timeline's "Show in statistics" opens the event's row.
        const model::SliceId op = doc->traces.front().analysis->stats.operators.at(1).example;
        Q_EMIT w.timeline()->statisticsRequested(op);
        QCOMPARE(stats->tabs()->currentIndex(), int(StatsPanel::OperatorsTab));
        const QModelIndex row = stats->view(StatsPanel::OperatorsTab)->currentIndex();
        QVERIFY(row.isValid());
        QCOMPARE(row.siblingAtColumn(0).data().toString().toStdString(),
                 std::string(t.str(t.slices().name[op.index()])));
        Q_EMIT w.timeline()->statisticsRequested(example); // a kernel: the Kernels tab
        QCOMPARE(stats->tabs()->currentIndex(), int(StatsPanel::KernelsTab));
        // "Find similar" searches the name.
        Q_EMIT w.timeline()->searchRequested("aten::copy_");
        QTRY_VERIFY_WITH_TIMEOUT(w.timeline()->matchCount() > 0, 5000);
    }

    // Bookmarks are saved with the trace: another window on the same file shows them.
    void bookmarksAreKeptWithTheTrace() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY(doc);
        const int64_t at = doc->traces.front().entry.trace->startNs() + 12345;
        {
            MainWindow w;
            w.setDocument(doc);
            w.timeline()->setBookmarks({});
            w.timeline()->addBookmark(at, "before the stall");
        }
        MainWindow again;
        again.setDocument(doc);
        QCOMPARE(again.timeline()->bookmarks().size(), size_t(1));
        QCOMPARE(again.timeline()->bookmarks()[0].ns, at);
        QCOMPARE(again.timeline()->bookmarks()[0].label, QString("before the stall"));
        again.timeline()->removeBookmark(0); // leaves the settings as they were
        MainWindow third;
        third.setDocument(doc);
        QVERIFY(third.timeline()->bookmarks().empty());
    }

    void exportsReportsInTheBackground() {
        QString error;
        auto doc = LoadWorker::loadNow(samplePath(), {}, &error);
        QVERIFY(doc);
        MainWindow w;
        w.setDocument(doc);
        QTemporaryDir dir;
        QSignalSpy done(w.reportExport(), &ReportExport::finished);
        for (const char* name : {"r.html", "r.pdf", "r.md", "r.json", "r.trace.json.gz"}) {
            const QString path = dir.filePath(name);
            w.exportReport(path);
            QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 30000);
            const auto args = done.takeFirst();
            QVERIFY2(args.at(1).toBool(), qPrintable(name + QString(": ") + args.at(2).toString()));
            QVERIFY(QFileInfo(path).size() > 1000);
        }
        QVERIFY(test::readFile(dir.filePath("r.html").toStdString()).find("GPU idle while the input pipeline") !=
                std::string::npos);
        // An extension that says nothing, and no filter: a banner, nothing written.
        w.exportReport(dir.filePath("r.txt"));
        QVERIFY(!w.errorBanner()->isHidden());
        QVERIFY(w.errorBanner()->text().contains("report format"));
        QVERIFY(!QFileInfo::exists(dir.filePath("r.txt")));
        // A filter decides when the extension does not.
        w.exportReport(dir.filePath("plain"), ReportExport::fileFilters().split(";;").at(2));  // Markdown
        QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 30000);
        QVERIFY(test::readFile(dir.filePath("plain").toStdString()).rfind("# Stallscope report", 0) == 0);
    }

    void ranksOfAFolderCanBeSwitched() {
        QTemporaryDir dir;
        const std::string text = twoKernels();
        test::writeFile(dir.filePath("host_a.123.pt.trace.json.gz").toStdString(), test::gzipText(text));
        test::writeFile(dir.filePath("host_b.456.pt.trace.json.gz").toStdString(), test::gzipText(text));
        QString error;
        auto doc = LoadWorker::loadNow(dir.path(), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->traces.size(), size_t(2));
        MainWindow w;
        w.setDocument(doc);
        QCOMPARE(w.currentRank(), 0);
        const model::Trace* first = w.timeline()->layout().trace();
        w.showRank(1);
        QCOMPARE(w.currentRank(), 1);
        QVERIFY(w.timeline()->layout().trace() != first);
        QCOMPARE(w.timeline()->layout().trace(), doc->traces[1].entry.trace.get());
    }

    // The 8 DLRM ranks: the Ranks panel says who arrives last and fills the collective columns.
    void ranksPanelShowsTheCrossRankAnalysis() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        QString error;
        auto doc = LoadWorker::loadNow(
            QString::fromStdString((test::sharedTraces() / "param-dlrm-8rank").string()), {},
            &error);
        QVERIFY2(doc, qPrintable(error));
        RanksPanel panel;
        panel.setDocument(doc.get(), 0);
        QVERIFY2(panel.summary()->text().contains("Straggler: rank 7"),
                 qPrintable(panel.summary()->text()));
        QVERIFY(panel.summary()->text().contains("cpu_dispatch on 8/8"));
        QCOMPARE(panel.table()->rowCount(), 8);
        QCOMPARE(panel.table()->item(7, 9)->text(), QString("5")); // rank 7: last at 5 of 8
        // The heat map: 8 ranks × 1 step, the slowest rank (1, 19.9 ms) darkest, the fastest
        // (7, 12.5 ms) palest; a click on a cell asks for that rank at that step.
        RankHeatmap* map = panel.heatmap();
        map->resize(600, 300);
        QCOMPARE(map->shade(1, 0), 1.0);
        for (int i = 0; i < 8; ++i) QVERIFY(map->shade(7, 0) <= map->shade(i, 0));
        QVERIFY(map->shade(7, 0) < 0.5);
        QSignalSpy asked(&panel, &RanksPanel::rankActivated);
        QPoint cell;
        for (int y = 0; y < map->height() && cell.isNull(); ++y)
            if (map->cellAt({300, y}).first == 3) cell = {300, y + 2};
        QVERIFY(!cell.isNull());
        QTest::mouseClick(map, Qt::LeftButton, {}, cell);
        QCOMPARE(asked.count(), 1);
        QCOMPARE(asked.at(0).at(0).toInt(), 3);
        QCOMPARE(asked.at(0).at(1).toInt(), 0);
        // The panel keeps its own copy: the document may go (a new file, a recording).
        {
            RanksPanel other;
            auto copy = std::make_shared<Document>(*doc);
            other.setDocument(copy.get(), 0);
            copy.reset();
            other.heatmap()->resize(400, 200);
            QCOMPARE(other.heatmap()->shade(1, 0), 1.0);
            QVERIFY(!other.heatmap()->grab().isNull());
            QVERIFY(!other.collectives()->grab().isNull());
        }
        // Another measure: waiting in collectives; rank 7 (the straggler) waits least.
        panel.measure()->setCurrentIndex(1);
        for (int i = 0; i < 8; ++i) QVERIFY(map->shade(7, 0) <= map->shade(i, 0));
        // The ranks side by side at that step: its 8 collectives, the range covering every
        // rank's step on the common clock; a double-click on a row asks for that rank.
        RankCollectivesView* side = panel.collectives();
        side->resize(600, 300);
        QCOMPARE(side->column(), 0);
        QCOMPARE(side->shown().size(), size_t(8));
        const auto [lo, hi] = side->range();
        for (const auto& row : doc->ranks.cells) {
            QVERIFY(row[0].startNs >= lo);
            QVERIFY(row[0].startNs + row[0].stepNs <= hi);
        }
        for (const auto& spans : doc->ranks.collectiveSpans)
            for (size_t k : side->shown()) QVERIFY(spans[k].startNs >= lo && spans[k].endNs <= hi);
        asked.clear();
        QTest::mouseDClick(side, Qt::LeftButton, {}, {300, 22 + 5 * (300 - 44) / 8 + 4});
        QCOMPARE(asked.count(), 1);
        QCOMPARE(asked.at(0).at(0).toInt(), 5);
    }

    // Rank summaries open as a many-ranks document: every rank in the Ranks panel, the
    // straggler's trace loaded; asking for another rank loads its trace on demand.
    void rankSummariesOpenWithDetailOnDemand() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const std::string folder = (test::sharedTraces() / "param-dlrm-8rank").string();
        auto ws = workspace::loadAndAnalyse(folder);
        QVERIFY(ws);
        QTemporaryDir dir;
        for (const auto& at : ws.value().traces) {
            const analysis::RankInput in{at.entry.rank, at.entry.label, at.entry.trace.get(),
                                         at.analysis.get(),
                                         std::filesystem::absolute(at.entry.path).string()};
            test::writeFile(
                dir.filePath(QString("rank%1.summary.json").arg(at.entry.rank)).toStdString(),
                workspace::rankSummaryJson(analysis::digestRank(in)));
        }
        QString error;
        auto doc = LoadWorker::loadNow(dir.path(), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(doc->manyRanks);
        {
            // The same ranks merged into one file open the same way.
            std::vector<analysis::RankDigest> all;
            for (const auto& at : ws.value().traces)
                all.push_back(analysis::digestRank(
                    {at.entry.rank, at.entry.label, at.entry.trace.get(), at.analysis.get(),
                     std::filesystem::absolute(at.entry.path).string()}));
            const QString bundle = dir.filePath("merged.ranks");
            test::writeFile(bundle.toStdString(), workspace::rankSummariesJson(all));
            auto merged = LoadWorker::loadNow(bundle, {}, &error);
            QVERIFY2(merged, qPrintable(error));
            QVERIFY(merged->manyRanks);
            QCOMPARE(merged->ranks.ranks.size(), size_t(8));
            QCOMPARE(merged->traces[0].entry.rank, 7);
            QFile::remove(bundle);
        }
        QCOMPARE(doc->ranks.ranks.size(), size_t(8));
        QCOMPARE(doc->traces.size(), size_t(1));
        QCOMPARE(doc->traces[0].entry.rank, 7); // the straggler's detail first
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        w.setDocument(doc);
        w.showRankAt(2, 0);
        QTRY_VERIFY_WITH_TIMEOUT(w.document() && w.document()->traces[0].entry.rank == 2, 20000);
        QVERIFY(w.document()->manyRanks);
        QCOMPARE(w.document()->ranks.ranks.size(), size_t(8));
        QCOMPARE(w.timeline()->layout().trace(), w.document()->traces[0].entry.trace.get());
        // A rank whose trace is gone says so.
        auto gone = std::make_shared<Document>(*w.document());
        gone->ranks.ranks[4].path = dir.filePath("missing.json").toStdString();
        QVERIFY(!LoadWorker::loadRankNow(*gone, 4, {}, &error));
        QVERIFY2(error.contains("Rank 4") && error.contains("missing.json"), qPrintable(error));
    }

    // A rank of a file that holds several: its summary names the file; loading it on demand
    // keeps that rank's trace only.
    void aRankOfAFileHoldingSeveralLoadsAlone() {
        QTemporaryDir dir;
        const QString file = dir.filePath("merged.json");
        std::string events;
        for (int r = 0; r < 2; ++r) {
            const std::string off = std::to_string(r * 1000000);
            events += std::string(r ? "," : "") +
                      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(r) +
                      "\", \"pid\": " + std::to_string(r * 1000000 + 500) +
                      ", \"tid\": 1, \"ts\": 10, \"dur\": 5},{\"ph\": \"X\", \"cat\": \"kernel\", "
                      "\"name\": \"k" +
                      std::to_string(r) + "\", \"pid\": " + std::to_string(r * 1000000) +
                      ", \"tid\": 7, \"ts\": 11, \"dur\": 3}";
        }
        test::writeFile(file.toStdString(), "{\"traceEvents\": [" + events + "]}");
        auto ws = workspace::loadAndAnalyse(file.toStdString());
        QVERIFY(ws);
        QCOMPARE(ws.value().traces.size(), size_t(2));
        std::vector<analysis::RankDigest> digests;
        for (const auto& at : ws.value().traces)
            digests.push_back(analysis::digestRank({at.entry.rank, "merged", at.entry.trace.get(),
                                                    at.analysis.get(), file.toStdString()}));
        Document ranksOf;
        ranksOf.manyRanks = true;
        ranksOf.ranks = analysis::analyzeRanks(digests);
        QString error;
        auto doc = LoadWorker::loadRankNow(ranksOf, 1, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        QCOMPARE(doc->traces.size(), size_t(1));
        QCOMPARE(doc->traces[0].entry.rank, 1);
        const model::Trace& t = *doc->traces[0].entry.trace;
        bool k1 = false, k0 = false;
        for (size_t i = 0; i < t.slices().size(); ++i) {
            k1 |= t.str(t.slices().name[i]) == "k1";
            k0 |= t.str(t.slices().name[i]) == "k0";
        }
        QVERIFY(k1 && !k0);
    }

    // Summaries brought from a cluster without their traces: the ranks from the digests, the
    // Ranks tab alone, a warning saying why; asking for a rank says its trace is not here.
    void rankSummariesWithoutTheirTraces() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        auto ws = workspace::loadAndAnalyse((test::sharedTraces() / "param-dlrm-8rank").string());
        QVERIFY(ws);
        QTemporaryDir dir;
        std::vector<analysis::RankDigest> all;
        for (const auto& at : ws.value().traces)
            all.push_back(analysis::digestRank(
                {at.entry.rank, at.entry.label, at.entry.trace.get(), at.analysis.get(),
                 "/nonexistent/cluster/" + at.entry.label + ".pt.trace.json"}));
        const QString bundle = dir.filePath("job.ranks");
        test::writeFile(bundle.toStdString(), workspace::rankSummariesJson(all));
        QString error;
        auto doc = LoadWorker::loadNow(bundle, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(doc->manyRanks);
        QVERIFY(doc->traces.empty());
        QCOMPARE(doc->ranks.ranks.size(), size_t(8));
        QVERIFY(doc->detailNote.find("/nonexistent/cluster/") != std::string::npos);
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        w.setDocument(doc);
        QVERIFY(w.errorBanner()->isVisible());
        QVERIFY(w.errorBanner()->text().contains("shown from their summaries"));
        auto* tabs = w.findChild<QTabWidget*>();
        QVERIFY(tabs);
        int enabled = 0;
        for (int i = 0; i < tabs->count(); ++i) enabled += tabs->isTabEnabled(i) ? 1 : 0;
        QCOMPARE(enabled, 1);
        auto* ranks = w.findChild<RanksPanel*>();
        QVERIFY(ranks);
        QCOMPARE(ranks->table()->rowCount(), 8);
        QVERIFY(ranks->summary()->text().contains("Straggler: rank 7"));
        w.showRankAt(3, 0);
        QTRY_VERIFY_WITH_TIMEOUT(w.errorBanner()->text().contains("Rank 3"), 20000);
        QCOMPARE(w.document(), doc.get()); // the ranks stay
    }

    void unreadableFilesShowABannerNotACrash_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expect");
        const std::string gz = test::gzipText(twoKernels());
        QTest::newRow("truncated gzip") << QByteArray::fromStdString(gz.substr(0, gz.size() / 2)) << "cut.pt.trace.json.gz"
                                        << "gzip";
        QTest::newRow("not a trace") << QByteArray("hello, world\n") << "notes.json" << "";
        QTest::newRow("empty") << QByteArray() << "empty.json" << "";
        QTest::newRow("missing") << QByteArray() << "" << "";
    }
    void unreadableFilesShowABannerNotACrash() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, name);
        QFETCH(QString, expect);
        QTemporaryDir dir;
        const QString path = name.isEmpty() ? dir.filePath("does-not-exist.json") : dir.filePath(name);
        if (!name.isEmpty()) test::writeFile(path.toStdString(), bytes.toStdString());
        MainWindow w;
        w.show();
        w.openPath(path);
        QTRY_VERIFY_WITH_TIMEOUT(w.errorBanner()->isVisible(), 20000);
        QVERIFY(w.document() == nullptr);
        const QString text = w.errorBanner()->text();
        QVERIFY2(text.startsWith("Could not open"), qPrintable(text));
        if (!expect.isEmpty()) QVERIFY2(text.contains(expect, Qt::CaseInsensitive), qPrintable(text));
        QVERIFY(text.size() > QString("Could not open ").size() + 8);  // there is a reason
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
