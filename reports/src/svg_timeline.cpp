// The timeline picture of a finding (see svg.h).
#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/model/time_math.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace stallscope::reports {

using base::formatOffset;
using base::sanitizeUtf8;
using base::tickStep;
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

/// Threads that launch the device's GPU work inside [lo, hi) (most launches first), then
/// the busiest CPU threads in view when there are none.
std::vector<TrackId> pickThreads(const Trace& t, const Finding& f, int64_t lo, int64_t hi, int max) {
    std::map<uint32_t, size_t> launches, busy;
    const SliceTable& s = t.slices();
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        const TrackId id(ti);
        if (tr.kind == TrackKind::GpuStream && (f.device < 0 || t.process(tr.process).gpuDevice == f.device)) {
            for (uint32_t i = t.firstSliceEndingAtOrAfter(id, lo), e = t.firstSliceStartingAfter(id, hi); i < e; ++i) {
                const SliceId l = t.launchOf(SliceId(i));
                if (l.valid()) ++launches[s.track[l.index()].index()];
            }
        } else if (tr.kind == TrackKind::CpuThread) {
            busy[ti] = t.firstSliceStartingAfter(id, hi) - t.firstSliceEndingAtOrAfter(id, lo);
        }
    }
    std::vector<std::pair<size_t, uint32_t>> order;
    for (const auto& [ti, n] : (launches.empty() ? busy : launches))
        if (n > 0) order.emplace_back(n, ti);
    std::sort(order.rbegin(), order.rend());
    std::vector<TrackId> out;
    for (size_t i = 0; i < order.size() && int(i) < max; ++i) out.push_back(TrackId(order[i].second));
    return out;
}

std::vector<TrackId> pickStreams(const Trace& t, int32_t device, int64_t lo, int64_t hi, int max) {
    std::vector<std::pair<size_t, uint32_t>> order;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream || (device >= 0 && t.process(tr.process).gpuDevice != device)) continue;
        const size_t n = t.firstSliceStartingAfter(TrackId(ti), hi) - t.firstSliceEndingAtOrAfter(TrackId(ti), lo);
        if (n > 0 || device >= 0) order.emplace_back(n, ti);
    }
    std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::vector<TrackId> out;
    for (size_t i = 0; i < order.size() && int(i) < max; ++i) out.push_back(TrackId(order[i].second));
    std::sort(out.begin(), out.end());
    return out;
}

class Painter {
public:
    Painter(const Trace& t, int width, int64_t lo, int64_t hi) : m_t(t), m_width(width), m_lo(lo), m_hi(hi) {
        m_nsPerPx = std::max(1e-3, nsDiff(hi, lo) / double(std::max(1, width - kHeader - 8)));
    }
    double x(int64_t ns) const { return kHeader + nsDiff(ns, m_lo) / m_nsPerPx; }

    void axis(int64_t origin) {
        const int64_t step = std::max<int64_t>(1, tickStep(m_nsPerPx, 110));
        const int64_t fromOrigin = satSub(m_lo, origin);
        int64_t q = fromOrigin / step;  // floor division, without overflow at INT64_MIN
        if (fromOrigin % step < 0 && q > kMinNs / step) --q;
        // Ticks are counted (at most one per 110 px), not walked to a time: at the ends of
        // int64 `rel += step` would wrap.
        const int ticks = int(std::min(nsDiff(m_hi, m_lo) / double(step), 1000.0)) + 2;
        int64_t rel = q * step;
        for (int k = 0; k < ticks && satAdd(origin, rel) <= m_hi; ++k, rel = satAdd(rel, step)) {
            const double px = x(satAdd(origin, rel));
            if (px < kHeader) continue;
            m_out += "<line x1='" + detail::svgNum(px) + "' y1='" + std::to_string(kAxis - 6) + "' x2='" + detail::svgNum(px) + "' y2='" +
                     std::to_string(kAxis) + "' stroke='#888'/>";
            m_out += "<text x='" + detail::svgNum(px + 3) + "' y='" + std::to_string(kAxis - 9) + "' fill='#555'>" +
                     escapeHtml(formatOffset(rel, step)) + "</text>";
        }
    }

