// The Overview tab as a user meets it: it opens first when the trace has steps, one bar per
// step whose parts add up to the step (kernel, memcpy, ..., other), the steady mean beside
// them, the same figures as a table, the idle causes on a switch, and a click on a step
// selects it in the Step box. A trace without steps opens on Details and says why.
#include "test_support.h"
#include "trace_text.h"

#include "details_panel.h"
#include "load_worker.h"
#include "main_window.h"
#include "overview_panel.h"
#include "panel.h"
#include "theme.h"

#include "stallscope/base/text_format.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
using namespace stallscope::gui;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

/// Three 1 ms steps, each: a 10 us launch at +100, its 300 us kernel at +200, a 100 us copy
/// at +600.
std::string threeSteps() {
    TraceText t;
    for (int n = 0; n < 3; ++n) {
        const int64_t at = n * 1000;
        t.step(n, at, 1000);
        t.launch("k_gemm", at + 100, 10, at + 200, 300);
        t.memcpy("Memcpy HtoD (Pageable -> Device)", at + 600, 100, t.nextCorrelation(), 4096);
    }
    return t.json();
}

int64_t sum(const std::vector<StepBarsWidget::Segment>& segs) {
    int64_t s = 0;
    for (const auto& x : segs) s += x.ns;
    return s;
}

int64_t of(const std::vector<StepBarsWidget::Segment>& segs, const QString& label) {
    for (const auto& x : segs)
        if (x.label == label) return x.ns;
    return -1;
}

} // namespace

class TestOverviewPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void stepsAreBarsThatAddUp() {
        QTemporaryDir dir;
        const QString path = dir.filePath("steps.pt.trace.json");
        test::writeFile(path.toStdString(), threeSteps());
        QString error;
        auto doc = LoadWorker::loadNow(path, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        auto* ov = w.findChild<OverviewPanel*>();
        QVERIFY(ov);
        QCOMPARE(w.bottomTabs()->currentWidget(), static_cast<QWidget*>(ov));
        QCOMPARE(w.bottomTabs()->tabText(w.bottomTabs()->currentIndex()), QString("Overview"));
        StepBarsWidget* bars = ov->bars();
        QCOMPARE(bars->barCount(), size_t(4)); // three steps and their mean
        for (size_t i = 0; i < 3; ++i) {
            const auto segs = bars->segments(i);
            QCOMPARE(sum(segs), 1000 * us); // every instant of the step charged once
            QCOMPARE(of(segs, "Kernel"), 300 * us);
            QCOMPARE(of(segs, "Memcpy"), 100 * us);
            QCOMPARE(of(segs, "Runtime"), 10 * us);
        }
        QCOMPARE(of(bars->segments(3), "Kernel"), 300 * us);
        const QString meanText = QString::fromStdString(base::formatDuration(1000 * us));
        QVERIFY2(ov->summary()->text().contains(meanText), qPrintable(ov->summary()->text()));
        // The table: a row per bar, the kernel column with the bars' figure.
        QTableWidget* t = ov->table();
        QCOMPARE(t->rowCount(), 4);
        int kernelCol = -1;
        for (int c = 0; c < t->columnCount(); ++c)
            if (t->horizontalHeaderItem(c)->text() == "Kernel") kernelCol = c;
        QVERIFY(kernelCol > 1);
        QVERIFY(t->item(0, kernelCol)->text().contains("30.0%"));
        // A click on step #1's row selects it in the Step box (index 0 is "All steps").
        auto* steps = w.findChild<QComboBox*>("stepsCombo");
        QVERIFY(steps);
        Q_EMIT t->cellClicked(1, 0);
        QCOMPARE(steps->currentIndex(), 2);
        // A click on the first bar does the same.
        QSignalSpy spy(ov, &OverviewPanel::stepActivated);
        bars->resize(600, 200);
        const int x = bars->width() / 2;
        const int idx = bars->stepAt(x);
        QVERIFY(idx >= 0);
        QTest::mouseClick(bars, Qt::LeftButton, {}, QPoint(x, 100));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.front().front().toLongLong(), qlonglong(idx));
        // Why the GPU was idle: busy at the bottom, the causes above, still the whole step.
        auto* mode = ov->findChild<QComboBox*>("overviewMode");
        mode->setCurrentIndex(1);
        const auto idle = bars->segments(0);
        QCOMPARE(of(idle, "GPU busy"), 400 * us);
        QCOMPARE(sum(idle), 1000 * us);
    }

    void noStepsOpensOnDetailsAndSaysWhy() {
        TraceText t;
        t.launch("k", 100, 10, 200, 300);
        QTemporaryDir dir;
        const QString path = dir.filePath("nosteps.pt.trace.json");
        test::writeFile(path.toStdString(), t.json());
        QString error;
        auto doc = LoadWorker::loadNow(path, {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.setDocument(doc);
        auto* ov = w.findChild<OverviewPanel*>();
        QCOMPARE(w.bottomTabs()->currentWidget(),
                 static_cast<QWidget*>(w.findChild<DetailsPanel*>()));
        QCOMPARE(ov->bars()->barCount(), size_t(0));
        QVERIFY(ov->summary()->text().contains("no steps"));
    }
};

QTEST_MAIN(TestOverviewPanel)
#include "test_overview_panel.moc"
