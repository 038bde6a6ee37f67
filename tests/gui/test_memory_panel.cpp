// The Memory tab as a user meets it: an inline profile_memory trace whose figures are known
// (the summary, the three tables, grouping, the filter, a double-click selecting the
// operator, a click on the curve zooming the timeline), the real H100 transformer trace
// against its own [memory] events, and a trace without memory events saying how to record
// them. The tab follows a step scope. An allocator snapshot opens on it, with its Allocator
// tab (segments, the summary's figures), the Active blocks picture and a block's stack.
#include "test_support.h"
#include "trace_text.h"

#include "allocator_views.h"
#include "load_worker.h"
#include "main_window.h"
#include "memory_panel.h"
#include "panel.h"
#include "panel_id.h"
#include "timeline/timeline_view.h"

#include "stallscope/base/text_format.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

#include <filesystem>

using namespace stallscope;
using namespace stallscope::gui;

namespace {
constexpr int64_t MiB = int64_t(1) << 20;

std::shared_ptr<const model::Trace> inlineTrace() {
    test::TraceText t;
    t.step(1, 0, 1000);
    t.python("model.py(10): forward", 5, 440);
    t.cpu("aten::linear", 10, 190);
    t.cpu("aten::addmm", 20, 80);
    t.alloc(30, 0x100, 4 * MiB, 14 * MiB, 20 * MiB);
    t.cpu("aten::relu", 300, 100);
    t.alloc(310, 0x200, 2 * MiB, 16 * MiB, 20 * MiB);
    t.alloc(600, 0x100, -4 * MiB, 12 * MiB, 20 * MiB);
    t.launch("k_step", 20, 5, 40, 100);
    return t.load();
}
} // namespace

class TestMemoryPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void inlineTraceFigures() {
        auto trace = inlineTrace();
        QVERIFY(trace);
        auto a = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
        MemoryPanel p;
        p.setData(trace, a);
        const analysis::MemoryAnalysis& m = p.memory();
        QCOMPARE(m.devices.size(), size_t(1));
        QVERIFY2(p.summary()->text().contains("16.8 MB"), qPrintable(p.summary()->text()));
        QVERIFY(p.summary()->text().contains("step #1"));
        // Live at the peak: addmm's 4 MiB and relu's 2 MiB, by operator then by frame.
        QTableWidget* live = p.table(MemoryPanel::LiveTab);
        QCOMPARE(live->rowCount(), 2);
        QCOMPARE(live->item(0, 0)->text(), QString("aten::addmm"));
        p.grouping()->setCurrentIndex(1);
        QCOMPARE(live->rowCount(), 1);
        QCOMPARE(live->item(0, 0)->text(), QString("model.py(10): forward"));
        QCOMPARE(live->item(0, 2)->text(), QString("2"));
        // Operators: as many rows as the analysis has, sorted by total increase.
        QTableWidget* ops = p.table(MemoryPanel::OperatorsTab);
        QCOMPARE(ops->rowCount(), int(m.devices[0].operators.size()));
        QCOMPARE(ops->item(0, 0)->text(), QString("aten::addmm")); // +4 MiB, then linear's total
        // Events: every one, the filter keeps the matching ones, activating one selects its
        // operator.
        QSortFilterProxyModel* ev = p.events();
        QCOMPARE(ev->rowCount(), 0); // laid out when looked at
        p.showTab(MemoryPanel::EventsTab);
        QCOMPARE(ev->rowCount(), 3);
        QCOMPARE(ev->index(0, 5).data().toString(), QString("aten::addmm")); // in time order
        p.filter()->setText("RELU");
        QCOMPARE(ev->rowCount(), 1);
        QCOMPARE(ev->index(0, 1).data().toString(), QString("2.1 MB"));
        QSignalSpy selected(&p, &MemoryPanel::eventRequested);
        Q_EMIT p.eventsView()->activated(ev->index(0, 3));
        QCOMPARE(selected.count(), 1);
        const auto s = selected.front().front().value<model::SliceId>();
        QCOMPARE(std::string(trace->str(trace->slices().name[s.index()])),
                 std::string("aten::relu"));
        p.filter()->clear();
        QCOMPARE(ev->rowCount(), 3);
        // Sorted by bytes: the free first.
        p.eventsView()->sortByColumn(1, Qt::AscendingOrder);
        QVERIFY(ev->index(0, 1).data().toString().startsWith("-"));
        // A click on the curve asks for that time.
        p.resize(1200, 500);
        p.show();
        QVERIFY(QTest::qWaitForWindowExposed(&p));
        QSignalSpy time(&p, &MemoryPanel::timeRequested);
        const QPoint mid(p.curve()->width() / 2, p.curve()->height() / 2);
        QTest::mouseClick(p.curve(), Qt::LeftButton, {}, mid);
        QCOMPARE(time.count(), 1);
        QCOMPARE(time.front().front().toLongLong(), p.curve()->timeAt(mid.x()));
    }

    void noMemoryEventsSaysHowToRecordThem() {
        test::TraceText t;
        t.launch("k", 0, 5, 10, 100);
        auto trace = t.load();
        MemoryPanel p;
        p.setData(trace,
                  std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace)));
        QVERIFY(p.memory().empty());
        QVERIFY(p.summary()->text().contains("profile_memory=True"));
        QCOMPARE(p.events()->rowCount(), 0);
    }

    void realTraceInTheWindowAndItsScope() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path =
            test::sharedTraces() /
            "memory/kineto/"
            "sidnb13_h100_transformer_dc3b0e7228dd_851.1752215573993169006.pt.trace.json";
        if (!std::filesystem::exists(path))
            QSKIP("the transformer trace is not in ../shared/traces");
        QString error;
        auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.resize(1400, 900);
        w.setDocument(doc);
        w.showView(PanelId::Memory);
        auto* p = w.findChild<MemoryPanel*>();
        QVERIFY(p);
        const model::Trace& t = *doc->traces.front().entry.trace;
        // The peak is the largest Total Allocated of GPU 0's events in the window.
        const auto& win = doc->traces.front().analysis->window;
        int64_t peak = -1;
        size_t events = 0;
        for (const model::MemorySample& s : t.memorySamples())
            if (s.deviceType == 1 && s.deviceId == 0 && s.ts >= win.startNs && s.ts <= win.endNs)
                peak = std::max(peak, s.totalAllocated), ++events;
        QVERIFY(!p->memory().empty());
        QCOMPARE(p->memory().devices.front().peakAllocated, peak);
        p->showTab(MemoryPanel::EventsTab);
        const auto gpuEvents = std::count_if(t.memorySamples().begin(), t.memorySamples().end(),
                                             [](const auto& s) { return s.deviceType == 1; });
        QCOMPARE(p->events()->rowCount(), int(gpuEvents));
        QCOMPARE(p->memory().devices.front().events, uint64_t(events));
        // A step as the scope: the tab shows that step's events only.
        QVERIFY(findPanel("memory") && findPanel("memory")->followsScope);
        const auto& steps = doc->traces.front().analysis->steps;
        QVERIFY(steps.size() >= 2);
        w.selectStep(steps[1].number);
        QTRY_VERIFY_WITH_TIMEOUT(w.scopedAnalysis() != nullptr, 20000);
        QVERIFY(p->memory().devices.front().events < uint64_t(events));
    }

    void allocatorSnapshotOpensOnItsMemory() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path = test::sharedTraces() / "memory/snapshots/silmont_mem_snapshot.pickle";
        if (!std::filesystem::exists(path)) QSKIP("the snapshot is not in ../shared/traces");
        QString error;
        auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.resize(1400, 900);
        w.setDocument(doc);
        w.show();
        auto* p = w.findChild<MemoryPanel*>();
        QVERIFY(p);
        QTRY_VERIFY(p->isVisible()); // a snapshot opens on its memory
        const model::Trace& t = *doc->traces.front().entry.trace;
        const model::AllocatorSnapshot* snap = t.allocatorSnapshot();
        QVERIFY(snap);
        QVERIFY(p->tabs()->isTabEnabled(MemoryPanel::AllocatorTab));
        QVERIFY(!p->tabs()->isTabEnabled(MemoryPanel::OperatorsTab)); // stacks, not operators
        // The summary's figures are the segments' sums.
        int64_t reserved = 0;
        for (const auto& seg : snap->segments) reserved += seg.totalSize;
        const QString want = QString::fromStdString(base::formatBytes(uint64_t(reserved)));
        QVERIFY2(p->allocatorSummary()->text().contains(want),
                 qPrintable(p->allocatorSummary()->text() + " lacks " + want));
        QCOMPARE(p->segments()->segmentCount(), int(snap->segments.size()));
        // Active blocks: the allocations, coloured up to the limit; one found under the mouse
        // shows its stack, frame by frame.
        p->showTab(MemoryPanel::ActiveTab);
        ActiveMemoryWidget* a = p->activeBlocks();
        QTRY_VERIFY(a->isVisible() && a->width() > 100);
        const size_t allocations =
            size_t(std::count_if(snap->entries.begin(), snap->entries.end(), [](const auto& e) {
                return e.action == model::SnapshotAction::Alloc;
            }));
        QCOMPARE(a->coloured().size(), std::min(ActiveMemoryWidget::kColoured, allocations));
        int row = -1;
        for (int x = a->width() - 12; x > 70 && row < 0; x -= 3)
            for (int y = 25; y < a->height() - 22 && row < 0; y += 3) row = a->blockAt({x, y});
        QVERIFY2(row >= 0, "no block under any point of the picture");
        p->showBlock(row);
        const auto& e = p->memory().devices.front().rows[size_t(row)];
        QVERIFY(e.bytes > 0);
        const auto frames = snap->stack(e.stack);
        QVERIFY(!frames.empty());
        QVERIFY2(
            p->blockInfo()->text().contains(QString::fromStdString(snap->frameText(frames[0]))),
            qPrintable(p->blockInfo()->text()));
    }
};

QTEST_MAIN(TestMemoryPanel)
#include "test_memory_panel.moc"
