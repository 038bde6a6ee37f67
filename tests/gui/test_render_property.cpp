// Every paint ends, quickly, on every trace: each real trace in ../shared/traces (folders as
// sessions too, every rank) and seeded random traces (random nesting, equal timestamps,
// degenerate durations, thousands of tracks, one lane with 10^6 tiny slices, timestamps at
// both ends of int64) are painted at fit-all and at 50 random viewports (1 ns wide, wider
// than the trace, past either end, 64-bit extremes), hit-tested, and shown as flame graphs
// (CPU and GPU time), statistics tabs and report timeline pictures. Each paint must take
// under kPaintBudgetMs; a hang is ended by a watchdog that names the trace, the seed and
// the viewport.
#include "flame_graph_widget.h"
#include "flame_panel.h"
#include "load_worker.h"
#include "random_trace.h"
#include "real_traces.h"
#include "stats_panel.h"
#include "test_support.h"
#include "theme.h"
#include "timeline/timeline_view.h"
#include "watchdog.h"

#include "stallscope/base/loop_guard.h"
#include "stallscope/importers/importer.h"
#include "stallscope/importers/tensorboard_folder.h"
#include "stallscope/reports/svg.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QScrollBar>
#include <QTabWidget>
#include <QTest>

#include <random>
#include <set>

using namespace stallscope;
using namespace stallscope::gui;
namespace fs = std::filesystem;

namespace {

using namespace std::chrono_literals;

constexpr qint64 kPaintBudgetMs = 2000;  // generous: a frame takes ~10 ms
constexpr int kRandomViewports = 50;

/// The files and folders of ../shared/traces a user could open: every trace file, and
/// every folder holding trace files (a TensorBoard run: one session, several ranks).
std::vector<fs::path> openableTraces() {
    std::set<fs::path> out;
    for (const fs::path& p : test::realTraceFiles()) {
        out.insert(p);
        if (importers::parseTraceFileName(p.filename().string()).matches)
            out.insert(p.parent_path());
    }
    return {out.begin(), out.end()};
}

class Exerciser {
public:
    Exerciser(test::Watchdog& dog, std::string label, uint64_t seed) : m_dog(dog), m_label(std::move(label)), m_rng(seed), m_seed(seed) {}

    /// Times `paint`; a slow one fails with what it was.
    bool timed(const std::string& what, const std::function<void()>& paint) {
        const std::string where = m_label + " (seed " + std::to_string(m_seed) + "): " + what;
        m_dog.beat(where);
        QElapsedTimer t;
        t.start();
        paint();
        const qint64 ms = t.elapsed();
        if (ms > m_worstMs) m_worstMs = ms, m_worstWhat = where;
        if (ms > kPaintBudgetMs) {
            m_failure = where + " took " + std::to_string(ms) + " ms";
            return false;
        }
        return true;
    }

