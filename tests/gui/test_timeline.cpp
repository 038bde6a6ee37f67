// The timeline: lanes, viewport maths, hit testing, navigation keys, range selection, the
// level-of-detail bound and the colours actually painted (offscreen pixels).
#include "trace_text.h"

#include "theme.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"

#include <QApplication>
#include <QClipboard>
#include <QImage>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>

#include <random>

using namespace stallscope;
using namespace stallscope::gui;
using model::SliceId;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

/// One step: conv2d launches k_conv (200..300 us) with a 1 us launch call, relu launches
/// k_relu (600..900 us).
std::shared_ptr<const model::Trace> smallTrace() {
    TraceText t;
    t.step(0, 0, 1000);
    t.cpu("aten::conv2d", 100, 300);
    t.launch("k_conv", 150, 1, 200, 100);
    t.cpu("aten::relu", 500, 150);
    t.launch("k_relu", 560, 10, 600, 300);
    return t.load();
}

SliceId sliceNamed(const model::Trace& t, std::string_view name) {
    const auto& s = t.slices();
    for (size_t i = 0; i < s.size(); ++i)
        if (t.str(s.name[i]) == name) return SliceId(static_cast<uint32_t>(i));
    return {};
}

struct Fixture {
    std::shared_ptr<const model::Trace> trace;
    std::shared_ptr<const analysis::AnalysisResult> analysis;
    std::unique_ptr<TimelineView> view;

