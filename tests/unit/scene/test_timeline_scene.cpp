// The timeline scene without Qt: what is drawn at each zoom (slices on their own, merged
// runs, labels), the ruler's ticks, the finding's shading and the rows a finding concerns:
// the rules the GUI timeline and the report pictures both paint.
#include "trace_text.h"

#include "stallscope/scene/timeline_scene.h"

#include <QTest>

using namespace stallscope;
using scene::SceneViewport;

namespace {

/// One CPU thread (tid 1) launching `n` kernels of 1 us, one every 2 us, on stream 7; a
/// second thread (tid 2) with a few CPU ops and no launches.
std::shared_ptr<const model::Trace> kernels(int n) {
    test::TraceText t;
    for (int i = 0; i < n; ++i) t.launch("k" + std::to_string(i % 3), 2 * i, 1, 2 * i + 1, 1);
    t.cpu("other_op", 0, 50, 2).cpu("other_op", 100, 50, 2);
    return t.load();
}

model::TrackId trackWhere(const model::Trace& t, bool gpu, int64_t key) {
    for (uint32_t i = 0; i < t.tracks().size(); ++i) {
        const auto& tr = t.tracks()[i];
        if ((tr.kind == model::TrackKind::GpuStream) == gpu && !tr.key.isString() &&
            tr.key.number == key)
            return model::TrackId(i);
    }
    return {};
}

SceneViewport viewport(int64_t start, double nsPerPx, double width = 1000) {
    return {start, nsPerPx, 0, width};
}

} // namespace

class TestTimelineScene : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void levelOfDetailPerZoom() {
        const auto t = kernels(10000); // 20 ms of kernels
        QVERIFY(t);
        const auto index = scene::TimelineIndex::build(*t);
        const model::TrackId stream = trackWhere(*t, true, 7);
        QVERIFY(stream.valid());
        scene::SceneRequest rq;
        rq.rows = {{stream, 1, 0}};
        // Fit-all: 20 us per pixel, every kernel sub-pixel: runs only, at most one per pixel.
        rq.viewport = viewport(t->startNs(), 20'000);
        scene::DrawList all = scene::buildScene(*t, *index, rq);
        QCOMPARE(all.slices, size_t(0));
        QVERIFY(all.runs >= 1 && all.runs <= 1000);
        QCOMPARE(all.labels, size_t(0));
        // The runs cover every kernel once, in order.
        size_t covered = 0;
        for (size_t k = 0; k < all.items.size(); ++k) {
            QVERIFY(all.items[k].merged);
            QCOMPARE(all.items[k].first, covered);
            covered = all.items[k].last;
        }
        QCOMPARE(covered, size_t(10000));
        // 10 ns per pixel over 10 us: kernels at 1, 3, 5, 7, 9 us, each 100 px: five slices,
        // labelled.
        rq.viewport = viewport(t->startNs(), 10);
        scene::DrawList close = scene::buildScene(*t, *index, rq);
        QCOMPARE(close.runs, size_t(0));
        QCOMPARE(close.slices, size_t(5));
        QCOMPARE(close.labels, size_t(5));
        QCOMPARE(close.items.front().x0, 100.0);
        QCOMPARE(close.items.front().x1, 200.0);
        // 1 us per pixel over 1 ms: 500 kernels of one pixel, merged into runs no longer
        // than the gaps allow (1 px kernel + 1 px gap: adjacent runs join).
        rq.viewport = viewport(t->startNs(), 1000);
        scene::DrawList mid = scene::buildScene(*t, *index, rq);
        QCOMPARE(mid.slices, size_t(0));
        QVERIFY(mid.runs >= 1 && mid.runs <= 500);
        // Zoomed past the end: nothing.
        rq.viewport = viewport(t->endNs() + 1000, 10);
        QVERIFY(scene::buildScene(*t, *index, rq).items.empty());
    }

    void itemCapTruncates() {
        const auto t = kernels(200);
        const auto index = scene::TimelineIndex::build(*t);
        scene::SceneRequest rq;
        rq.rows = {{trackWhere(*t, true, 7), 1, 0}};
        rq.viewport = viewport(t->startNs(), 10, 100000); // every kernel its own slice
        rq.maxItems = 50;
        const scene::DrawList dl = scene::buildScene(*t, *index, rq);
        QCOMPARE(dl.items.size(), size_t(50));
        QVERIFY(dl.truncated);
    }

