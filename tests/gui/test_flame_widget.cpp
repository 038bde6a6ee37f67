// The flame graph widget and panel, offscreen: frames painted where the layout says and as
// wide as their share, zoom in and out by click / root click / Esc / right click, search
// outlines and totals, activation by double click, the "no data" message, GPU leaf colours.
#include "trace_text.h"

#include "flame_graph_widget.h"
#include "flame_panel.h"
#include "theme.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/flame_graph.h"

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

using namespace stallscope;
using namespace stallscope::gui;
using analysis::FlameGraph;
using analysis::FlameMode;
using test::TraceText;

namespace {

constexpr int kWidth = 800, kHeight = 300;

std::shared_ptr<const model::Trace> knownTrace() {
    TraceText t;
    t.step(1, 0, 1000);
    t.cpu("aten::linear", 10, 400);
    t.cpu("aten::addmm", 20, 380);
    t.launch("gemm_kernel", 30, 10, 50, 300);
    t.cpu("aten::relu", 500, 100);
    t.launch("relu_kernel", 510, 10, 530, 50);
    t.cpu("aten::linear", 650, 100);
    t.cpu("aten::addmm", 660, 80);
    t.launch("gemm_kernel", 670, 10, 700, 100);
    t.cpu("aten::linear", 100, 200, 2);
    return t.load();
}

int32_t findPath(const model::Trace& t, const FlameGraph& g,
                 std::initializer_list<std::string> path) {
    int32_t n = 0;
    for (const std::string& name : path) {
        int32_t next = -1;
        for (int32_t c : g.nodes[size_t(n)].children)
            if (analysis::flameNodeName(t, g, c) == name) next = c;
        if (next < 0) return -1;
        n = next;
    }
    return n;
}

QPoint centre(const QRectF& r) {
    return r.center().toPoint();
}

} // namespace

/// Waits for the graph the panel was last asked for (built off the GUI thread).
bool built(const FlamePanel& panel) { return QTest::qWaitFor([&] { return !panel.building(); }, 10000); }

class TestFlameWidget : public QObject {
    Q_OBJECT
    std::shared_ptr<const model::Trace> m_trace;
    FlameGraph m_cpu, m_gpu;

    void show(FlameGraphWidget& w, const FlameGraph& g) {
        w.resize(kWidth, kHeight);
        w.setGraph(m_trace, g);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
    }

private Q_SLOTS:
    void initTestCase() {
        m_trace = knownTrace();
        QVERIFY(m_trace);
        const auto r = analysis::analyze(*m_trace);
        m_cpu = analysis::buildFlameGraph(*m_trace, FlameMode::CpuTime, r.window.startNs,
                                          r.window.endNs);
        m_gpu = analysis::buildFlameGraph(*m_trace, FlameMode::GpuTime, r.window.startNs,
                                          r.window.endNs);
        QCOMPARE(m_cpu.totalNs, int64_t(1'200'000));
    }

    void paintsFramesAtTheirShare() {
        FlameGraphWidget w;
        show(w, m_cpu);
        const QImage img = w.grab().toImage();
        QCOMPARE(img.size(), QSize(kWidth, kHeight));
        const QColor bg = Theme::current().background;
        // The root row spans the width.
        for (int x : {1, 100, 400, 700, kWidth - 3}) QVERIFY(QColor(img.pixel(x, 10)) != bg);
        QCOMPARE(w.frameRect(0), QRectF(0, 0, kWidth, FlameGraphWidget::kRowHeight));
        // ProfilerStep#* (the one step) is 1000 of the 1200 us; the other thread's aten::linear 200.
        const int32_t step = findPath(*m_trace, w.graph(), {"ProfilerStep#*"});
        const QRectF sr = w.frameRect(step);
        QVERIFY(std::abs(sr.width() / kWidth - 1000.0 / 1200.0) < 1e-9);
        QCOMPARE(sr.top(), double(FlameGraphWidget::kRowHeight));
        QVERIFY(QColor(img.pixel(centre(sr))) != bg);
        const int32_t other = findPath(*m_trace, w.graph(), {"aten::linear"});
        const QRectF orr = w.frameRect(other);
        QVERIFY(std::abs(orr.left() - sr.right()) < 1e-9); // siblings side by side, largest first
        QVERIFY(std::abs(orr.width() / kWidth - 200.0 / 1200.0) < 1e-9);
        // Below the deepest row, and in the self part of a frame, there is only background.
        QCOMPARE(QColor(img.pixel(10, kHeight - 5)), bg);
        const QRectF relu =
            w.frameRect(findPath(*m_trace, w.graph(), {"ProfilerStep#*", "aten::relu"}));
        QVERIFY(relu.right() < sr.right() - 100); // 400 us of the step is self time
        QCOMPARE(QColor(img.pixel(int(sr.right()) - 20, int(relu.center().y()))), bg);
        QCOMPARE(w.nodeAt(sr.center()), step);
        QCOMPARE(w.nodeAt(QPointF(10, kHeight - 5)), -1);
    }