    explicit Fixture(std::shared_ptr<const model::Trace> t) : trace(std::move(t)) {
        analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*trace));
        view = std::make_unique<TimelineView>();
        view->resize(1200, 600);
        view->setData(trace, analysis);
        view->show();
        QCoreApplication::processEvents();
    }
    QImage paint() const { return view->grab().toImage(); }
};

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void lanesHoldEverySliceOnceSortedAndDisjoint() {
        Fixture f(smallTrace());
        QVERIFY(f.trace);
        const auto& s = f.trace->slices();
        size_t inLanes = 0;
        for (const TimelineRow& r : f.view->layout().rows()) {
            if (r.kind != RowKind::Slices) continue;
            for (int d = 0; d < r.lanes; ++d) {
                const auto& lane = f.view->layout().lane(r.track, d);
                inLanes += lane.size();
                for (size_t i = 0; i < lane.size(); ++i) {
                    QCOMPARE(s.track[lane[i]], r.track);
                    QCOMPARE(int(s.depth[lane[i]]), d);
                    if (i) QVERIFY(s.start[lane[i]] >= s.end(lane[i - 1]));
                }
            }
        }
        QCOMPARE(inLanes, s.size());
        // One process group and one GPU group.
        QCOMPARE(f.view->layout().groups().size(), size_t(2));
        QVERIFY(f.view->layout().rowsForDevice(0).size() >= 2);  // the stream and the launching thread
    }

    void viewportMapsTimeToPixelsAndBack() {
        Fixture f(smallTrace());
        f.view->zoomTo(f.trace->slices().start[0], f.trace->slices().start[0] + 1000 * us, 0);
        const TimelineViewport& vp = f.view->viewport();
        QCOMPARE(vp.xOf(f.trace->slices().start[0]), double(TimelineViewport::kHeaderWidth));
        QVERIFY(std::abs(vp.xOf(f.trace->slices().start[0] + 1000 * us) - vp.width) < 1.5);
        for (double x : {300.0, 640.5, 1100.0}) QVERIFY(std::abs(vp.xOf(vp.nsAt(x)) - x) < 0.01);
    }

    void clickSelectsTheEventUnderTheMouse() {
        Fixture f(smallTrace());
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 1000 * us, 0);
        const SliceId k = sliceNamed(*f.trace, "k_conv");
        QVERIFY(k.valid());
        const QRectF r = TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), k);
        QVERIFY(r.isValid());
        QSignalSpy spy(f.view.get(), &TimelineView::sliceSelected);
        QTest::mouseClick(f.view.get(), Qt::LeftButton, {}, r.center().toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<SliceId>(), k);
        QCOMPARE(f.view->state().selected, k);
        // A click on empty space clears the selection.
        QTest::mouseClick(f.view.get(), Qt::LeftButton, {}, QPoint(f.view->width() - 30, f.view->height() - 10));
        QVERIFY(!f.view->state().selected.valid());
    }

    // A deep Python stack opens folded to its first levels, so the GPU rows stay on screen;
    // a click on the thread's name shows every level and a second folds it back. Deeper
    // slices are drawn (and hit) in the last level shown.
    // Counter rows read out under the cursor: utilisation over the pixels around it, a
    // memory counter's value in force at that time.
    void counterRowsReadOutUnderTheCursor() {
        test::TraceText t;
        t.launch("k_half", 0, 5, 1000, 1000); // busy [1000, 2000) us
        auto allocated = [&](int64_t ts, int64_t bytes) {
            t.add(
                R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 1, "ts": )" +
                std::to_string(ts) +
                R"(, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1, "Total Allocated": )" +
                std::to_string(bytes) + R"(, "Total Reserved": 8000000000}})");
        };
        allocated(500, 2'000'000'000);
        allocated(1500, 6'000'000'000);
        Fixture f(t.load());
        const auto& rows = f.view->layout().rows();
        int util = -1, mem = -1, reserved = -1;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].kind != RowKind::Counter) continue;
            const auto& c = f.view->layout().counters()[size_t(rows[i].counter)];
            if (c.kind == CounterKind::Utilization) util = int(i);
            if (c.kind == CounterKind::Memory) (c.reserved ? reserved : mem) = int(i);
        }
        QVERIFY(util >= 0 && mem >= 0 && reserved >= 0);
        QCOMPARE(rows[size_t(reserved)].label, QString("GPU memory reserved"));
        QVERIFY(
            f.view->counterReadout(reserved, f.view->viewport().xOf(f.trace->startNs() + 2000 * us))
                .contains("8000 MB"));
        const int64_t t0 = f.trace->startNs();
        f.view->zoomTo(t0, t0 + 3000 * us, 0);
        const double xBusy = f.view->viewport().xOf(t0 + 1500 * us);
        const double xIdle = f.view->viewport().xOf(t0 + 2600 * us);
        QVERIFY2(f.view->counterReadout(util, xBusy).contains("busy 100.0 %"),
                 qPrintable(f.view->counterReadout(util, xBusy)));
        QVERIFY(f.view->counterReadout(util, xIdle).contains("busy 0.0 %"));
        const QString before = f.view->counterReadout(mem, f.view->viewport().xOf(t0 + 1000 * us));
        const QString after = f.view->counterReadout(mem, f.view->viewport().xOf(t0 + 2000 * us));
        QVERIFY2(before.contains("<br>2000 MB at"), qPrintable(before));
        QVERIFY2(after.contains("<br>6000 MB at"), qPrintable(after));
        QVERIFY(after.contains("(peak 6000 MB)"));
        QVERIFY(f.view->counterReadout(0, xBusy).isEmpty() || rows[0].kind == RowKind::Counter);
    }

    // The context menu on an event: copy, zoom, range, find similar, show in statistics.
    void contextMenuOnAnEvent() {
        test::TraceText t;
        t.cpu("aten::mm", 0, 100);
        t.launch("k_ctx", 10, 5, 200, 300);
        Fixture f(t.load());
        const SliceId k = sliceNamed(*f.trace, "k_ctx");
        const QRectF r = TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), k);
        QVERIFY(r.isValid());
        QMenu* menu = f.view->contextMenuAt(r.center().toPoint());
        QStringList names;
        for (QAction* a : menu->actions()) names << a->objectName();
        QVERIFY2(names.contains("copyName") && names.contains("zoomTo") &&
                     names.contains("selectRange") && names.contains("findSimilar") &&
                     names.contains("showInStatistics"),
                 qPrintable(names.join(',')));
        QCOMPARE(f.view->state().selected, k);
        QSignalSpy search(f.view.get(), &TimelineView::searchRequested);
        QSignalSpy stats(f.view.get(), &TimelineView::statisticsRequested);
        QSignalSpy range(f.view.get(), &TimelineView::rangeSelected);
        for (QAction* a : menu->actions()) {
            if (a->objectName() == "findSimilar" || a->objectName() == "showInStatistics" ||
                a->objectName() == "selectRange" || a->objectName() == "copyName")
                a->trigger();
        }
        QCOMPARE(search.count(), 1);
        QCOMPARE(search.at(0).at(0).toString(), QString("k_ctx"));
        QCOMPARE(stats.count(), 1);
        QCOMPARE(range.count(), 1);
        QCOMPARE(range.at(0).at(1).toLongLong() - range.at(0).at(0).toLongLong(), 300 * us);
        QCOMPARE(QApplication::clipboard()->text(), QString("k_ctx"));
        delete menu;
        // Off any event: fit all.
        QMenu* empty = f.view->contextMenuAt(QPoint(f.view->width() - 5, f.view->height() - 5));
        QCOMPARE(empty->actions().front()->objectName(), QString("fitAll"));
        delete empty;
    }

    // A row's name has a menu: hide the row, move its group to the top or one place.
    void rowsCanBeHiddenAndGroupsMoved() {
        test::TraceText t;
        t.cpu("aten::mm", 0, 100);
        t.launch("k_rows", 10, 5, 200, 300);
        Fixture f(t.load());
        auto& layout = f.view->layout();
        const std::vector<int> before = layout.groupOrder();
        QCOMPARE(before.size(), size_t(2)); // the host process and GPU 0
        int stream = -1;
        for (size_t i = 0; i < layout.rows().size(); ++i)
            if (layout.rows()[i].kind == RowKind::Slices &&
                layout.groups()[size_t(layout.rows()[i].group)].device >= 0)
                stream = int(i);
        QVERIFY(stream >= 0);
        const int gpuGroup = layout.rows()[size_t(stream)].group;
        QVERIFY(gpuGroup != before.front()); // the GPU is not first to begin with
        auto at = [&](int row) {
            const TimelineRow& r = f.view->layout().rows()[size_t(row)];
            return QPoint(40, TimelineViewport::kTopHeight + r.y + 5 - f.view->viewport().scrollY);
        };
        auto trigger = [&](QMenu* m, const char* name) {
            for (QAction* a : m->actions())
                if (a->objectName() == name) {
                    a->trigger();
                    delete m;
                    return true;
                }
            delete m;
            return false;
        };
        QVERIFY(trigger(f.view->contextMenuAt(at(stream)), "pinGroup"));
        QCOMPARE(f.view->layout().groupOrder().front(), gpuGroup);
        // The rows stay in y order, every row once.
        int y = 0;
        for (const TimelineRow& r : f.view->layout().rows()) {
            QCOMPARE(r.y, y);
            y += r.height;
        }
        QCOMPARE(f.view->layout().rows().size(), layout.rows().size());
        int moved = -1;
        for (size_t i = 0; i < f.view->layout().rows().size(); ++i)
            if (f.view->layout().rows()[i].kind == RowKind::Slices &&
                f.view->layout().rows()[i].group == gpuGroup)
                moved = int(i);
        QVERIFY(trigger(f.view->contextMenuAt(at(moved)), "groupDown"));
        QCOMPARE(f.view->layout().groupOrder(), before); // two groups: down again is where it was
        for (size_t i = 0; i < f.view->layout().rows().size(); ++i)
            if (f.view->layout().rows()[i].kind == RowKind::Slices &&
                f.view->layout().rows()[i].group == gpuGroup)
                moved = int(i);
        QVERIFY(trigger(f.view->contextMenuAt(at(moved)), "hideRow"));
        QVERIFY(!f.view->layout().rows()[size_t(moved)].visible);
        QCOMPARE(f.view->layout().rows()[size_t(moved)].height, 0);
        QCOMPARE(f.view->layout().hiddenRows(), 1);
        const SliceId k = sliceNamed(*f.trace, "k_rows");
        QVERIFY(!TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), k).isValid());
        QVERIFY(trigger(f.view->contextMenuAt(at(0)), "showHidden"));
        QCOMPARE(f.view->layout().hiddenRows(), 0);
        QVERIFY(f.view->layout().rows()[size_t(moved)].visible);
        // One row moves inside its group: the stream above the GPU's counters, and no further
        // (the group's header stays first).
        const auto& rows = f.view->layout().rows();
        const model::TrackId track = rows[size_t(moved)].track;
        int header = moved;
        while (rows[size_t(header)].kind != RowKind::Group) --header;
        QVERIFY(moved - header >= 2); // counters between the header and the stream
        for (int k = 0; k < 10; ++k) {
            QVERIFY(trigger(f.view->contextMenuAt(at(moved)), "rowUp"));
            moved = f.view->layout().rowOfTrack(track);
        }
        QCOMPARE(moved, header + 1);
        QCOMPARE(rows[size_t(header)].kind, RowKind::Group);
        QVERIFY(trigger(f.view->contextMenuAt(at(moved)), "rowDown"));
        QCOMPARE(f.view->layout().rowOfTrack(track), header + 2);
        y = 0;
        for (const TimelineRow& r : rows) {
            QCOMPARE(r.y, y);
            y += r.height;
        }
    }

    // Bookmarks: added at the selected event or the view's middle, kept in time order,
    // jumped to; the menu follows a launch to its GPU work and back.
    void bookmarksAndFollowingTheArrows() {
        test::TraceText t;
        t.cpu("aten::mm", 0, 100);
        t.launch("k_mark", 10, 5, 200, 300);
        Fixture f(t.load());
        QSignalSpy changed(f.view.get(), &TimelineView::bookmarksChanged);
        const SliceId k = sliceNamed(*f.trace, "k_mark");
        f.view->selectSlice(k, false);
        f.view->addBookmarkHere();
        f.view->clearSelection();
        f.view->addBookmark(f.trace->startNs(), "start");
        QCOMPARE(changed.count(), 2);
        QCOMPARE(f.view->bookmarks().size(), size_t(2));
        QCOMPARE(f.view->bookmarks()[0].label, QString("start")); // in time order
        QCOMPARE(f.view->bookmarks()[1].label, QString("k_mark"));
        QCOMPARE(f.view->bookmarks()[1].ns, f.trace->slices().start[k.index()]);
        const int64_t t0 = f.trace->startNs();
        f.view->zoomTo(t0 + 1000 * us, t0 + 1100 * us, 0);
        f.view->goToBookmark(1);
        const int64_t mid = (f.view->viewport().startNs + f.view->viewport().endNs()) / 2;
        QVERIFY(std::abs(mid - f.view->bookmarks()[1].ns) < 2 * us);
        f.view->removeBookmark(0);
        QCOMPARE(f.view->bookmarks().size(), size_t(1));
        // Follow: from the kernel to its launch call and back.
        f.view->zoomTo(t0, t0 + 600 * us, 0);
        const SliceId launch = f.trace->launchOf(k);
        QVERIFY(launch.valid());
        auto follow = [&](SliceId from) {
            QMenu* m = f.view->contextMenuAt(
                TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), from)
                    .center()
                    .toPoint());
            for (QAction* a : m->actions())
                if (a->objectName() == "follow") {
                    a->trigger();
                    break;
                }
            delete m;
            return f.view->state().selected;
        };
        QCOMPARE(follow(k), launch);
        QCOMPARE(follow(launch), k);
        if (const QString dir = qEnvironmentVariable("STALLSCOPE_STATS_RENDER_DIR");
            !dir.isEmpty()) {
            f.view->addBookmark(t0 + 150 * us, "before the kernel");
            QVERIFY(f.view->grab().save(dir + "/timeline_bookmarks.png"));
        }
    }

    void deepStacksOpenFoldedAndUnfoldOnAClick() {
        test::TraceText t;
        for (int d = 0; d < 30; ++d) t.python("frame_" + std::to_string(d), d, 1000 - 2 * d);
        t.launch("k_deep", 100, 5, 200, 300);
        Fixture f(t.load());
        const auto& rows = f.view->layout().rows();
        int cpu = -1, gpuGroup = -1;
        for (size_t i = 0; i < rows.size(); ++i) {
            if (rows[i].kind == RowKind::Slices && rows[i].allLanes >= 30)
                cpu = int(i); // + the launch
            if (rows[i].kind == RowKind::Group &&
                f.view->layout().groups()[size_t(rows[i].group)].device >= 0)
                gpuGroup = int(i);
        }
        QVERIFY(cpu >= 0 && gpuGroup > cpu);
        QCOMPARE(rows[size_t(cpu)].lanes, TimelineLayout::kOpenCpuLanes);
        QVERIFY(rows[size_t(gpuGroup)].y < 400); // the GPU rows on the first screen
        const SliceId deepest = sliceNamed(*f.trace, "frame_29");
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 1000 * us, 0);
        QVERIFY(
            TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), deepest).isValid());
        const QPoint name(40, TimelineViewport::kTopHeight + rows[size_t(cpu)].y + 8 -
                                  f.view->viewport().scrollY);
        QTest::mouseClick(f.view.get(), Qt::LeftButton, {}, name);
        QCOMPARE(f.view->layout().rows()[size_t(cpu)].lanes, rows[size_t(cpu)].allLanes);
        QVERIFY(f.view->layout().rows()[size_t(gpuGroup)].y > 30 * TimelineLayout::kLaneHeight);
        QTest::mouseClick(f.view.get(), Qt::LeftButton, {}, name);
        QCOMPARE(f.view->layout().rows()[size_t(cpu)].lanes, TimelineLayout::kOpenCpuLanes);
    }

    void operatorsOnlyLeavesOutPythonFrames() {
        // 10 frames, aten::linear, 5 frames, aten::addmm launching k_gemm: operators only,
        // the thread is linear / addmm / the launch call in three lanes.
        test::TraceText t;
        for (int d = 0; d < 10; ++d) t.python("frame_" + std::to_string(d), d, 1000 - 2 * d);
        t.cpu("aten::linear", 20, 900);
        for (int d = 0; d < 5; ++d) t.python("inner_" + std::to_string(d), 30 + d, 800 - 2 * d);
        t.cpu("aten::addmm", 50, 500);
        t.launch("k_gemm", 100, 5, 200, 300);
        Fixture f(t.load());
        const auto& layout = f.view->layout();
        int cpu = -1, gpu = -1;
        for (size_t i = 0; i < layout.rows().size(); ++i) {
            if (layout.rows()[i].kind != RowKind::Slices) continue;
            if (layout.rows()[i].allLanes >= 17)
                cpu = int(i);
            else
                gpu = int(i);
        }
        QVERIFY(cpu >= 0 && gpu >= 0);
        QVERIFY(layout.canShowOperatorsOnly(cpu));
        QVERIFY(!layout.canShowOperatorsOnly(gpu)); // a stream has no frames to leave out
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 1000 * us, 0);
        const SliceId linear = sliceNamed(*f.trace, "aten::linear"),
                      addmm = sliceNamed(*f.trace, "aten::addmm"),
                      frame = sliceNamed(*f.trace, "inner_2");
        QVERIFY(linear.valid() && addmm.valid() && frame.valid());

        // The row's context menu turns it on.
        const QPoint name(40, TimelineViewport::kTopHeight + layout.rows()[size_t(cpu)].y + 8 -
                                  f.view->viewport().scrollY);
        QMenu* menu = f.view->contextMenuAt(name);
        auto* ops = menu->findChild<QAction*>("rowOperatorsOnly");
        QVERIFY(ops && ops->isCheckable() && !ops->isChecked());
        ops->trigger();
        delete menu;
        const TimelineRow& r = layout.rows()[size_t(cpu)];
        QVERIFY(r.laneTrack != r.track);
        QCOMPARE(r.allLanes, 3); // linear, addmm, the launch call
        const auto& vp = f.view->viewport();
        const QRectF rl = TimelineRenderer::sliceRect(layout, vp, linear),
                     ra = TimelineRenderer::sliceRect(layout, vp, addmm);
        QVERIFY(rl.isValid() && ra.isValid());
        QCOMPARE(ra.top() - rl.top(),
                 double(TimelineLayout::kLaneHeight)); // addmm right under linear
        QVERIFY(!TimelineRenderer::sliceRect(layout, vp, frame).isValid()); // frames left out
        // What is drawn at addmm's place is addmm (hit testing reads the same lanes).
        QCOMPARE(TimelineRenderer::hitTest(layout, vp, ra.center().x(), ra.center().y()), addmm);
        // The GPU stream stays as it was; painting draws the kernel.
        QVERIFY(TimelineRenderer::sliceRect(layout, vp, sliceNamed(*f.trace, "k_gemm")).isValid());
        (void)f.paint();

        // Back to every slice from the same menu.
        menu = f.view->contextMenuAt(name);
        ops = menu->findChild<QAction*>("rowOperatorsOnly");
        QVERIFY(ops && ops->isChecked());
        ops->trigger();
        delete menu;
        QVERIFY(layout.rows()[size_t(cpu)].laneTrack == layout.rows()[size_t(cpu)].track);
        QVERIFY(TimelineRenderer::sliceRect(layout, vp, frame).isValid());

        // View ▸ Operators only: every such thread, kept for the next trace shown.
        f.view->setOperatorsOnly(true);
        QVERIFY(layout.rows()[size_t(cpu)].laneTrack != layout.rows()[size_t(cpu)].track);
        f.view->setData(f.trace, f.analysis);
        QVERIFY(f.view->layout().rows()[size_t(cpu)].laneTrack !=
                f.view->layout().rows()[size_t(cpu)].track);
        f.view->setOperatorsOnly(false);
        QVERIFY(f.view->layout().rows()[size_t(cpu)].laneTrack ==
                f.view->layout().rows()[size_t(cpu)].track);
    }

    void narrowEventsAreStillHittable() {
        Fixture f(smallTrace());
        f.view->fitAll();
        // Zoom out so that the 1 us launch call is well under one pixel wide.
        f.view->zoomBy(20, TimelineViewport::kHeaderWidth);
        const SliceId launch = sliceNamed(*f.trace, "cudaLaunchKernel");
        const QRectF r = TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), launch);
        QVERIFY(double(f.trace->slices().dur[launch.index()]) < f.view->viewport().nsPerPx);
        const SliceId hit = TimelineRenderer::hitTest(f.view->layout(), f.view->viewport(), r.left() + 2, r.center().y());
        QVERIFY(hit.valid());
        QCOMPARE(f.trace->str(f.trace->slices().name[hit.index()]), std::string_view("cudaLaunchKernel"));
    }

    void keysZoomPanAndFit() {
        Fixture f(smallTrace());
        f.view->fitAll();
        const TimelineViewport before = f.view->viewport();
        f.view->setFocus();
        QTest::keyClick(f.view.get(), Qt::Key_W);
        QVERIFY(std::abs(f.view->viewport().nsPerPx - before.nsPerPx * 0.8) < before.nsPerPx * 1e-6);
        QTest::keyClick(f.view.get(), Qt::Key_S);
        QVERIFY(std::abs(f.view->viewport().nsPerPx - before.nsPerPx) < before.nsPerPx * 1e-6);
        QTest::keyClick(f.view.get(), Qt::Key_W);
        QTest::keyClick(f.view.get(), Qt::Key_W);
        const int64_t s0 = f.view->viewport().startNs;
        QTest::keyClick(f.view.get(), Qt::Key_D);
        QVERIFY(f.view->viewport().startNs > s0);
        QTest::keyClick(f.view.get(), Qt::Key_A);
        QVERIFY(std::abs(f.view->viewport().startNs - s0) <= 2);
        QTest::keyClick(f.view.get(), Qt::Key_0);
        QVERIFY(f.view->viewport().startNs <= f.view->layout().startNs());
        QVERIFY(f.view->viewport().endNs() >= f.view->layout().endNs());
    }

    void shiftDragSelectsARange() {
        Fixture f(smallTrace());
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 1000 * us, 0);
        QSignalSpy spy(f.view.get(), &TimelineView::rangeSelected);
        const int y = 200, x1 = 400, x2 = 800;
        const TimelineViewport vp = f.view->viewport();
        QTest::mousePress(f.view.get(), Qt::LeftButton, Qt::ShiftModifier, QPoint(x1, y));
        QMouseEvent move(QEvent::MouseMove, QPointF(x2, y), f.view->mapToGlobal(QPointF(x2, y)), Qt::NoButton,
                         Qt::LeftButton, Qt::ShiftModifier);
        QCoreApplication::sendEvent(f.view.get(), &move);
        QTest::mouseRelease(f.view.get(), Qt::LeftButton, Qt::ShiftModifier, QPoint(x2, y));
        QVERIFY(spy.count() >= 1);
        const auto last = spy.last();
        const double tol = vp.nsPerPx * 1.5;
        QVERIFY(std::abs(double(last.at(0).toLongLong() - vp.nsAt(x1))) <= tol);
        QVERIFY(std::abs(double(last.at(1).toLongLong() - vp.nsAt(x2))) <= tol);
        QVERIFY(f.view->state().hasRange);
    }

    void paintsEventsInTheirKindColours() {
        Fixture f(smallTrace());
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 1000 * us, 0);
        const QImage img = f.paint();
        for (const char* name : {"k_conv", "k_relu", "aten::conv2d"}) {
            const SliceId s = sliceNamed(*f.trace, name);
            const QRectF r = TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), s);
            // Sample near the right end, away from the label text.
            const QPoint px(static_cast<int>(r.right()) - 3, static_cast<int>(r.top()) + 2);
            QCOMPARE(img.pixelColor(px).rgb(), TimelineRenderer::sliceColor(*f.trace, s).rgb());
        }
    }

    // Zoomed out, a stream of thousands of kernels that starts with a copy is a merged run
    // in the kernels' colour (the kind holding most of its time), not the copy's.
    void mergedRunsTakeTheColourOfMostOfTheirTime() {
        test::TraceText t;
        t.memcpy("Memcpy HtoD (Pinned -> Device)", 0, 2, t.nextCorrelation(), 1024);
        for (int i = 0; i < 3000; ++i) t.launch("k_small", 10 + 3 * i, 1, 10 + 3 * i, 2);
        Fixture f(t.load());
        f.view->fitAll();
        const QImage img = f.paint();
        const SliceId first = sliceNamed(*f.trace, "Memcpy HtoD (Pinned -> Device)");
        const QRectF r = TimelineRenderer::sliceRect(f.view->layout(), f.view->viewport(), first);
        QVERIFY(r.isValid());
        // The run's middle, on the stream's row.
        const QPoint px(TimelineViewport::kHeaderWidth +
                            (f.view->width() - TimelineViewport::kHeaderWidth) / 2,
                        static_cast<int>(r.top()) + 4);
        const int hue = img.pixelColor(px).hslHue();
        const int kernelHue = Theme::current().kindColor(model::EventKind::Kernel).hslHue();
        QVERIFY2(std::abs(hue - kernelHue) < 25,
                 qPrintable(QString("hue %1, kernels %2").arg(hue).arg(kernelHue)));
    }

    void selectedFindingShadesItsRangeOnItsRows() {
        // Steps with 400 us of data loading before 200 us of GPU work: a data_loading finding.
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 700;
            t.step(s, b, 690);
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
            t.launch("k_compute", b + 450, 5, b + 460, 200);
        }
        Fixture f(t.load());
        const analysis::Finding* dl = nullptr;
        for (const auto& x : f.analysis->findings)
            if (x.kind == analysis::FindingKind::DataLoading) dl = &x;
        QVERIFY(dl);
        f.view->showFinding(dl);
        const auto& iv = f.view->state().shaded;
        QVERIFY(!iv.empty());
        const TimelineViewport& vp = f.view->viewport();
        // The view shows the finding's largest range.
        const auto largest = *std::max_element(iv.begin(), iv.end(), [](auto& a, auto& b) { return a.length() < b.length(); });
        QVERIFY(vp.startNs <= largest.start && vp.endNs() >= largest.end);
        const QImage shaded = f.paint();
        f.view->showFinding(nullptr);
        f.view->zoomTo(vp.startNs, vp.endNs(), 0);
        const QImage plain = f.paint();
        // Inside the range, on the GPU stream row, the shade tints the background red.
        const auto rows = f.view->layout().rowsForDevice(0);
        QVERIFY(!rows.empty());
        int streamRow = -1;
        for (int ri : rows)
            if (f.view->layout().rows()[size_t(ri)].kind == RowKind::Slices &&
                f.trace->tracks()[f.view->layout().rows()[size_t(ri)].track.index()].kind == model::TrackKind::GpuStream)
                streamRow = ri;
        QVERIFY(streamRow >= 0);
        const TimelineRow& row = f.view->layout().rows()[size_t(streamRow)];
        const int y = vp.yOf(row.y) + row.height / 2;
        const int xin = static_cast<int>(vp.xOf((largest.start + largest.end) / 2));
        const QColor a = shaded.pixelColor(xin, y), b = plain.pixelColor(xin, y);
        QVERIFY2(a != b, "the finding's range is not shaded");
        QVERIFY(a.red() > a.green() + 20);  // reddish tint
        // Outside every range the pixels are untouched.
        const int xout = static_cast<int>(vp.xOf(largest.end)) + 40;
        bool outside = true;
        for (const auto& r : iv) outside = outside && !(vp.nsAt(xout) >= r.start && vp.nsAt(xout) < r.end);
        if (outside && xout < vp.width) QCOMPARE(shaded.pixelColor(xout, y), plain.pixelColor(xout, y));
    }

    void levelOfDetailBoundsTheWorkPerFrame() {
        // 200 000 one-microsecond ops on one thread: a fit-all frame must not draw them one by one.
        TraceText t;
        t.step(0, 0, 600'000);
        for (int i = 0; i < 200'000; ++i) t.cpu("aten::add", 10 + int64_t(i) * 2, 1);
        // A wide op right after the run of narrow ones must be drawn on its own, labelled.
        t.cpu("aten::big_op", 400'011, 150'000);
        Fixture f(t.load());
        f.view->fitAll();
        (void)f.paint();
        const RenderStats& st = f.view->renderStats();
        const size_t bound = st.lanesVisited * size_t(f.view->viewport().contentWidth());
        QVERIFY2(st.slicesDrawn + st.mergedBlocks <= bound,
                 qPrintable(QString("%1 drawn + %2 merged > %3").arg(st.slicesDrawn).arg(st.mergedBlocks).arg(bound)));
        QVERIFY(st.mergedBlocks >= 1);
        QCOMPARE(st.labels, size_t(2));  // the step and aten::big_op
        // Zoomed to 40 us, ops are ~20 px wide and drawn one by one, with labels.
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0 + 1000 * us, t0 + 1040 * us, 0);
        (void)f.paint();
        QVERIFY(f.view->renderStats().slicesDrawn >= 20);
        QVERIFY(f.view->renderStats().labels >= 1);
    }

    void searchCountsAndStepsThroughMatchesInTimeOrder() {
        Fixture f(smallTrace());
        const int64_t t0 = f.trace->slices().start[0];
        f.view->zoomTo(t0, t0 + 100 * us, 0);  // the view centre is before both kernels
        // The search runs off the GUI thread; a next-match asked for meanwhile waits for it.
        QSignalSpy done(f.view.get(), &TimelineView::searchFinished);
        f.view->setSearch("K_");
        f.view->nextMatch(true);
        QVERIFY(done.wait(5000));
        QCOMPARE(done.at(0).at(0).value<size_t>(), size_t(2));  // case-insensitive: k_conv, k_relu
        QCOMPARE(f.view->matchCount(), size_t(2));
        QCOMPARE(f.view->state().selected, sliceNamed(*f.trace, "k_conv"));
        f.view->nextMatch(true);
        QCOMPARE(f.view->state().selected, sliceNamed(*f.trace, "k_relu"));
        f.view->nextMatch(true);  // wraps around
        QCOMPARE(f.view->state().selected, sliceNamed(*f.trace, "k_conv"));
        f.view->nextMatch(false);
        QCOMPARE(f.view->state().selected, sliceNamed(*f.trace, "k_relu"));
        // The view follows the selected match.
        const int64_t ks = f.trace->slices().start[sliceNamed(*f.trace, "k_relu").index()];
        QVERIFY(f.view->viewport().startNs <= ks && ks < f.view->viewport().endNs());
        f.view->setSearch("no such op");
        QVERIFY(done.wait(5000));
        QCOMPARE(f.view->matchCount(), size_t(0));
    }

    void counterRangeQueriesMatchBruteForce() {
        std::mt19937 rng(7);
        CounterSeries util, queue;
        int64_t t = 0;
        for (int i = 0; i < 3000; ++i) {
            t += 1 + int64_t(rng() % 50);
            const int64_t len = 1 + int64_t(rng() % 40);
            util.busy.push_back({t, t + len});
            t += len;
            queue.steps.emplace_back(t - int64_t(rng() % 10), double(rng() % 1000));
        }
        std::sort(queue.steps.begin(), queue.steps.end());
        util.prepare();
        queue.prepare();
        auto bruteBusy = [&](int64_t lo, int64_t hi) {
            int64_t sum = 0;
            for (const auto& iv : util.busy) sum += std::max<int64_t>(0, std::min(hi, iv.end) - std::max(lo, iv.start));
            return sum;
        };
        auto bruteMax = [&](int64_t lo, int64_t hi) {
            double v = 0;
            for (size_t i = 0; i < queue.steps.size(); ++i) {
                const int64_t from = queue.steps[i].first;
                const int64_t to = i + 1 < queue.steps.size() ? queue.steps[i + 1].first : INT64_MAX;
                if (from < hi && to > lo) v = std::max(v, queue.steps[i].second);
            }
            return v;
        };
        for (int q = 0; q < 2000; ++q) {
            int64_t lo = int64_t(rng() % uint64_t(t + 100)) - 50, hi = lo + 1 + int64_t(rng() % uint64_t(q % 2 ? 20 : 40000));
            QCOMPARE(util.busyWithin(lo, hi), bruteBusy(lo, hi));
            QCOMPARE(queue.maxWithin(lo, hi), bruteMax(lo, hi));
        }
        // A left-to-right sweep with hints, as the painter does, gives the same answers.
        size_t hb = 0, hq = 0;
        int64_t before = util.busyBefore(-10, hb);
        for (int64_t x = -10; x < t + 10; x += 97) {
            const int64_t after = util.busyBefore(x + 97, hb);
            QCOMPARE(after - before, bruteBusy(x, x + 97));
            before = after;
            QCOMPARE(queue.maxWithin(x, x + 97, hq), bruteMax(x, x + 97));
        }
    }

    void seekFindsTheFirstSliceAtOrAfterATime() {
        TraceText t;
        t.step(0, 0, 100'000);
        std::mt19937 rng(3);
        int64_t at = 1;
        for (int i = 0; i < 5000; ++i) {
            const int64_t d = 1 + int64_t(rng() % 5);
            t.cpu("aten::op", at, d);
            at += d + int64_t(rng() % 3);
        }
        Fixture f(t.load());
        const auto& s = f.trace->slices();
        const TimelineRow* row = nullptr;
        for (const auto& r : f.view->layout().rows())
            if (r.kind == RowKind::Slices) row = &r;
        QVERIFY(row && row->lanes == 2);
        const auto& lane = f.view->layout().lane(row->track, 1);
        QCOMPARE(lane.size(), size_t(5000));
        for (int q = 0; q < 3000; ++q) {
            const size_t from = rng() % lane.size();
            const int64_t when = s.start[0] + int64_t(rng() % uint64_t(at + 10)) * us;
            size_t expect = from;
            while (expect < lane.size() && s.start[lane[expect]] < when) ++expect;
            QCOMPARE(f.view->layout().seek(row->track, 1, from, when), expect);
        }
    }

    void rulerLabelsPickTheUnitOfTheValue() {
        QCOMPARE(TimelineRenderer::formatTime(65'200'000, 200'000), QString("+65.2 ms"));
        QCOMPARE(TimelineRenderer::formatTime(65'202'000, 2'000), QString("+65.202 ms"));
        QCOMPARE(TimelineRenderer::formatTime(-20'000'000, 10'000'000), QString("-20 ms"));
        QCOMPARE(TimelineRenderer::formatTime(1'500, 100), QString("+1.5 µs"));
        QCOMPARE(TimelineRenderer::formatTime(750, 50), QString("+750 ns"));
        QCOMPARE(TimelineRenderer::formatTime(3'000'000'000, 1'000'000'000), QString("+3 s"));
        QCOMPARE(TimelineRenderer::formatTime(3'250'000'000, 50'000'000), QString("+3.25 s"));
        QCOMPARE(TimelineRenderer::formatTime(0, 1000), QString("0"));
    }

    void tickStepsAreRoundNumbers() {
        for (double nsPerPx : {0.5, 13.0, 1e3, 7.7e4, 2e6}) {
            const int64_t step = scene::placeTicks({0, nsPerPx, 0, 1000}, 0, 90).step;
            QVERIFY(double(step) / nsPerPx >= 90);
            int64_t m = step;
            while (m % 10 == 0) m /= 10;
            QVERIFY2(m == 1 || m == 2 || m == 5, qPrintable(QString::number(step)));
        }
    }
};

QTEST_MAIN(TestTimeline)
#include "test_timeline.moc"