    /// The slices of `track` in view, one lane per depth (deeper ones are left out), with
    /// sub-pixel slices merged into runs per lane. One pass over the track's visible slices.
    void track(TrackId track, int lanes, int y, size_t& budget) {
        const SliceTable& s = m_t.slices();
        struct Run {
            double x0 = -1, x1 = -1;
            EventKind kind = EventKind::Other;
        };
        std::vector<Run> runs(static_cast<size_t>(lanes));
        auto flush = [&](int d) {
            Run& r = runs[static_cast<size_t>(d)];
            if (r.x1 > r.x0 && budget > 0) {
                rect(r.x0, y + d * kLane, r.x1 - r.x0, kLane - 2, kindRgb(r.kind), 0.85);
                --budget;
            }
            r = Run{};
        };
        for (uint32_t i = m_t.firstSliceEndingAtOrAfter(track, m_lo), e = m_t.firstSliceStartingAfter(track, m_hi);
             i < e && budget > 0; ++i) {
            const int d = s.depth[i];
            if (d >= lanes || s.end(i) < m_lo) continue;
            const double x0 = std::max(double(kHeader), x(s.start[i])), x1 = std::min(double(m_width - 8), x(s.end(i)));
            Run& r = runs[static_cast<size_t>(d)];
            if (x1 - x0 < 1.5) {  // merge into the lane's run when adjacent
                if (r.x1 >= 0 && x0 <= r.x1 + 1) r.x1 = std::max(r.x1, std::max(x1, x0 + 1));
                else flush(d), r = Run{x0, std::max(x1, x0 + 1), s.kind[i]};
                continue;
            }
            flush(d);
            --budget;
            const int ly = y + d * kLane;
            rect(x0, ly, x1 - x0, kLane - 2, kindRgb(s.kind[i]), 1.0);
            const size_t fits = size_t((x1 - x0 - 6) / kCharWidth);
            if (fits >= 4)
                m_out += "<text x='" + detail::svgNum(x0 + 3) + "' y='" + std::to_string(ly + kLane - 5) + "'>" +
                         escapeHtml(truncateUtf8(sanitizeUtf8(m_t.str(s.name[i])), fits)) + "</text>";
        }
        for (int d = 0; d < lanes; ++d) flush(d);
    }

    void rect(double x0, double y, double w, double h, uint32_t rgb, double opacity) {
        m_out += "<rect x='" + detail::svgNum(x0) + "' y='" + detail::svgNum(y) + "' width='" + detail::svgNum(std::max(w, 0.5)) + "' height='" + detail::svgNum(h) +
                 "' fill='" + hexColor(rgb) + "'" + (opacity < 1 ? " fill-opacity='" + detail::svgNum(opacity) + "'" : "") + "/>";
    }

    std::string& out() { return m_out; }
    double nsPerPx() const { return m_nsPerPx; }

private:
    const Trace& m_t;
    int m_width;
    int64_t m_lo, m_hi;
    double m_nsPerPx;
    std::string m_out;
};

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

    std::vector<Row> rows;
    for (TrackId th : pickThreads(t, f, lo, hi, o.maxThreads)) {
        const TrackInfo& tr = t.track(th);
        Row r{th, std::string(t.str(tr.name)), std::min<int>(tr.maxDepth + 1, o.maxDepth), 0};
        r.height = r.lanes * kLane + 6;
        rows.push_back(r);
    }
    for (TrackId st : pickStreams(t, f.device, lo, hi, o.maxStreams)) {
        const TrackInfo& tr = t.track(st);
        std::string label = "GPU " + std::to_string(t.process(tr.process).gpuDevice) + " " + std::string(t.str(tr.name));
        rows.push_back(Row{st, label, 1, kStreamRow + 4});
    }
    int height = kAxis + kBand;
    for (const Row& r : rows) height += r.height;
    height += 4;
    pic.height = height;

    Painter p(t, o.width, lo, hi);
    std::string& s = p.out();
    s = "<svg xmlns='http://www.w3.org/2000/svg' width='" + std::to_string(o.width) + "' height='" +
        std::to_string(height) + "' viewBox='0 0 " + std::to_string(o.width) + " " + std::to_string(height) +
        "' font-family='DejaVu Sans, Arial, sans-serif' font-size='10'>";
    s += "<rect width='100%' height='100%' fill='#ffffff'/>";
    p.axis(a.window.startNs);
    // Rows.
    int y = kAxis + kBand;
    size_t budget = o.maxRects;
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        const Row& r = rows[ri];
        if (ri % 2) p.rect(0, y, o.width, r.height, 0xF4F5F7, 1.0);
        s += "<text x='6' y='" + std::to_string(y + 12) + "' fill='#333'>" +
             escapeHtml(truncateUtf8(sanitizeUtf8(r.label), 22)) + "</text>";
        p.track(r.track, r.lanes, y + 3, budget);
        y += r.height;
    }
    // The finding's ranges in view, shaded over all rows, labelled in the band.
    const std::string kind(analysis::findingKindName(f.kind));
    bool labelled = false;
    for (const auto& iv : f.ranges) {
        if (iv.end <= lo || iv.start >= hi) continue;
        const double x0 = std::max(double(kHeader), p.x(iv.start)), x1 = std::min(double(o.width - 8), p.x(iv.end));
        const double w = std::max(1.0, x1 - x0);
        s += "<rect x='" + detail::svgNum(x0) + "' y='" + std::to_string(kAxis) + "' width='" + detail::svgNum(w) + "' height='" +
             std::to_string(height - kAxis - 4) + "' fill='#e63228' fill-opacity='0.16' stroke='#d63031' "
             "stroke-opacity='0.8' stroke-dasharray='4 3'/>";
        if (!labelled && w > 60) {
            s += "<text x='" + detail::svgNum(x0 + 4) + "' y='" + std::to_string(kAxis + 12) + "' fill='#b3261e' font-weight='bold'>" +
                 escapeHtml(kind) + "</text>";
            labelled = true;
        }
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
