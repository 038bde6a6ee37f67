// The timeline's level of detail is total and bounded: the gallop and seek helpers answer
// for every input, a lane walk ends on every lane and viewport (equal starts, zero and
// negative durations, overlapping slices, a viewport wider than the trace or 1 ns wide,
// panning past either end, 64-bit extremes) and draws every visible slice, and the
// viewport maths never overflows. Includes the smallest trace that hung the GUI on the
// param-dlrm-8rank traces.
#include "random_trace.h"
#include "theme.h"
#include "timeline/lane_walk.h"
#include "timeline/timeline_renderer.h"
#include "trace_text.h"
#include "watchdog.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/base/loop_guard.h"

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QTest>

#include <random>

using namespace stallscope;
using namespace stallscope::gui;
using model::TrackId;

namespace {

using namespace std::chrono_literals;

std::shared_ptr<const model::Trace> load(const std::string& json) {
    auto r = importers::importBuffer(json);
    return r ? r.value() : nullptr;
}

struct Lane {
    TrackId track;
    int depth;
};

std::vector<Lane> lanesOf(const TimelineLayout& layout) {
    std::vector<Lane> out;
    for (const TimelineRow& r : layout.rows())
        if (r.kind == RowKind::Slices)
            for (int d = 0; d < r.lanes; ++d) out.push_back({r.track, d});
    return out;
}

/// Walks one lane and checks what a painter relies on; returns the items.
std::vector<LaneItem> checkedWalk(const TimelineLayout& layout, Lane l, const TimelineViewport& vp, std::string& error) {
    std::vector<LaneItem> items;
    walkLane(layout, l.track, l.depth, vp, [&](const LaneItem& it) { items.push_back(it); });
    const auto& lane = layout.lane(l.track, l.depth);
    const model::SliceTable& sl = layout.trace()->slices();
    const double left = TimelineViewport::kHeaderWidth - 2.0, right = vp.width + 2.0;
    for (size_t k = 0; k < items.size(); ++k) {
        const LaneItem& it = items[k];
        if (it.last <= it.first || it.last > lane.size()) error = "item with an empty or out-of-range span";
        if (k && it.first < items[k - 1].last) error = "items out of order or overlapping";
        if (!(it.x0 >= left - 1 && it.x1 <= right + 1e-9 && it.x0 <= it.x1)) error = "item outside the content area";
        if (!it.merged && it.last != it.first + 1) error = "a slice item standing for several slices";
    }
    // Lanes whose slices do not overlap: every slice in view is drawn, by itself or in a run
    // that covers its pixels.
    bool disjoint = true;
    for (size_t i = 1; i < lane.size() && disjoint; ++i) disjoint = sl.start[lane[i]] >= sl.end(lane[i - 1]);
    if (!disjoint) return items;
    size_t k = 0;
    const int64_t t0 = vp.startNs, t1 = vp.endNs();
    for (size_t p = 0; p < lane.size(); ++p) {
        const uint32_t idx = lane[p];
        const bool visible = sl.start[idx] < t1 && (sl.end(idx) > t0 || sl.start[idx] >= t0);
        while (k < items.size() && items[k].last <= p) ++k;
        const bool inItem = k < items.size() && items[k].first <= p;
        if (visible && !inItem) {
            error = "visible slice " + std::to_string(p) + " of the lane is not drawn";
            return items;
        }
        if (inItem && items[k].merged) {
            const double x1 = std::clamp(vp.xOf(sl.end(idx)), left, right);
            if (x1 > items[k].x1 + 1e-6) error = "a run ends before a slice it stands for";
        }
    }
    return items;
}

} // namespace