    bool timeline(const LoadedTrace& lt) {
        TimelineView v;
        v.resize(1400, 900);
        v.setData(lt.entry.trace, lt.analysis, lt.timeline);
        v.show();
        if (!timed("timeline fit-all", [&] { v.grab(); })) return false;
        const model::Trace& t = *lt.entry.trace;
        const int64_t a = t.startNs(), b = t.endNs();
        const double span = std::max(1.0, model::nsDiff(b, a));
        auto at = [&](double f) { return model::satAdd(a, model::nsFromDouble(f * span)); };
        std::uniform_real_distribution<double> u(0, 1);
        QScrollBar* vs = v.findChild<QScrollBar*>();
        for (int k = 0; k < kRandomViewports; ++k) {
            int64_t lo = a, hi = b;
            switch (k % 7) {
            case 0: lo = at(u(m_rng)), hi = model::satAdd(lo, model::nsFromDouble(span * std::pow(10, -8 * u(m_rng)))); break;
            case 1: lo = at(u(m_rng)), hi = model::satAdd(lo, 1); break;                      // 1 ns wide
            case 2: lo = at(-u(m_rng) * 3), hi = at(1 + u(m_rng) * 3); break;                  // wider than the trace
            case 3: lo = at(-3), hi = at(-2); break;                                           // past the start
            case 4: lo = at(2), hi = at(3); break;                                             // past the end
            case 5: lo = model::kMinNs, hi = model::kMaxNs; break;                             // all of int64
            default: lo = at(u(m_rng)), hi = at(u(m_rng)); break;                              // anywhere, maybe reversed
            }
            v.zoomTo(lo, hi, 0);
            if (vs) vs->setValue(int(u(m_rng) * vs->maximum()));
            const TimelineViewport& vp = v.viewport();
            const std::string what = "timeline viewport " + std::to_string(k) + " [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + "] -> start " + std::to_string(vp.startNs) + ", " +
                                     std::to_string(vp.nsPerPx) + " ns/px, scroll " + std::to_string(vp.scrollY);
            if (!timed(what, [&] { v.grab(); })) return false;
            if (!timed(what + " hit test", [&] {
                    for (int h = 0; h < 20; ++h)
                        (void)TimelineRenderer::hitTest(v.layout(), vp, u(m_rng) * v.width(), u(m_rng) * v.height());
                }))
                return false;
            if (k % 10 == 0) {  // keys and wheel as a user would
                if (!timed(what + " keys", [&] {
                        QTest::keyClick(&v, Qt::Key_W);
                        QTest::keyClick(&v, Qt::Key_D);
                        QTest::keyClick(&v, Qt::Key_S);
                        QTest::keyClick(&v, Qt::Key_A);
                        v.grab();
                    }))
                    return false;
            }
        }
        // The renderer on raw viewports the widget's clamping would never produce.
        QImage img(1400, 900, QImage::Format_ARGB32_Premultiplied);
        for (const auto& [start, nsPerPx] : std::vector<std::pair<int64_t, double>>{
                 {model::kMinNs, 1e18}, {model::kMaxNs, 0.01}, {a, 0.01}, {b, 1e15}, {a, 0.0}, {a, -1.0},
                 {model::kMinNs, 0.01}, {a, std::nan("")}}) {
            TimelineViewport vp = v.viewport();
            vp.startNs = start;
            vp.nsPerPx = nsPerPx;
            TimelineRenderer r;
            if (!timed("raw viewport start " + std::to_string(start) + " ns/px " + std::to_string(nsPerPx), [&] {
                    QPainter p(&img);
                    r.paint(p, v.layout(), vp, v.state());
                }))
                return false;
        }
        return true;
    }

    bool flame(const LoadedTrace& lt) {
        FlamePanel panel;
        panel.resize(1400, 500);
        panel.show();
        for (const auto mode : {analysis::FlameMode::CpuTime, analysis::FlameMode::GpuTime}) {
            const char* name = mode == analysis::FlameMode::CpuTime ? "flame CPU" : "flame GPU";
            m_dog.beat(m_label + ": building the " + name + " graph");
            if (mode == analysis::FlameMode::CpuTime) panel.setData(lt.entry.trace, lt.analysis);
            else panel.setMode(mode);
            if (!QTest::qWaitFor([&] { return !panel.building(); }, 60000)) {
                m_failure = m_label + ": the " + name + " graph was not built within 60 s";
                return false;
            }
            if (!timed(std::string(name) + " paint", [&] { panel.grab(); })) return false;
        }
        return true;
    }

    bool stats(const LoadedTrace& lt) {
        StatsPanel panel;
        panel.resize(1400, 500);
        panel.show();
        if (!timed("statistics setData", [&] { panel.setData(lt.entry.trace, lt.analysis); })) return false;
        auto* tabs = panel.findChild<QTabWidget*>();
        for (int tab = 0; tabs && tab < tabs->count(); ++tab) {
            tabs->setCurrentIndex(tab);
            if (!timed("statistics tab " + std::to_string(tab), [&] { panel.grab(); })) return false;
        }
        return true;
    }

    bool reportPictures(const LoadedTrace& lt) {
        for (const analysis::Finding& f : lt.analysis->findings)
            if (!timed("report picture of " + f.id, [&] {
                    (void)reports::findingTimelinePicture(*lt.entry.trace, *lt.analysis, f, {});
                }))
                return false;
        return true;
    }

    bool all(const LoadedTrace& lt) { return timeline(lt) && flame(lt) && stats(lt) && reportPictures(lt); }

