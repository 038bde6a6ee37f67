// The reports' Memory section (traces recorded with profile_memory=True, allocator snapshots,
// memory timelines): per device the allocated and reserved curve (SVG), the peak table, what
// was live at the peak and the advice, the same figures as the Memory tab and
// `stallscope-cli memory` (analysis::analyzeMemory).
#include "report_common.h"

#include "stallscope/analysis/memory.h"
#include "stallscope/base/text_format.h"
#include "stallscope/reports/escape.h"

#include <algorithm>

namespace stallscope::reports::detail {

namespace {

using analysis::DeviceMemory;

std::string bytes(int64_t b) {
    return b < 0 ? "-" : base::formatBytes(uint64_t(b));
}

/// Allocated (filled) and reserved (line) over the window, one point per column of the
/// largest value in it, so that no peak is lost.
Picture memoryPicture(const DeviceMemory& d, int64_t start, int64_t end, int width) {
    Picture pic;
    pic.width = width;
    const int top = 24, chartH = 160, axisW = 84;
    pic.height = top + chartH + 22;
    const int columns = std::max(1, width - axisW - 4);
    double highest = 1;
    for (const auto& e : d.rows)
        highest = std::max({highest, double(e.totalAllocated), double(e.totalReserved)});
    const double span = double(std::max<int64_t>(1, end - start));
    std::string s = svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml(d.label + " · memory over the window (fill: allocated, line: reserved)") +
         "</text>";
    auto yOf = [&](double v) { return top + chartH - double(chartH) * std::max(0.0, v) / highest; };
    for (const bool reserved : {false, true}) {
        std::vector<double> colMax(size_t(columns), -1);
        for (const auto& e : d.rows) {
            const double v = double(reserved ? e.totalReserved : e.totalAllocated);
            if (v < 0) continue;
            const int c = std::clamp(int(double(e.ts - start) / span * columns), 0, columns - 1);
            colMax[size_t(c)] = std::max(colMax[size_t(c)], v);
        }
        std::string points;
        double last = -1, firstX = -1, lastX = axisW;
        for (int c = 0; c < columns; ++c) {
            const double v = colMax[size_t(c)] >= 0 ? colMax[size_t(c)] : last;
            if (v < 0) continue;
            const double x = axisW + c;
            if (firstX < 0) firstX = x;
            points += svgNum(x) + "," + svgNum(yOf(v)) + " ";
            last = colMax[size_t(c)] >= 0 ? colMax[size_t(c)] : last;
            lastX = x;
        }
        if (points.empty()) continue;
        if (reserved) {
            s += "<polyline fill='none' stroke='#6e6ebe' stroke-width='1.5' points='" + points +
                 "'/>";
        } else {
            s += "<polygon fill='#3478c8' fill-opacity='0.35' stroke='#3478c8' points='" +
                 svgNum(firstX) + "," + svgNum(yOf(0)) + " " + points + svgNum(lastX) + "," +
                 svgNum(yOf(0)) + "'/>";
        }
    }
    if (d.peakAllocated >= 0) {
        const double x = axisW + std::clamp(double(d.peakAllocatedAt - start) / span, 0.0, 1.0) *
                                     double(columns - 1);
        s += "<line x1='" + svgNum(x) + "' y1='" + std::to_string(top) + "' x2='" + svgNum(x) +
             "' y2='" + std::to_string(top + chartH) +
             "' stroke='#c83c32' stroke-dasharray='4 3'>"
             "<title>" +
             escapeHtml("peak allocated " + bytes(d.peakAllocated)) + "</title></line>";
    }
    s += "<text x='" + std::to_string(axisW - 6) + "' y='" + std::to_string(top + 10) +
         "' fill='#555' text-anchor='end'>" + escapeHtml(bytes(int64_t(highest))) + "</text>";
    s += "<text x='" + std::to_string(axisW - 6) + "' y='" + std::to_string(top + chartH) +
         "' fill='#555' text-anchor='end'>0</text>";
    s += "<text x='" + std::to_string(axisW) + "' y='" + std::to_string(top + chartH + 16) +
         "' fill='#555'>+0</text><text x='" + std::to_string(width - 4) + "' y='" +
         std::to_string(top + chartH + 16) + "' fill='#555' text-anchor='end'>+" +
         escapeHtml(base::formatDuration(end - start)) + "</text></svg>";
    pic.svg = std::move(s);
    pic.alt = d.label + ": allocated and reserved memory over the window; peak allocated " +
              bytes(d.peakAllocated) + ", peak reserved " + bytes(d.peakReserved);
    return pic;
}

} // namespace

void memory(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
            const ReportOptions& o) {
    if (in.trace->memorySamples().empty()) return;
    const analysis::MemoryAnalysis m = analysis::analyzeMemory(*in.trace, *in.analysis);
    if (m.empty()) return;
    doc.heading(2, prefix + "Memory", anchor(prefix + "memory"));
    const int64_t start = in.analysis->window.startNs, end = in.analysis->window.endNs;
    Table peaks{{"device", "peak allocated", "when", "step", "peak reserved", "allocated then",
                 "device memory"},
                {false, true, true, true, true, true, true},
                {}};
    for (const DeviceMemory& d : m.devices)
        peaks.rows.push_back({plain(d.label), plain(bytes(d.peakAllocated)),
                              plain("+" + base::formatDuration(d.peakAllocatedAt - start)),
                              plain(d.peakStep >= 0 ? "#" + std::to_string(d.peakStep) : "-"),
                              plain(bytes(d.peakReserved)), plain(bytes(d.allocatedAtPeakReserved)),
                              plain(d.capacity > 0 ? bytes(d.capacity) : "not said")});
    doc.table(std::move(peaks));
    for (const DeviceMemory& d : m.devices) {
        if (d.deviceType != 1) continue;
        if (o.pictures) doc.picture(memoryPicture(d, start, end, 760));
        const std::vector<analysis::MemoryLiveGroup>& live = !d.liveByFrame.empty() ? d.liveByFrame
                                                             : !d.liveByCategory.empty()
                                                                 ? d.liveByCategory
                                                                 : d.liveByOperator;
        if (!live.empty()) {
            Table t{
                {"live at the peak, by " + std::string(!d.liveByFrame.empty()      ? "frame"
                                                       : !d.liveByCategory.empty() ? "category"
                                                                                   : "operator"),
                 "bytes", "blocks"},
                {false, true, true},
                {}};
            for (size_t i = 0; i < live.size() && i < o.tableRows; ++i)
                t.rows.push_back({{{shortName(live[i].name), Style::Code}},
                                  plain(bytes(live[i].bytes)),
                                  plain(std::to_string(live[i].blocks))});
            doc.table(std::move(t));
        }
        if (d.liveBeforeTrace > 0)
            doc.paragraph({{bytes(d.liveBeforeTrace) +
                                " of the peak was allocated before the events began (not "
                                "attributable).",
                            Style::Muted}});
        for (const analysis::MemoryAdvice& a : d.advice)
            doc.paragraph({{"▸ ", Style::Bold},
                           {a.text + " ", Style::Plain},
                           {"Fix: ", Style::Bold},
                           {a.fix, Style::Plain}});
    }
    for (const std::string& n : m.notes) doc.paragraph({{n, Style::Muted}});
}

} // namespace stallscope::reports::detail