    void ticksAreRoundAndInside() {
        const SceneViewport vp{1'234'567, 1000, 240, 1240}; // 1 ms over 1000 px
        const scene::Ticks ticks = scene::placeTicks(vp, 1'000'000);
        QVERIFY(ticks.step >= 100'000); // labels at least 100 px apart
        QVERIFY(ticks.major.size() >= 5 && ticks.major.size() <= 11);
        for (size_t k = 0; k < ticks.major.size(); ++k) {
            const scene::Tick& tk = ticks.major[k];
            QVERIFY(tk.x >= vp.left && tk.x <= vp.right);
            QCOMPARE(tk.rel % ticks.step, int64_t(0));
            if (k) QCOMPARE(tk.rel - ticks.major[k - 1].rel, ticks.step);
        }
        QVERIFY(ticks.minor.size() >= (ticks.major.size() - 1) * (scene::kMinorTicks - 1));
        // At the ends of int64 the ticks still end, inside the area.
        for (int64_t start : {model::kMinNs, model::kMaxNs - 1000})
            for (double scale : {0.01, 1e15}) {
                const scene::Ticks e = scene::placeTicks({start, scale, 0, 1000}, 0);
                QVERIFY(e.major.size() <= 4002);
                for (const auto& tk : e.major) QVERIFY(tk.x >= 0 && tk.x <= 1000);
            }
    }

    void shadesAreClippedWidenedAndLabelled() {
        const SceneViewport vp{0, 1000, 100, 1100}; // [0, 1 ms) over x 100 .. 1100
        const model::Intervals ranges = {
            {-5000, -4000}, {10'000, 10'100}, {200'000, 500'000}, {900'000, 5'000'000}};
        const auto shades = scene::placeShades(ranges, vp);
        QCOMPARE(shades.size(), size_t(3)); // the first lies left of the view
        QCOMPARE(shades[0].x0, 110.0);
        QCOMPARE(shades[0].x1 - shades[0].x0, scene::kMinShadeWidth); // 0.1 px widened
        QVERIFY(!shades[0].labelled);
        QCOMPARE(shades[1].x0, 300.0);
        QCOMPARE(shades[1].x1, 600.0);
        QVERIFY(shades[1].labelled);
        QCOMPARE(shades[2].x1, 1100.0); // clipped at the right edge
    }

    void rowsAFindingConcerns() {
        const auto t =
            kernels(40); // launches and kernels until 80 us; tid 2 busy at 0 and 100 .. 150 us
        const model::TrackId launcher = trackWhere(*t, false, 1), other = trackWhere(*t, false, 2),
                             stream = trackWhere(*t, true, 7);
        QVERIFY(launcher.valid() && other.valid() && stream.valid());
        const auto threads = scene::launchingThreads(*t, 0, t->startNs(), t->endNs(), 4);
        QCOMPARE(threads.size(), size_t(1));
        QCOMPARE(threads.front(), launcher);
        const auto streams = scene::deviceStreams(*t, 0, t->startNs(), t->endNs(), 4);
        QCOMPARE(streams.size(), size_t(1));
        QCOMPARE(streams.front(), stream);
        // Where no GPU work is launched (t > the last kernel), the busiest CPU threads stand in.
        const auto late = scene::launchingThreads(*t, 0, 120'000, 150'000, 4);
        QCOMPARE(late.size(), size_t(1));
        QCOMPARE(late.front(), other);
    }

    // Graph replays on a stream: the work of each graph launch as one range, kept out of view
    // when narrower than kMinSliceWidth or outside the viewport.
    void graphReplaysInView() {
        test::TraceText tt;
        for (int n = 0; n < 3; ++n) {
            const int corr = tt.nextCorrelation();
            tt.runtime("cudaGraphLaunch", n * 100, 5, corr);
            tt.kernel("g_a", n * 100 + 10, 20, corr).kernel("g_b", n * 100 + 30, 30, corr);
        }
        const int corr = tt.nextCorrelation();
        tt.runtime("cudaLaunchKernel", 290, 5, corr).kernel("alone", 300, 10, corr);
        const auto t = tt.load();
        const auto index = scene::TimelineIndex::build(*t);
        QCOMPARE(index->graphReplays.size(), size_t(3));
        const model::TrackId stream = trackWhere(*t, true, 7);
        // [0, 150 us) over x 0 .. 1500: replays 0 (10-60 us) and 1 (110-160 us, clipped).
        const SceneViewport vp{t->startNs(), 100, 0, 1500};
        const auto shown = scene::placeReplays(*index, stream, vp);
        QCOMPARE(shown.size(), size_t(2));
        QCOMPARE(shown[0].x0, 100.0);
        QCOMPARE(shown[0].x1, 600.0);
        QCOMPARE(shown[1].x1, 1502.0);
        // Zoomed out to 1 ms per pixel, each replay is 0.05 px wide: none drawn.
        QVERIFY(scene::placeReplays(*index, stream, {t->startNs(), 1e6, 0, 1500}).empty());
        // Another track has none.
        QVERIFY(scene::placeReplays(*index, trackWhere(*t, false, 1), vp).empty());
    }

    void lanesOfNestedSlices() {
        test::TraceText tt;
        tt.cpu("outer", 0, 100).cpu("mid", 10, 50).cpu("inner", 20, 10);
        const auto t = tt.load();
        const auto index = scene::TimelineIndex::build(*t);
        const model::TrackId th = trackWhere(*t, false, 1);
        QCOMPARE(index->laneCount(th), 3);
        scene::SceneRequest rq;
        rq.viewport = viewport(t->startNs(), 100); // 100 us over 1000 px
        rq.rows = {{th, 3, 0}};
        scene::DrawList dl = scene::buildScene(*t, *index, rq);
        QCOMPARE(dl.slices, size_t(3));
        QCOMPARE(dl.lanesVisited, size_t(3));
        rq.rows = {{th, 2, 1}}; // lanes 1 .. 2 only
        dl = scene::buildScene(*t, *index, rq);
        QCOMPARE(dl.slices, size_t(1));
        QCOMPARE(int(dl.items.front().lane), 1);
    }
};

QTEST_GUILESS_MAIN(TestTimelineScene)
#include "test_timeline_scene.moc"