    [[nodiscard]] const std::string& failure() const { return m_failure; }
    [[nodiscard]] qint64 worstMs() const { return m_worstMs; }
    [[nodiscard]] const std::string& worstWhat() const { return m_worstWhat; }

private:
    test::Watchdog& m_dog;
    std::string m_label;
    std::mt19937_64 m_rng;
    uint64_t m_seed;
    std::string m_failure;
    qint64 m_worstMs = 0;
    std::string m_worstWhat;
};

LoadedTrace loadedFromJson(const std::string& json) {
    LoadedTrace lt;
    auto r = importers::importBuffer(json);
    if (!r) return lt;
    lt.entry.trace = r.value();
    lt.entry.label = "random";
    lt.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*lt.entry.trace));
    lt.timeline = TimelineIndex::build(*lt.entry.trace);
    return lt;
}

} // namespace

class TestRenderProperty : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { Theme::apply(*qApp, ThemeMode::Light); }

    void everyRealTraceRendersInBoundedTime() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        test::Watchdog dog(60s);
        const uint64_t stalls = base::loopStallCount();
        int traces = 0;
        qint64 worst = 0;
        std::string worstWhat;
        for (const fs::path& path : openableTraces()) {
            const std::string rel = fs::relative(path, test::sharedTraces()).generic_string();
            dog.beat("loading " + rel);
            QString error;
            const auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
            QVERIFY2(doc, qPrintable(QString::fromStdString(rel) + ": " + error));
            for (size_t i = 0; i < doc->traces.size(); ++i) {
                const std::string label = rel + (doc->traces.size() > 1 ? " rank " + std::to_string(i) : "");
                Exerciser ex(dog, label, 1000 + uint64_t(traces));
                QVERIFY2(ex.all(doc->traces[i]), ex.failure().c_str());
                if (ex.worstMs() > worst) worst = ex.worstMs(), worstWhat = ex.worstWhat();
                ++traces;
            }
        }
        QVERIFY(traces >= 40);
        QCOMPARE(base::loopStallCount(), stalls);
        qInfo("%d traces painted, slowest single paint %lld ms (%s)", traces, static_cast<long long>(worst),
              worstWhat.c_str());
    }

    void randomTracesRenderInBoundedTime_data() {
        QTest::addColumn<int>("shape");
        QTest::addColumn<quint64>("seed");
        const test::RandomShape shapes[] = {test::RandomShape::Nested, test::RandomShape::ManyTracks,
                                            test::RandomShape::TinyLane, test::RandomShape::Gpu,
                                            test::RandomShape::Extremes, test::RandomShape::Mixed};
        quint64 seed = 20261202;
        for (const auto s : shapes) {
            const int seeds = s == test::RandomShape::TinyLane || s == test::RandomShape::ManyTracks ? 1 : 3;
            for (int k = 0; k < seeds; ++k, ++seed)
                QTest::newRow((std::string(test::randomShapeName(s)) + "/" + std::to_string(seed)).c_str())
                    << int(s) << seed;
        }
    }

    void randomTracesRenderInBoundedTime() {
        QFETCH(int, shape);
        QFETCH(quint64, seed);
        test::Watchdog dog(60s);
        const auto s = static_cast<test::RandomShape>(shape);
        const std::string label = std::string("random ") + test::randomShapeName(s);
        dog.beat("generating " + label + " seed " + std::to_string(seed));
        const LoadedTrace lt = loadedFromJson(test::RandomTrace(seed, s).json());
        QVERIFY2(lt.entry.trace, (label + " did not import").c_str());
        if (s == test::RandomShape::TinyLane) QVERIFY(lt.entry.trace->slices().size() > 1'000'000);
        const uint64_t stalls = base::loopStallCount();
        Exerciser ex(dog, label, seed);
        QVERIFY2(ex.all(lt), ex.failure().c_str());
        QCOMPARE(base::loopStallCount(), stalls);
        qInfo("slowest single paint %lld ms (%s)", static_cast<long long>(ex.worstMs()), ex.worstWhat().c_str());
    }
};

QTEST_MAIN(TestRenderProperty)
#include "test_render_property.moc"
