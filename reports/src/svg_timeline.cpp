// The timeline picture of a finding (see svg.h).
#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/model/time_math.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/svg.h"
#include "stallscope/scene/timeline_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stallscope::reports {

using base::formatOffset;
using base::sanitizeUtf8;
using base::truncateUtf8;

using namespace model;
using analysis::AnalysisResult;
using analysis::Finding;

namespace {

constexpr int kHeader = 150;    // row labels
constexpr int kAxis = 22;       // time axis on top
constexpr int kBand = 16;       // finding label band
constexpr int kLane = 15;       // one nesting depth
constexpr int kStreamRow = 18;
constexpr double kCharWidth = 6.1;  // DejaVu Sans at 10 px, roughly

struct Row {
    TrackId track;
    std::string label;
    int lanes = 1;
    int height = 0;
};

std::string num(double v) {
    return detail::svgNum(v);
}

void rect(std::string& out, double x0, double y, double w, double h, uint32_t rgb, double opacity) {
    out += "<rect x='" + num(x0) + "' y='" + num(y) + "' width='" + num(std::max(w, 0.5)) +
           "' height='" + num(h) + "' fill='" + hexColor(rgb) + "'" +
           (opacity < 1 ? " fill-opacity='" + num(opacity) + "'" : "") + "/>";
}

} // namespace

Picture findingTimelinePicture(const Trace& t, const AnalysisResult& a, const Finding& f,
                               const TimelinePictureOptions& o) {
    Picture pic;
    pic.width = o.width;
    if (f.ranges.empty()) return pic;
    const auto largest = *std::max_element(f.ranges.begin(), f.ranges.end(),
                                           [](const auto& x, const auto& y) { return x.length() < y.length(); });
    const int64_t span = std::max<int64_t>(largest.length(), 1000);
    const int64_t lo = satSub(largest.start, span / 2), hi = satAdd(largest.end, span / 2);
    std::shared_ptr<const scene::TimelineIndex> index =
        o.index ? o.index : scene::TimelineIndex::build(t);

    // The rows, chosen by the scene's rules (the GUI shades the same ones).
    std::vector<Row> rows;
    scene::SceneRequest rq;
    for (TrackId th :
         scene::launchingThreads(t, f.device, lo, hi, size_t(std::max(0, o.maxThreads)))) {
        const TrackInfo& tr = t.track(th);
        Row r{th, std::string(t.str(tr.name)),
              std::clamp<int>(index->laneCount(th), 1, std::max(1, o.maxDepth)), 0};
        r.height = r.lanes * kLane + 6;
        rows.push_back(r);
    }
    for (TrackId st :
         scene::deviceStreams(t, f.device, lo, hi, size_t(std::max(0, o.maxStreams)))) {
        const TrackInfo& tr = t.track(st);
        std::string label = "GPU " + std::to_string(t.process(tr.process).gpuDevice) + " " + std::string(t.str(tr.name));
        rows.push_back(Row{st, label, 1, kStreamRow + 4});
    }
    int height = kAxis + kBand;
    for (const Row& r : rows) height += r.height;
    height += 4;
    pic.height = height;

    rq.viewport = {lo, std::max(1e-3, nsDiff(hi, lo) / double(std::max(1, o.width - kHeader - 8))),
                   double(kHeader), double(o.width - 8)};
    for (const Row& r : rows) rq.rows.push_back({r.track, r.lanes, 0});
    rq.origin = a.window.startNs;
    rq.shaded = &f.ranges;
    rq.maxItems = o.maxRects;
    const scene::DrawList dl = scene::buildScene(t, *index, rq);

    std::string s = detail::svgOpen(o.width, height, 10);
    for (const scene::Tick& tick : dl.ticks.major) {
        s += "<line x1='" + num(tick.x) + "' y1='" + std::to_string(kAxis - 6) + "' x2='" +
             num(tick.x) + "' y2='" + std::to_string(kAxis) + "' stroke='#888'/>";
        s += "<text x='" + num(tick.x + 3) + "' y='" + std::to_string(kAxis - 9) +
             "' fill='#555'>" + escapeHtml(formatOffset(tick.rel, dl.ticks.step)) + "</text>";
    }
    for (double x : dl.ticks.minor)
        s += "<line x1='" + num(x) + "' y1='" + std::to_string(kAxis - 3) + "' x2='" + num(x) +
             "' y2='" + std::to_string(kAxis) + "' stroke='#bbb'/>";
    // Rows: bands and labels, then the scene's lane items.
    std::vector<int> laneTop;
    int y = kAxis + kBand;
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        const Row& r = rows[ri];
        if (ri % 2) rect(s, 0, y, o.width, r.height, 0xF4F5F7, 1.0);
        s += "<text x='6' y='" + std::to_string(y + 12) + "' fill='#333'>" +
             escapeHtml(truncateUtf8(sanitizeUtf8(r.label), 22)) + "</text>";
        laneTop.push_back(y + 3);
        y += r.height;
    }
    const SliceTable& sl = t.slices();
    for (const scene::LaneDraw& item : dl.items) {
        const double ly = laneTop[item.row] + item.lane * kLane;
        rect(s, item.x0, ly, item.x1 - item.x0, kLane - 2, kindRgb(sl.kind[item.slice]),
             item.merged ? 0.85 : 1.0);
        if (!item.labelled) continue;
        const size_t fits = size_t(std::max(0.0, (item.x1 - item.x0 - 6) / kCharWidth));
        if (fits >= 2)
            s += "<text x='" + num(item.x0 + 3) + "' y='" + num(ly + kLane - 5) + "'>" +
                 escapeHtml(truncateUtf8(sanitizeUtf8(t.str(sl.name[item.slice])), fits)) +
                 "</text>";
    }
    // The finding's ranges in view, shaded over all rows, labelled in the band.
    const std::string kind(analysis::findingKindName(f.kind));
    for (const scene::Shade& sh : dl.shades) {
        s += "<rect x='" + num(sh.x0) + "' y='" + std::to_string(kAxis) + "' width='" +
             num(sh.x1 - sh.x0) + "' height='" + std::to_string(height - kAxis - 4) +
             "' fill='#e63228' fill-opacity='0.16' stroke='#d63031' stroke-opacity='0.8' "
             "stroke-dasharray='4 3'/>";
        if (sh.labelled)
            s += "<text x='" + num(sh.x0 + 4) + "' y='" + std::to_string(kAxis + 12) +
                 "' fill='#b3261e' font-weight='bold'>" + escapeHtml(kind) + "</text>";
    }
    s += "<line x1='" + std::to_string(kHeader) + "' y1='" + std::to_string(kAxis) + "' x2='" + std::to_string(kHeader) +
         "' y2='" + std::to_string(height - 4) + "' stroke='#ccc'/>";
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "Timeline from " + formatOffset(lo - a.window.startNs, 1000) + " to " +
              formatOffset(hi - a.window.startNs, 1000) + " with the " + kind + " ranges shaded";
    return pic;
}

} // namespace stallscope::reports
