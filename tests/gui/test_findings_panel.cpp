// The findings list and detail pane: the model passes Qt's model tester, rows follow the
// analysis (largest saving first), the detail shows the explanation, waited-for ops, fix and
// snippet, evidence links resolve to slices, and the snippet button copies the snippet.
#include "test_support.h"
#include "trace_text.h"

#include "findings_panel.h"
#include "idle_chart.h"
#include "theme.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/detector_catalogue.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/importers/importer.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>

using namespace stallscope;
using namespace stallscope::gui;
using test::TraceText;

namespace {

struct Loaded {
    std::shared_ptr<const model::Trace> trace;
    std::shared_ptr<const analysis::AnalysisResult> analysis;
};

Loaded dataLoadingTrace() {
    TraceText t;
    for (int s = 0; s < 4; ++s) {
        const int64_t b = s * 700;
        t.step(s, b, 690);
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
        t.cpu("aten::copy_", b + 10, 300);
        t.launch("k_compute", b + 450, 5, b + 460, 200);
    }
    Loaded l;
    l.trace = t.load();
    l.analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*l.trace));
    return l;
}

Loaded realTrace(const char* relative) {
    Loaded l;
    auto r = importers::importFile(test::sharedTraces() / relative);
    if (!r) return l;
    l.trace = r.value();
    l.analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*l.trace));
    return l;
}

} // namespace

class TestFindingsPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void modelPassesTheModelTesterThroughResets() {
        FindingsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        const Loaded l = dataLoadingTrace();
        model.setAnalysis(l.analysis);
        QCOMPARE(model.rowCount(), int(l.analysis->findings.size()));
        model.setAnalysis(nullptr);
        QCOMPARE(model.rowCount(), 0);
        model.setAnalysis(l.analysis);
    }

    void rowsShowTheFindingsLargestSavingFirst() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const Loaded l = realTrace("kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        QVERIFY(l.analysis);
        FindingsModel model;
        model.setAnalysis(l.analysis);
        QVERIFY(model.rowCount() >= 2);
        for (int r = 0; r < model.rowCount(); ++r) {
            const analysis::Finding& f = l.analysis->findings[size_t(r)];
            QCOMPARE(model.data(model.index(r, FindingsModel::Title)).toString(), QString::fromStdString(f.title));
            if (r) QVERIFY(model.data(model.index(r, 0), Qt::UserRole).toLongLong() <=
                           model.data(model.index(r - 1, 0), Qt::UserRole).toLongLong());
        }
        // The known answer: data loading is the top finding at 33.2% of the step time (the
        // replay of moving it to workers; 33.1% is its idle time).
        QCOMPARE(l.analysis->findings.front().kind, analysis::FindingKind::DataLoading);
        QCOMPARE(model.data(model.index(0, FindingsModel::Share)).toString(), QString("33.2%"));
        QCOMPARE(model.data(model.index(0, FindingsModel::Severity)).toString(), QString("high"));
    }

    void selectingAFindingShowsItsExplanationAndFix() {
        const Loaded l = dataLoadingTrace();
        FindingsPanel panel;
        panel.setData(l.trace, l.analysis);
        QSignalSpy spy(&panel, &FindingsPanel::findingSelected);
        QVERIFY(!l.analysis->findings.empty());
        // A click on the first row selects it.
        panel.show();
        QCoreApplication::processEvents();
        const QRect cell = panel.view()->visualRect(panel.model()->index(0, FindingsModel::Title));
        QTest::mouseClick(panel.view()->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toInt(), 0);
        QCOMPARE(panel.selectedFinding(), 0);
        const analysis::Finding& f = l.analysis->findings.front();
        const QString text = panel.detail()->toPlainText();
        QVERIFY(text.contains(QString::fromStdString(f.title)));
        QVERIFY(text.contains("Fix"));
        QVERIFY(text.contains("num_workers"));  // the DataLoader snippet
        QVERIFY(text.contains("aten::copy_"));  // what the GPU waited for
        // Selecting the same row again does not re-emit.
        panel.selectFinding(0);
        QCOMPARE(spy.count(), 1);
    }

    void evidenceLinksAndTheSnippetButton() {
        const Loaded l = dataLoadingTrace();
        FindingsPanel panel;
        panel.setData(l.trace, l.analysis);
        panel.selectFinding(0);
        const analysis::Finding& f = l.analysis->findings.front();
        QVERIFY(!f.evidence.empty());
        QVERIFY(panel.detail()->toHtml().contains(QString("slice:%1").arg(f.evidence.front().index())));
        QSignalSpy ev(&panel, &FindingsPanel::evidenceActivated);
        Q_EMIT panel.detail()->anchorClicked(QUrl(QString("slice:%1").arg(f.evidence.front().index())));
        QCOMPARE(ev.count(), 1);
        QCOMPARE(ev.at(0).at(0).value<model::SliceId>(), f.evidence.front());
        auto* copy = panel.findChild<QPushButton*>();
        QVERIFY(copy && copy->isEnabled());
        copy->click();
        QCOMPARE(QApplication::clipboard()->text(), QString::fromStdString(f.snippet));
    }

    void sharesSayWhatTheyAreOf() {
        FindingsModel model;
        const Loaded steps = dataLoadingTrace();
        model.setAnalysis(steps.analysis);
        QCOMPARE(model.headerData(FindingsModel::Share, Qt::Horizontal).toString(),
                 QString("of step time"));
        QVERIFY(model.headerData(FindingsModel::Share, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains("not one step"));
        // A finding with a fix to replay shows its saving; one without shows the idle time
        // charged to it, never "0 ns".
        for (int row = 0; row < model.rowCount(); ++row) {
            const analysis::Finding& f = steps.analysis->findings[size_t(row)];
            const QString saves = model.data(model.index(row, FindingsModel::Saving)).toString();
            QVERIFY2(!saves.startsWith("0 "), qPrintable(saves));
            if (f.replayFix == analysis::Fix::Count &&
                analysis::detectorEntry(f.kind).stage != analysis::DetectorStage::Context)
                QVERIFY2(saves.startsWith("idle ") || saves == "—", qPrintable(saves));
        }
        // Without ProfilerStep annotations the window is the whole trace.
        TraceText t;
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 400);
        t.launch("k_compute", 450, 5, 460, 200);
        Loaded all;
        all.trace = t.load();
        all.analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*all.trace));
        QVERIFY(all.analysis->steps.empty());
        model.setAnalysis(all.analysis);
        QCOMPARE(model.headerData(FindingsModel::Share, Qt::Horizontal).toString(), QString("of window"));
    }

    void noFindingsSaysSo() {
        TraceText t;
        for (int s = 0; s < 3; ++s) {
            t.step(s, s * 1000, 1000);
            t.launch("k_busy", s * 1000 + 5, 5, s * 1000 + 10, 985);
        }
        Loaded l;
        l.trace = t.load();
        l.analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*l.trace));
        FindingsPanel panel;
        panel.setData(l.trace, l.analysis);
        QVERIFY(l.analysis->findings.empty());
        QVERIFY(panel.detail()->toPlainText().contains("No findings"));
        QCOMPARE(panel.model()->rowCount(), int(l.analysis->findings.size()));
        panel.setData(nullptr, nullptr);  // closing a document
        QCOMPARE(panel.model()->rowCount(), 0);
        panel.selectFinding(3);  // out of range: nothing happens, no crash
        QVERIFY(panel.model()->finding(3) == nullptr);
    }

    void cpuOnlyTraceShowsStepTimeByCause() {
        // No GPU work: the chart shows the step thread's time by cause instead of hiding.
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 600);
            t.cpu("aten::conv2d", b + 600, 400);
        }
        Loaded l;
        l.trace = t.load(-1);
        l.analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*l.trace));
        QVERIFY(l.analysis->devices.empty() && l.analysis->hostOnly);
        FindingsPanel p;
        p.resize(500, 700);
        p.setData(l.trace, l.analysis);
        p.show();
        auto* chart = p.findChild<IdleChart*>();
        QVERIFY(chart && chart->isVisible());
        const QImage img = chart->grab().toImage();
        const QColor loading = Theme::current().causeColor(analysis::IdleCause::DataLoading);
        int hits = 0;  // the data_loading segment: 60 % of the bar
        for (int x = 0; x < img.width(); ++x) hits += img.pixelColor(x, 28) == loading;
        QVERIFY2(hits > img.width() / 2, qPrintable(QString("%1 of %2 px").arg(hits).arg(img.width())));
    }
};

QTEST_MAIN(TestFindingsPanel)
#include "test_findings_panel.moc"
