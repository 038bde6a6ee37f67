// Timeline render benchmark (../shared/spec/performance.md: one full repaint of a 1920x1080 view
// <= 16 ms at any zoom on a 10 M-event trace; first paint <= 100 ms after import).
//
// Builds a synthetic training trace in memory (synthetic_trace.h: ProfilerStep > op > child op >
// launch call on the main thread, one kernel per launch on a stream, a DataLoader thread),
// analyses it, and times full repaints of the timeline at three zooms: the whole trace, one
// step and 100 us, each at 12 positions. The baseline, measured in the same run, is a naive
// renderer that fills one rectangle per visible event (no level of detail): the ratio says
// what the level of detail buys. With --trace FILE it also times the main window's first paint of a
// real trace (document ready -> pixels).
//
//   bench_render [--events N] [--trace FILE] [--only whole|step|us100]   (prints one JSON line)
#include "load_worker.h"
#include "main_window.h"
#include "stallscope/base/huge_pages.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/analysis.h"
#include "synthetic_trace.h"

#include <QApplication>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

using namespace stallscope;
using namespace stallscope::gui;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Frames {
    double p50 = 0, max = 0;
    size_t drawn = 0, merged = 0;
};

Frames timeFrames(TimelineView& v, QImage& img, int64_t span, int positions) {
    const int64_t lo = v.layout().startNs(), hi = v.layout().endNs();
    std::vector<double> ms;
    Frames f;
    for (int i = 0; i < positions; ++i) {
        const int64_t s = lo + (hi - lo - std::min(span, hi - lo)) * i / std::max(1, positions - 1);
        v.zoomTo(s, s + span, 0);
        const auto t0 = Clock::now();
        QPainter p(&img);
        v.render(&p);
        p.end();
        ms.push_back(msSince(t0));
        f.drawn = std::max(f.drawn, v.renderStats().slicesDrawn);
        f.merged = std::max(f.merged, v.renderStats().mergedBlocks);
    }
    std::sort(ms.begin(), ms.end());
    f.p50 = ms[ms.size() / 2];
    f.max = ms.back();
    return f;
}

/// The baseline: one rectangle per visible event, rows as the layout places them.
double naiveFrame(const TimelineView& v, QImage& img) {
    const auto t0 = Clock::now();
    QPainter p(&img);
    const auto& layout = v.layout();
    const auto& sl = layout.trace()->slices();
    const TimelineViewport& vp = v.viewport();
    for (const TimelineRow& r : layout.rows()) {
        if (r.kind != RowKind::Slices || !r.visible) continue;
        for (int d = 0; d < r.lanes; ++d)
            for (uint32_t i : layout.lane(r.track, d)) {
                if (sl.end(i) < vp.startNs || sl.start[i] > vp.endNs()) continue;
                const double x0 = vp.xOf(sl.start[i]), x1 = vp.xOf(sl.end(i));
                p.fillRect(QRectF(x0, vp.yOf(r.y) + d * 18, std::max(1.0, x1 - x0), 16),
                           TimelineRenderer::sliceColor(*layout.trace(), model::SliceId(i)));
            }
    }
    p.end();
    return msSince(t0);
}

} // namespace

int main(int argc, char** argv) {
    stallscope::base::tuneMalloc(argv); // docs/decisions.md, "Import at the speed of the parser"
    size_t events = 10'000'000;
    const char* real = nullptr;
    std::string only;  // profile one zoom: the others run no frames
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else
        if (!std::strcmp(argv[i], "--events") && i + 1 < argc) events = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc) real = argv[++i];
    }
    if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    Theme::apply(app, ThemeMode::Light);

    auto t0 = Clock::now();
    const bench::SyntheticTrace syn = bench::makeSyntheticTrace(events);
    const double buildMs = msSince(t0);
    t0 = Clock::now();
    auto analysis = std::make_shared<analysis::AnalysisResult>(analysis::analyze(*syn.trace));
    const double analyzeMs = msSince(t0);

    // The load worker builds the timeline index next to the analysis; the GUI thread then
    // only lays out rows and paints.
    t0 = Clock::now();
    auto index = TimelineIndex::build(*syn.trace);
    const double indexMs = msSince(t0);
    QImage img(1920, 1080, QImage::Format_ARGB32_Premultiplied);
    TimelineView v;
    v.resize(1920, 1080);
    t0 = Clock::now();
    v.setData(syn.trace, analysis, index);
    {
        QPainter p(&img);
        v.render(&p);
    }
    const double firstPaintMs = msSince(t0);

    const int64_t whole = v.layout().endNs() - v.layout().startNs();
    auto frames = [&](const char* zoom) { return only.empty() || only == zoom ? (only.empty() ? 12 : 200) : 1; };
    const Frames all = timeFrames(v, img, whole, frames("whole"));
    const Frames step = timeFrames(v, img, syn.stepNs, frames("step"));
    const Frames narrow = timeFrames(v, img, 100'000, frames("us100"));
    v.fitAll();
    const double naive = naiveFrame(v, img);

    double realFirstPaint = -1, realLoad = -1;
    size_t realEvents = 0;
    if (real) {
        QString error;
        t0 = Clock::now();
        auto doc = LoadWorker::loadNow(QString::fromLocal8Bit(real), {}, &error);
        realLoad = msSince(t0);
        if (!doc) {
            std::fprintf(stderr, "bench_render: %s\n", qPrintable(error));
            return 1;
        }
        realEvents = doc->traces.front().entry.trace->importStats().entries;
        MainWindow w;
        w.resize(1920, 1080);
        t0 = Clock::now();
        w.setDocument(doc);
        w.show();
        QImage shot(w.size(), QImage::Format_ARGB32_Premultiplied);
        QPainter p(&shot);
        w.render(&p);
        p.end();
        realFirstPaint = msSince(t0);
    }

    std::printf("{\"events\": %zu, \"build_ms\": %.0f, \"analyze_ms\": %.0f, \"index_ms_on_worker\": %.0f, "
                "\"first_paint_ms\": %.1f, "
                "\"whole_p50_ms\": %.2f, \"whole_max_ms\": %.2f, \"step_p50_ms\": %.2f, \"step_max_ms\": %.2f, "
                "\"us100_p50_ms\": %.2f, \"us100_max_ms\": %.2f, \"whole_merged_blocks\": %zu, "
                "\"naive_whole_ms\": %.1f, \"naive_over_lod\": %.1f, \"real_events\": %zu, \"real_load_ms\": %.0f, "
                "\"real_window_first_paint_ms\": %.1f}\n",
                size_t(syn.trace->slices().size()), buildMs, analyzeMs, indexMs, firstPaintMs, all.p50, all.max, step.p50,
                step.max, narrow.p50, narrow.max, all.merged, naive, naive / std::max(0.01, all.p50), realEvents,
                realLoad, realFirstPaint);
    return 0;
}