    void clickZoomsInAndOut() {
        FlameGraphWidget w;
        show(w, m_cpu);
        QSignalSpy zoomSpy(&w, &FlameGraphWidget::zoomChanged);
        const int32_t step = findPath(*m_trace, w.graph(), {"ProfilerStep#*"});
        const int32_t linear = findPath(*m_trace, w.graph(), {"ProfilerStep#*", "aten::linear"});
        QTest::mouseClick(&w, Qt::LeftButton, {}, centre(w.frameRect(step)));
        QCOMPARE(w.zoomedNode(), step);
        QCOMPARE(zoomSpy.count(), 1);
        QCOMPARE(w.frameRect(step).width(), double(kWidth));
        QVERIFY(std::abs(w.frameRect(linear).width() - kWidth * 500.0 / 1000.0) < 1e-9);
        // Frames outside the zoomed subtree are not laid out.
        QVERIFY(w.frameRect(findPath(*m_trace, w.graph(), {"aten::linear"})).isEmpty());
        QTest::mouseClick(&w, Qt::LeftButton, {}, centre(w.frameRect(linear)));
        QCOMPARE(w.zoomedNode(), linear);
        // Esc: one level out; clicking the root: one level out; right click: one level out.
        QTest::keyClick(&w, Qt::Key_Escape);
        QCOMPARE(w.zoomedNode(), step);
        QTest::mouseClick(&w, Qt::LeftButton, {}, centre(w.frameRect(linear)));
        QCOMPARE(w.zoomedNode(), linear);
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(kWidth / 2, 5));
        QCOMPARE(w.zoomedNode(), step);
        QTest::mouseClick(&w, Qt::RightButton, {}, QPoint(kWidth / 2, 100));
        QCOMPARE(w.zoomedNode(), 0);
        QCOMPARE(w.frameRect(step).width(), kWidth * 1000.0 / 1200.0);
        // A new graph starts unzoomed.
        w.zoomTo(linear);
        w.setGraph(m_trace, m_cpu);
        QCOMPARE(w.zoomedNode(), 0);
    }

    void searchOutlinesMatches() {
        FlameGraphWidget w;
        show(w, m_cpu);
        const QImage before = w.grab().toImage();
        w.setSearch(QStringLiteral("LINEAR"));
        QCOMPARE(w.matchedFrameCount(), 2); // under the step and on thread 2
        QCOMPARE(w.matchedTotalNs(), int64_t(700'000));
        w.setSearch(QStringLiteral("aten::")); // nested matches count once
        QCOMPARE(w.matchedFrameCount(), 4);
        QCOMPARE(w.matchedTotalNs(), int64_t((500 + 100 + 200) * 1000));
        w.setSearch(QStringLiteral("addmm"));
        QCOMPARE(w.matchedFrameCount(), 1);
        QCOMPARE(w.matchedTotalNs(), int64_t(460'000));
        const QImage after = w.grab().toImage();
        const QRectF r = w.frameRect(
            findPath(*m_trace, w.graph(), {"ProfilerStep#*", "aten::linear", "aten::addmm"}));
        // The outline is drawn in the search colour; the frame's inside keeps its colour.
        const QColor edge(after.pixel(int(r.left()) + 1, int(r.center().y())));
        const QColor expected = Theme::current().searchMatch.darker(135);
        QCOMPARE(edge.rgb(), expected.rgb());
        QVERIFY(before.pixel(int(r.left()) + 1, int(r.center().y())) != expected.rgb());
        // Non-matching frames fade towards the background.
        const QPoint rootPx(kWidth - 20, 10);
        QVERIFY(QColor(after.pixel(rootPx)).lightness() > QColor(before.pixel(rootPx)).lightness());
        w.setSearch(QString());
        QCOMPARE(w.matchedFrameCount(), 0);
        QCOMPARE(w.matchedTotalNs(), int64_t(0));
        QCOMPARE(w.grab().toImage(), before);
    }

    void doubleClickActivates() {
        FlameGraphWidget w;
        show(w, m_cpu);
        QSignalSpy spy(&w, &FlameGraphWidget::frameActivated);
        const int32_t relu = findPath(*m_trace, w.graph(), {"ProfilerStep#*", "aten::relu"});
        QTest::mouseDClick(&w, Qt::LeftButton, {}, centre(w.frameRect(relu)));
        QCOMPARE(spy.count(), 1);
        const auto name = spy.at(0).at(0).value<model::StringId>();
        QCOMPARE(m_trace->str(name), std::string_view("aten::relu"));
    }

    void gpuLeavesInTheirOwnHues() {
        FlameGraphWidget w;
        show(w, m_gpu);
        const QImage img = w.grab().toImage();
        const int32_t leaf = findPath(
            *m_trace, w.graph(),
            {"ProfilerStep#*", "aten::linear", "aten::addmm", "cudaLaunchKernel", "gemm_kernel"});
        const int32_t op =
            findPath(*m_trace, w.graph(), {"ProfilerStep#*", "aten::linear", "aten::addmm"});
        QVERIFY(analysis::isGpuLeaf(w.graph(), leaf));
        QVERIFY(std::abs(w.frameRect(leaf).width() / kWidth - 400.0 / 450.0) < 1e-9);
        // Sample left of the label.
        const QColor leafColour(
            img.pixel(int(w.frameRect(leaf).left()) + 2, int(w.frameRect(leaf).top()) + 2));
        const QColor opColour(
            img.pixel(int(w.frameRect(op).left()) + 2, int(w.frameRect(op).top()) + 2));
        QVERIFY2(std::abs(leafColour.hslHue() - 135) <= 25,
                 qPrintable(leafColour.name())); // kernels: green
        QVERIFY2(std::abs(opColour.hslHue() - 210) <= 25,
                 qPrintable(opColour.name())); // CPU ops: blue
    }

    void noDataMessage() {
        FlameGraphWidget w;
        show(w, analysis::buildFlameGraph(*m_trace, FlameMode::GpuTime, 0, 1));
        QVERIFY(w.graph().empty());
        QCOMPARE(w.nodeAt(QPointF(10, 10)), -1);
        const QImage img = w.grab().toImage();
        const QColor bg = Theme::current().background;
        int ink = 0;
        for (int y = kHeight / 2 - 10; y < kHeight / 2 + 10; ++y)
            for (int x = 0; x < kWidth; ++x) ink += QColor(img.pixel(x, y)) != bg;
        QVERIFY(ink > 20); // the message
        QCOMPARE(QColor(img.pixel(2, 2)), bg);
    }

    void panelModesRangesAndSearch() {
        FlamePanel panel;
        panel.resize(1000, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*m_trace));
        panel.setData(m_trace, analysis);
        QVERIFY(panel.building());  // folded on the pool, not on the GUI thread
        QVERIFY(panel.infoText().startsWith(QStringLiteral("Building")));
        QVERIFY(built(panel));
        QCOMPARE(panel.graphWidget()->graph().totalNs, m_cpu.totalNs);
        QCOMPARE(panel.graphWidget()->graph().startNs, analysis->window.startNs);
        // It opens past the wrappers (on by default); unchecked, at the root.
        QVERIFY(panel.skipWrappersButton()->isChecked());
        QCOMPARE(panel.graphWidget()->zoomedNode(),
                 analysis::firstBranchingNode(panel.graphWidget()->graph()));
        panel.skipWrappersButton()->setChecked(false);
        QCOMPARE(panel.graphWidget()->zoomedNode(), 0);
        panel.skipWrappersButton()->setChecked(true);
        QCOMPARE(panel.graphWidget()->zoomedNode(),
                 analysis::firstBranchingNode(panel.graphWidget()->graph()));
        panel.setMode(FlameMode::GpuTime);
        QVERIFY(built(panel));
        QCOMPARE(panel.graphWidget()->graph().mode, FlameMode::GpuTime);
        QCOMPARE(panel.graphWidget()->graph().totalNs, m_gpu.totalNs);
        QVERIFY2(panel.infoText().contains(QStringLiteral("GPU time 450.0 \u00b5s")),
                 qPrintable(panel.infoText()));
        const int64_t t0 = m_trace->startNs();
        panel.setRange(t0 + 100'000, t0 + 750'000);
        QVERIFY(built(panel));
        QCOMPARE(panel.graphWidget()->graph().totalNs, int64_t(150'000));
        QVERIFY(panel.infoText().startsWith(QStringLiteral("Selection")));
        QTest::keyClicks(panel.searchField(), QStringLiteral("relu"));
        QCOMPARE(panel.graphWidget()->matchedFrameCount(), 2); // aten::relu and relu_kernel
        QVERIFY2(
            panel.statusText().contains(QStringLiteral("2 matching frames, 33.3 % of the total")),
            qPrintable(panel.statusText()));
        // Hovering a frame describes it under the graph.
        FlameGraphWidget* w = panel.graphWidget();
        const int32_t kernel =
            findPath(*m_trace, w->graph(),
                     {"ProfilerStep#*", "aten::relu", "cudaLaunchKernel", "relu_kernel"});
        const QPointF at = w->frameRect(kernel).center();
        QMouseEvent move(QEvent::MouseMove, at, w->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                         Qt::NoModifier);
        QApplication::sendEvent(w, &move);
        QCOMPARE(w->hoveredNode(), kernel);
        QVERIFY2(panel.statusText().startsWith(
                     QStringLiteral("relu_kernel   total 50.00 \u00b5s (33.3 %)")),
                 qPrintable(panel.statusText()));
        panel.clearRange();
        QVERIFY(built(panel));
        QCOMPARE(panel.graphWidget()->graph().totalNs, m_gpu.totalNs);
        QCOMPARE(panel.graphWidget()->searchText(), QStringLiteral("relu"));
        QSignalSpy spy(&panel, &FlamePanel::frameActivated);
        Q_EMIT panel.graphWidget()->frameActivated(model::StringId(1));
        QCOMPARE(spy.count(), 1);
        panel.setData(nullptr, nullptr);
        QVERIFY(panel.graphWidget()->graph().empty());
    }

    void devicePickerChargesOneGpu() {
        // Two GPUs: 300 us of kernels on GPU 0, 120 us on GPU 1.
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::mm", 10, 100);
        t.launch("gemm_on_0", 20, 10, 40, 300);
        t.cpu("aten::add", 200, 100);
        t.runtime("cudaLaunchKernel", 210, 10, 901);
        t.kernel("add_on_1", 230, 120, 901, 7, 1);
        auto trace = t.load();
        auto analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*trace));
        QCOMPARE(analysis->devices.size(), size_t(2));
        FlamePanel panel;
        panel.resize(1000, 400);
        panel.show();
        panel.setData(trace, analysis);
        QVERIFY(built(panel));
        QVERIFY(!panel.devicePicker()->isVisible());  // CPU mode: no device to pick
        panel.setMode(FlameMode::GpuTime);
        QVERIFY(built(panel));
        QVERIFY(panel.devicePicker()->isVisible());
        QCOMPARE(panel.devicePicker()->count(), 3);  // all, GPU 0, GPU 1
        QCOMPARE(panel.graphWidget()->graph().totalNs, int64_t(420'000));
        panel.setDevice(1);
        QVERIFY(built(panel));
        QCOMPARE(panel.device(), 1);
        QCOMPARE(panel.graphWidget()->graph().totalNs, int64_t(120'000));
        QVERIFY(findPath(*trace, panel.graphWidget()->graph(),
                         {"ProfilerStep#*", "aten::add", "cudaLaunchKernel", "add_on_1"}) > 0);
        QCOMPARE(findPath(*trace, panel.graphWidget()->graph(),
                          {"ProfilerStep#*", "aten::mm", "cudaLaunchKernel", "gemm_on_0"}), -1);
        panel.setDevice(0);
        QVERIFY(built(panel));
        QCOMPARE(panel.graphWidget()->graph().totalNs, int64_t(300'000));
        // One GPU: nothing to choose.
        panel.setData(m_trace, std::make_shared<analysis::AnalysisResult>(analysis::analyze(*m_trace)));
        QVERIFY(built(panel));
        QVERIFY(!panel.devicePicker()->isVisible());
        QCOMPARE(panel.device(), -1);
    }
};

QTEST_MAIN(TestFlameWidget)
#include "test_flame_widget.moc"
