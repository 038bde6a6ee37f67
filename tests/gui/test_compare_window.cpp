// The compare view (compare_window.h): both runs' timelines linked on one time scale and
// aligned at a step or at a table row's events, the aligned tables as the diff has them, the
// findings before and after, the overview's bars on one scale, the differential flame graph;
// and the main window's ways in (Compare With Baseline needs an open trace).
#include "compare_window.h"
#include "diff_flame_widget.h"
#include "diff_pair_traces.h"
#include "gui_text.h"
#include "load_worker.h"
#include "main_window.h"
#include "overview_panel.h"
#include "test_support.h"
#include "timeline/timeline_view.h"

#include <QApplication>
#include <QComboBox>
#include <QDropEvent>
#include <QLabel>
#include <QMimeData>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <fstream>

using namespace stallscope;
using namespace stallscope::gui;

namespace {
std::shared_ptr<Document> load(const QTemporaryDir& dir, const char* name,
                               const test::TraceText& t) {
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << t.json();
    QString error;
    auto doc = LoadWorker::loadNow(path, {}, &error);
    if (!doc) qWarning("%s", qPrintable(error));
    return doc;
}
} // namespace

class TestCompareWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::shared_ptr<Document> m_before, m_after;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_before = load(m_dir, "before.json", test::beforeTrace());
        m_after = load(m_dir, "after.json", test::afterTrace());
        QVERIFY(m_before && m_after);
    }

    void tablesHoldTheDiffsRows() {
        CompareWindow w;
        w.resize(1400, 900);
        w.setDocuments(m_before, m_after);
        QVERIFY(w.diff());
        QCOMPARE(w.table(false)->rowCount(), int(w.diff()->operators.size()));
        QCOMPARE(w.table(true)->rowCount(), int(w.diff()->kernels.size()));
        QCOMPARE(w.findingsTable()->rowCount(), int(w.diff()->findings.size()));
        // The largest change first, its name as the diff has it; the family row says its kernels.
        QCOMPARE(w.table(false)->item(0, 1)->text(), QString("aten::mm"));
        bool family = false;
        for (int r = 0; r < w.table(true)->rowCount(); ++r)
            family |= w.table(true)->item(r, 1)->text().startsWith("gemm kernels (1 → 2)");
        QVERIFY(family);
        QVERIFY(w.summary()->text().contains("Step time"));
        QVERIFY(!w.flame()->graph().empty());
    }

    void timelinesLinkedAtTheChosenStep() {
        CompareWindow w;
        w.resize(1400, 900);
        w.show();
        w.setDocuments(m_before, m_after);
        const auto& sb = m_before->traces.front().analysis->steps;
        const auto& sa = m_after->traces.front().analysis->steps;
        QCOMPARE(w.stepCombo()->count(), int(std::min(sb.size(), sa.size())));
        w.alignAtStep(1);
        QCOMPARE(w.offsetNs(), sa[1].startNs - sb[1].startNs);
        auto check = [&] {
            const TimelineViewport& b = w.timeline(false)->viewport();
            const TimelineViewport& a = w.timeline(true)->viewport();
            QVERIFY(std::abs(a.startNs - (b.startNs + w.offsetNs())) <= int64_t(b.nsPerPx) + 1);
            QVERIFY(std::abs(a.nsPerPx - b.nsPerPx) <= 1e-6 * b.nsPerPx);
        };
        check();
        // Zooming and panning either one moves the other.
        w.timeline(false)->zoomBy(2.0, 600);
        check();
        w.timeline(true)->panByPixels(-120);
        check();
    }

    void aRowSelectsItsEventsInBothTimelines() {
        CompareWindow w;
        w.resize(1400, 900);
        w.show();
        w.setDocuments(m_before, m_after);
        const auto& rows = w.diff()->operators;
        int fp32 = -1;
        for (size_t i = 0; i < rows.size(); ++i)
            if (rows[i].name == "aten::mm" && rows[i].before.present() && rows[i].after.present())
                fp32 = int(i);
        QVERIFY(fp32 >= 0);
        w.selectRow(false, fp32);
        QCOMPARE(w.timeline(false)->state().selected, rows[size_t(fp32)].before.example);
        QCOMPARE(w.timeline(true)->state().selected, rows[size_t(fp32)].after.example);
        // Aligned at the two calls.
        const auto& tb = *m_before->traces.front().entry.trace;
        const auto& ta = *m_after->traces.front().entry.trace;
        QCOMPARE(w.offsetNs(), ta.slices().start[rows[size_t(fp32)].after.example.index()] -
                                   tb.slices().start[rows[size_t(fp32)].before.example.index()]);
        // A row of one run alone clears the other's selection.
        for (size_t i = 0; i < rows.size(); ++i)
            if (!rows[i].before.present()) {
                w.selectRow(false, int(i));
                QVERIFY(!w.timeline(false)->state().selected.valid());
                QCOMPARE(w.timeline(true)->state().selected, rows[i].after.example);
                break;
            }
    }

    void overviewBarsShareOneScale() {
        CompareWindow w;
        w.resize(1400, 900);
        w.setDocuments(m_before, m_after);
        const auto bars = w.findChildren<StepBarsWidget*>();
        QCOMPARE(bars.size(), qsizetype(2));
        QCOMPARE(bars[0]->barCount(), size_t(2 + 1)); // the steps and their mean
        QCOMPARE(bars[1]->barCount(), size_t(4 + 1));
        QCOMPARE(bars[0]->scaleNs(), bars[1]->scaleNs());
        QCOMPARE(bars[0]->scaleNs(), std::max(bars[0]->longestBarNs(), bars[1]->longestBarNs()));
        // A click on AFTER's second bar aligns the timelines at the second step.
        const auto& sb = m_before->traces.front().analysis->steps;
        const auto& sa = m_after->traces.front().analysis->steps;
        Q_EMIT bars[1]->stepClicked(sa[1].number);
        QCOMPARE(w.stepCombo()->currentIndex(), 1);
        QCOMPARE(w.offsetNs(), sa[1].startNs - sb[1].startNs);
    }

    void flameClickZooms() {
        CompareWindow w;
        w.resize(1400, 900);
        w.show();
        w.setDocuments(m_before, m_after);
        w.tabs()->setCurrentIndex(CompareWindow::Flame);
        QApplication::processEvents();
        DiffFlameWidget* f = w.flame();
        int mm = -1;
        for (size_t i = 0; i < f->graph().nodes.size(); ++i)
            if (f->graph().nodes[i].name == "aten::mm") mm = int(i);
        QVERIFY(mm > 0);
        const QRectF r = f->frameRect(mm);
        QVERIFY(!r.isEmpty());
        QCOMPARE(f->frameAt(r.center()), mm);
        QTest::mouseClick(f, Qt::LeftButton, {}, r.center().toPoint());
        QCOMPARE(f->zoomedNode(), mm);
        QCOMPARE(f->frameRect(mm).width(), double(f->width()));
    }

    void ranksRankByRank() {
        // Two single traces: no ranks to compare, the tab says why.
        CompareWindow w;
        w.setDocuments(m_before, m_after);
        QVERIFY(!w.tabs()->isTabEnabled(CompareWindow::Ranks));
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const QString dlrm =
            QString::fromStdString((test::sharedTraces() / "param-dlrm-8rank").string());
        QString error;
        auto folder = LoadWorker::loadNow(dlrm, {}, &error);
        QVERIFY2(folder, qPrintable(error));
        w.setDocuments(folder, folder);
        QVERIFY(w.tabs()->isTabEnabled(CompareWindow::Ranks));
        QCOMPARE(w.ranksTable()->rowCount(), 8);
        const auto& r = folder->ranks.ranks;
        QCOMPARE(w.ranksTable()->item(1, 1)->text(),
                 durationText(r[1].windowNs) + " → " + durationText(r[1].windowNs));
        QCOMPARE(w.ranksTable()->item(1, 2)->text(),
                 durationText(r[1].waitNs) + " → " + durationText(r[1].waitNs));
    }

    void memoryRecordingsSayWhereTheyCompare() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto snaps = test::sharedTraces() / "memory/snapshots";
        QString error;
        auto b = LoadWorker::loadNow(
            QString::fromStdString((snaps / "silmont_memory_forward_fp32_128.pickle").string()), {},
            &error);
        auto a = LoadWorker::loadNow(
            QString::fromStdString((snaps / "silmont_memory_forward_bf16_128.pickle").string()), {},
            &error);
        QVERIFY2(b && a, qPrintable(error));
        CompareWindow w;
        w.setDocuments(b, a);
        QVERIFY(!w.diff());
        QVERIFY(w.summary()->text().contains("stallscope-cli diff BEFORE AFTER"));
    }

    void compareNeedsAnOpenTrace() {
        // The window's dropEvent, called as a drop calls it (QApplication routes a sent Drop
        // through the drag manager, which has no drag in a test).
        struct Window : MainWindow {
            using MainWindow::dropEvent;
        } w;
        QVERIFY(!w.compareWithBaseline(m_dir.filePath("before.json")));
        QVERIFY(!w.errorBanner()->text().isEmpty());
        w.setDocument(m_after);
        CompareWindow* c = w.compareWithBaseline(m_dir.filePath("before.json"));
        QVERIFY(c);
        QTRY_VERIFY_WITH_TIMEOUT(c->diff() != nullptr, 20000);
        QCOMPARE(c->table(false)->rowCount(), int(c->diff()->operators.size()));
        c->close();
        // A trace dropped with Shift on an open one is its baseline: the compare view opens.
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(m_dir.filePath("before.json"))});
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::ShiftModifier);
        w.dropEvent(&drop);
        CompareWindow* dropped = nullptr;
        for (QWidget* top : QApplication::topLevelWidgets())
            if (auto* cw = qobject_cast<CompareWindow*>(top); cw && cw != c && cw->isVisible())
                dropped = cw;
        QVERIFY(dropped);
        QTRY_VERIFY_WITH_TIMEOUT(dropped->diff() != nullptr, 20000);
        QCOMPARE(dropped->diff()->step.beforeSteps, size_t(2));
        dropped->close();
    }
};

QTEST_MAIN(TestCompareWindow)
#include "test_compare_window.moc"