class TestTimelineBounds : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    // param-dlrm-8rank worker0 hung in paintLane: a merged run searched for the slices
    // starting before nsAt(runEnd + 1) (the pixel boundary truncated to whole ns) but
    // stopped only when the next slice's x was past runEnd + 1. A slice starting exactly
    // on that truncated ns is at x = 268.99993: outside the search, inside the run, and
    // the loop asked the same question forever. The smallest trace and viewport that did it.
    void dlrmPixelBoundaryHang() {
        test::Watchdog dog(10s);
        const auto trace = load(R"({"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 9.299, "dur": 1}]})");
        QVERIFY(trace);
        TimelineLayout layout;
        layout.build(trace, nullptr);
        TimelineViewport vp;
        vp.startNs = trace->startNs();
        vp.nsPerPx = 4649.666666666667;  // the DLRM screenshot's scale
        vp.width = 1400;
        // b starts on the truncated boundary of the pixel after a's run.
        QCOMPARE(vp.nsAt(TimelineViewport::kHeaderWidth + 2), trace->startNs() + 9299);
        QVERIFY(vp.xOf(trace->startNs() + 9299) < TimelineViewport::kHeaderWidth + 2);
        const auto lanes = lanesOf(layout);
        QCOMPARE(lanes.size(), size_t(1));
        dog.beat("walkLane on the DLRM boundary");
        std::string error;
        const auto items = checkedWalk(layout, lanes[0], vp, error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(items.size(), size_t(1));  // one run holding both slices
        QCOMPARE(items[0].last - items[0].first, size_t(2));
        // And the whole paint.
        dog.beat("paint on the DLRM boundary");
        QImage img(1400, 400, QImage::Format_ARGB32_Premultiplied);
        QPainter p(&img);
        TimelineRenderer r;
        vp.height = 400;
        r.paint(p, layout, vp, {});
        QCOMPARE(r.stats().mergedBlocks, size_t(1));
    }

    void gallopIsTotal() {
        std::mt19937_64 rng(7);
        for (int round = 0; round < 2000; ++round) {
            const size_t n = rng() % 300;
            std::vector<int> v(n);
            const bool monotone = round % 2 == 0;
            for (size_t i = 0; i < n; ++i) v[i] = monotone ? int(i * 3 + rng() % 3) : int(rng() % 100);
            if (monotone) std::sort(v.begin(), v.end());
            const int t = int(rng() % 1000);
            const size_t from = rng() % (n + 5);
            const size_t got = gallop(from, n, [&](size_t i) { return v[i] < t; });
            QVERIFY(got >= std::min(from, n) || from > n);
            QVERIFY(got <= std::max(from, n));
            if (monotone && from <= n) {
                const size_t want = std::max(from, size_t(std::lower_bound(v.begin(), v.end(), t) - v.begin()));
                QCOMPARE(got, std::min(want, std::max(from, n)));
            }
        }
    }

    void seekAndFirstVisibleAreTotalAndExact() {
        test::Watchdog dog(20s);
        for (uint64_t seed = 1; seed <= 6; ++seed) {
            const auto trace = load(test::RandomTrace(seed, seed % 2 ? test::RandomShape::Nested
                                                                    : test::RandomShape::Extremes).json());
            QVERIFY(trace);
            TimelineLayout layout;
            layout.build(trace, nullptr);
            const model::SliceTable& sl = trace->slices();
            std::mt19937_64 rng(seed);
            for (const Lane& l : lanesOf(layout)) {
                dog.beat("seek seed " + std::to_string(seed));
                const auto& lane = layout.lane(l.track, l.depth);
                auto probe = [&]() -> int64_t {
                    if (lane.empty() || rng() % 8 == 0) return int64_t(rng());
                    const uint32_t idx = lane[rng() % lane.size()];
                    return sl.start[idx] + int64_t(rng() % 3) - 1;
                };
                for (int q = 0; q < 40; ++q) {
                    const int64_t t = probe();
                    const size_t from = lane.empty() ? 0 : rng() % (lane.size() + 3);
                    const size_t got = layout.seek(l.track, l.depth, from, t);
                    size_t want = std::min(from, lane.size());
                    while (want < lane.size() && sl.start[lane[want]] < t) ++want;
                    QCOMPARE(got, want);
                    // firstVisible: everything before it ends before t.
                    const size_t fv = layout.firstVisible(l.track, l.depth, t);
                    int64_t running = model::kMinNs;
                    size_t brute = lane.size();
                    for (size_t p = 0; p < lane.size(); ++p) {
                        running = std::max(running, sl.end(lane[p]));
                        if (running >= t) {
                            brute = p;
                            break;
                        }
                    }
                    QCOMPARE(fv, brute);
                }
            }
        }
    }

    void everyLaneWalkEndsAndDrawsEveryVisibleSlice() {
        test::Watchdog dog(30s);
        const test::RandomShape shapes[] = {test::RandomShape::Nested, test::RandomShape::Extremes,
                                            test::RandomShape::Gpu, test::RandomShape::Mixed};
        const uint64_t stallsBefore = base::loopStallCount();
        for (uint64_t seed = 11; seed <= 14; ++seed) {
            const auto shape = shapes[seed % 4];
            const auto trace = load(test::RandomTrace(seed, shape).json());
            QVERIFY2(trace, test::randomShapeName(shape));
            TimelineLayout layout;
            layout.build(trace, std::make_shared<analysis::AnalysisResult>(analysis::analyze(*trace)));
            const int64_t a = trace->startNs(), b = trace->endNs();
            std::mt19937_64 rng(seed);
            std::vector<TimelineViewport> vps;
            auto add = [&](int64_t start, double nsPerPx, int width) {
                TimelineViewport vp;
                vp.startNs = start;
                vp.nsPerPx = nsPerPx;
                vp.width = width;
                vps.push_back(vp);
            };
            const double span = std::max(1.0, model::nsDiff(b, a));
            add(a, span / 1160, 1400);                       // fit all
            add(a - int64_t(span), span * 4 / 1160, 1400);    // wider than the trace
            add(a, 1.0 / 1160, 1400);                         // 1 ns across the screen
            add(a, 0.01, 1400);                               // the deepest zoom
            add(model::kMinNs, 1e18, 1400);                   // everything, from the very start of int64
            add(model::kMaxNs - 1000, 1.0, 1400);             // past the end
            add(model::kMinNs, 0.5, 1400);                    // before the start
            add(a, 4649.666666666667, 300);                   // a narrow window
            add(b, span / 1160, 1400);                        // panned right past the end
            add(a - int64_t(span / 2), span / 1160, 1400);    // panned left past the start
            for (int r = 0; r < 30; ++r) {
                const int64_t start = a + int64_t(double(rng() % 1000) / 1000.0 * span);
                add(start, std::pow(10.0, double(rng() % 1400) / 100.0 - 2), 250 + int(rng() % 2000));
            }
            for (const TimelineViewport& vp : vps) {
                for (const Lane& l : lanesOf(layout)) {
                    dog.beat(std::string("walk seed ") + std::to_string(seed) + " " + test::randomShapeName(shape) +
                             " start " + std::to_string(vp.startNs) + " nsPerPx " + std::to_string(vp.nsPerPx));
                    std::string error;
                    checkedWalk(layout, l, vp, error);
                    QVERIFY2(error.empty(), (error + " (seed " + std::to_string(seed) + ", start " + std::to_string(vp.startNs) +
                                             ", nsPerPx " + std::to_string(vp.nsPerPx) + ")").c_str());
                }
            }
        }
        QCOMPARE(base::loopStallCount(), stallsBefore);
    }

    void unsortedAndOverlappingLanesStillEnd() {
        // A lane the index would never build (reversed, so starts decrease; shuffled
        // overlapping slices): the helpers must still answer inside the lane and end.
        test::Watchdog dog(20s);
        const auto trace = load(test::RandomTrace(5, test::RandomShape::Nested).json());
        QVERIFY(trace);
        auto index = std::make_shared<TimelineIndex>(*TimelineIndex::build(*trace));
        std::mt19937_64 rng(5);
        for (size_t ti = 0; ti < index->lanes.size(); ++ti)
            for (size_t d = 0; d < index->lanes[ti].size(); ++d) {
                auto& lane = index->lanes[ti][d];
                if (d % 2) std::reverse(lane.begin(), lane.end());
                else std::shuffle(lane.begin(), lane.end(), rng);
                // Samples and maxima recomputed over the disordered lane, as build() would.
                auto& smp = index->samples[ti][d];
                auto& me = index->maxEnds[ti][d];
                smp.clear();
                me.clear();
                int64_t running = model::kMinNs;
                for (size_t k = 0; k < lane.size(); ++k) {
                    if (k % TimelineIndex::kSample == 0) smp.push_back(trace->slices().start[lane[k]]);
                    running = std::max(running, trace->slices().end(lane[k]));
                    if (k % TimelineIndex::kSample == TimelineIndex::kSample - 1 || k + 1 == lane.size()) me.push_back(running);
                }
            }
        TimelineLayout layout;
        layout.build(trace, nullptr, index);
        const uint64_t stalls = base::loopStallCount();
        for (const Lane& l : lanesOf(layout)) {
            const size_t n = layout.lane(l.track, l.depth).size();
            for (int q = 0; q < 30; ++q) {
                const size_t from = rng() % (n + 3);
                const int64_t t = trace->startNs() + int64_t(rng() % 4'000'000'000ULL);
                const size_t got = layout.seek(l.track, l.depth, from, t);
                QVERIFY(got >= std::min(from, n) && got <= n);
                QVERIFY(layout.firstVisible(l.track, l.depth, t) <= n);
            }
            for (double nsPerPx : {0.01, 10.0, 1e4, 1e7}) {
                TimelineViewport vp;
                vp.startNs = trace->startNs();
                vp.nsPerPx = nsPerPx;
                dog.beat("unsorted lane, " + std::to_string(nsPerPx) + " ns/px");
                size_t items = 0;
                walkLane(layout, l.track, l.depth, vp, [&](const LaneItem& it) {
                    QVERIFY(it.last > it.first && it.last <= n);
                    ++items;
                });
                QVERIFY(items <= n);
            }
        }
        QCOMPARE(base::loopStallCount(), stalls);
    }

    void viewportMathIsTotal() {
        for (int64_t start : {model::kMinNs, int64_t(-1), int64_t(0), int64_t(1'700'000'000'000'000'000), model::kMaxNs})
            for (double nsPerPx : {0.0, -5.0, 0.01, 1.0, 4649.666666666667, 1e18, 1e300, std::nan("")}) {
                TimelineViewport vp;
                vp.startNs = start;
                vp.nsPerPx = nsPerPx;
                int64_t prev = model::kMinNs;
                for (double x : {-1e12, -5.0, 0.0, 240.0, 241.5, 1200.0, 1e9, 1e300}) {
                    const int64_t t = vp.nsAt(x);
                    QVERIFY(t >= prev);  // monotone, saturating at both ends
                    prev = t;
                    QVERIFY(vp.nsCeilAt(x) >= t);
                    QVERIFY(std::isfinite(vp.xOf(t)));
                }
                QVERIFY(vp.endNs() >= vp.startNs);
            }
        TimelineViewport vp;
        vp.startNs = 1'694'128'201'428'636'160;  // absolute epoch ns keep their precision
        vp.nsPerPx = 0.01;
        QCOMPARE(vp.xOf(vp.startNs + 1), TimelineViewport::kHeaderWidth + 100.0);
    }
};

QTEST_MAIN(TestTimelineBounds)
#include "test_timeline_bounds.moc"
