// The idle-cause breakdown and the what-if waterfall pictures (see svg.h).
#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/svg.h"

#include <algorithm>

namespace stallscope::reports {

using base::formatDuration;

using namespace analysis;

Picture idleCausePicture(const DeviceMetrics& d, int width) {
    Picture pic;
    pic.width = width;
    std::vector<std::pair<int64_t, IdleCause>> causes;
    for (size_t k = 0; k < kIdleCauseCount; ++k)
        if (d.idle.causes[k].ns > 0) causes.emplace_back(d.idle.causes[k].ns, static_cast<IdleCause>(k));
    std::sort(causes.rbegin(), causes.rend());
    const int rowsOfLegend = static_cast<int>((causes.size() + 2) / 3);
    const int barY = 24, barH = 22, legendY = barY + barH + 14;
    pic.height = legendY + rowsOfLegend * 18 + 6;
    const double window = double(std::max<int64_t>(1, d.windowNs));
    std::string s = detail::svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml("GPU " + std::to_string(d.device) + (d.name.empty() ? "" : " · " + d.name)) + "</text>";
    s += "<text x='" + std::to_string(width - 4) + "' y='15' fill='#555' text-anchor='end'>" +
         escapeHtml("busy " + detail::pct(d.utilization) + " · idle " + formatDuration(d.idleNs) + " of " +
                    formatDuration(d.windowNs)) +
         "</text>";
    // The bar: busy first (grey-green), then the causes, largest first.
    const double w = width;
    double x = 0;
    auto segment = [&](int64_t ns, uint32_t rgb, const std::string& title) {
        const double sw = w * double(ns) / window;
        s += "<rect x='" + detail::svgNum(x) + "' y='" + std::to_string(barY) + "' width='" + detail::svgNum(std::max(sw, 0.0)) + "' height='" +
             std::to_string(barH) + "' fill='" + hexColor(rgb) + "'><title>" + escapeHtml(title) + "</title></rect>";
        x += sw;
    };
    segment(d.busyNs, 0xC8D6CC, "busy " + formatDuration(d.busyNs));
    for (const auto& [ns, c] : causes)
        segment(ns, causeRgb(c), std::string(idleCauseName(c)) + " " + formatDuration(ns));
    s += "<rect x='0.5' y='" + std::to_string(barY) + ".5' width='" + detail::svgNum(w - 1) + "' height='" + std::to_string(barH - 1) +
         "' fill='none' stroke='#999'/>";
    // Legend: three columns.
    const double colW = w / 3;
    for (size_t i = 0; i < causes.size(); ++i) {
        const auto& [ns, c] = causes[i];
        const double lx = colW * double(i % 3);
        const int ly = legendY + static_cast<int>(i / 3) * 18;
        s += "<rect x='" + detail::svgNum(lx) + "' y='" + std::to_string(ly - 9) + "' width='10' height='10' fill='" +
             hexColor(causeRgb(c)) + "'/>";
        s += "<text x='" + detail::svgNum(lx + 14) + "' y='" + std::to_string(ly) + "' fill='#222'>" +
             escapeHtml(std::string(idleCauseName(c)) + "  " + formatDuration(ns) + "  " + detail::pct(double(ns) / window)) +
             "</text>";
    }
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "GPU " + std::to_string(d.device) + ": busy " + detail::pct(d.utilization) + "; idle time by cause";
    return pic;
}

Picture waterfallPicture(const Waterfall& wf, int width) {
    Picture pic;
    pic.width = width;
    const int rowH = 24, top = 24, labelW = 300, valueW = 150;
    const size_t rows = wf.bars.size() + 1;
    pic.height = top + int(rows) * rowH + 8;
    const double barSpace = double(width - labelW - valueW);
    const double full = double(std::max<int64_t>(1, wf.measuredNs));
    std::string s = detail::svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml(
             std::string(wf.device >= 0 ? "GPU " + std::to_string(wf.device) : "CPU-only trace") +
             " · step time after each fix (what-if replay)") +
         "</text>";
    int64_t before = wf.measuredNs;
    for (size_t i = 0; i < rows; ++i) {
        const int y = top + int(i) * rowH;
        const int64_t ns = i == 0 ? wf.measuredNs : wf.bars[i - 1].windowNs;
        const std::string label =
            i == 0 ? "measured" : "+ " + std::string(fixDescription(wf.bars[i - 1].fix));
        const double bw = barSpace * double(ns) / full;
        s += "<text x='0' y='" + std::to_string(y + 15) + "' fill='#222'>" + escapeHtml(label) +
             "</text>";
        s += "<rect x='" + std::to_string(labelW) + "' y='" + std::to_string(y + 3) + "' width='" +
             detail::svgNum(bw) + "' height='" + std::to_string(rowH - 6) + "' fill='" +
             (i == 0 ? "#9aa5b1" : "#4c9a6a") + "'><title>" + escapeHtml(formatDuration(ns)) +
             "</title></rect>";
        if (i > 0 && before > ns) // what this fix removes, hatched in the bar's place
            s += "<rect x='" + detail::svgNum(labelW + bw) + "' y='" + std::to_string(y + 3) +
                 "' width='" + detail::svgNum(barSpace * double(before - ns) / full) +
                 "' height='" + std::to_string(rowH - 6) + "' fill='#f3d9a4'/>";
        const std::string value =
            formatDuration(ns) + (i == 0 ? "" : "  (" + detail::pct(double(ns) / full) + ")");
        s += "<text x='" + std::to_string(width - 4) + "' y='" + std::to_string(y + 15) +
             "' fill='#222' text-anchor='end'>" + escapeHtml(value) + "</text>";
        before = ns;
    }
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "waterfall: the window " + formatDuration(wf.measuredNs) +
              " as measured, then after each fix";
    return pic;
}

Picture rankHeatmapPicture(const CrossRankResult& cross, bool waiting, int width) {
    Picture pic;
    pic.width = width;
    const size_t rows = cross.cells.size(), cols = cross.stepLabels.size();
    const int labelW = 56, top = 40, scaleH = 34;
    const int cellH = int(std::clamp<size_t>(rows ? 480 / rows : 18, 3, 18));
    const double cellW = cols ? double(width - labelW - 8) / double(cols) : 0;
    pic.height = top + int(rows) * cellH + scaleH;
    auto value = [&](const RankStepCell& c) {
        return waiting ? (c.stepNs > 0 ? double(c.waitNs) / double(c.stepNs) : 0.0)
                       : double(c.stepNs);
    };
    double lo = 0, hi = 0;
    bool first = true;
    for (const auto& row : cross.cells)
        for (const RankStepCell& c : row) {
            if (!c.present) continue;
            const double v = value(c);
            lo = first ? v : std::min(lo, v);
            hi = first ? v : std::max(hi, v);
            first = false;
        }
    // Step time: a spread under a fifth of the slowest is drawn as that fifth, so ranks a few
    // per cent apart stay near one colour instead of spanning the whole scale.
    if (waiting)
        lo = 0;
    else
        lo = std::min(lo, hi * 0.8);
    auto fmt = [&](double v) { return waiting ? detail::pct(v) : formatDuration(int64_t(v)); };
    std::string s = detail::svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml(std::string(waiting ? "Waiting in collectives, share of each step"
                                        : "Step time per rank and step") +
                    " (" + std::to_string(rows) + " ranks × " + std::to_string(cols) +
                    " steps; outlined: the step's straggler)") +
         "</text>";
    const size_t labelEvery = std::max<size_t>(1, size_t(12 / std::max(cellH, 1)) + 1);
    for (size_t c = 0; c < cols; c += std::max<size_t>(1, size_t(60 / std::max(cellW, 1.0))))
        s += "<text x='" + detail::svgNum(labelW + cellW * (double(c) + 0.5)) + "' y='" +
             std::to_string(top - 6) + "' fill='#555' text-anchor='middle'>" +
             escapeHtml(cross.stepLabels[c]) + "</text>";
    for (size_t i = 0; i < rows; ++i) {
        const int y = top + int(i) * cellH;
        if (i % labelEvery == 0)
            s += "<text x='" + std::to_string(labelW - 6) + "' y='" +
                 std::to_string(y + std::min(cellH, 11) - 1) +
                 "' fill='#555' text-anchor='end'>rank " + std::to_string(cross.ranks[i].rank) +
                 "</text>";
        for (size_t c = 0; c < cols; ++c) {
            const RankStepCell& cell = cross.cells[i][c];
            if (!cell.present) continue;
            const double t = hi > lo ? (value(cell) - lo) / (hi - lo) : 0.0;
            const bool straggler = cross.stepStraggler[c] == cross.ranks[i].rank;
            s += "<rect x='" + detail::svgNum(labelW + cellW * double(c)) + "' y='" +
                 std::to_string(y) + "' width='" + detail::svgNum(std::max(cellW - 1, 0.5)) +
                 "' height='" + std::to_string(std::max(cellH - 1, 1)) + "' fill='" +
                 hexColor(heatRgb(t)) + "'" +
                 (straggler ? " stroke='#1f3b73' stroke-width='1.5'" : "") + "><title>" +
                 escapeHtml("rank " + std::to_string(cross.ranks[i].rank) + " " +
                            cross.stepLabels[c] + ": step " + formatDuration(cell.stepNs) +
                            ", GPU busy " + formatDuration(cell.busyNs) + ", waiting " +
                            formatDuration(cell.waitNs) + " of " +
                            formatDuration(cell.collectiveNs) + " in collectives" +
                            (straggler ? "; the step's straggler" : "")) +
                 "</title></rect>";
        }
    }
    // The colour scale.
    const int sy = top + int(rows) * cellH + 10;
    const int sw = 240;
    for (int k = 0; k < 24; ++k)
        s += "<rect x='" + std::to_string(labelW + k * sw / 24) + "' y='" + std::to_string(sy) +
             "' width='" + std::to_string(sw / 24 + 1) + "' height='10' fill='" +
             hexColor(heatRgb(double(k) / 23)) + "'/>";
    s += "<text x='" + std::to_string(labelW) + "' y='" + std::to_string(sy + 22) +
         "' fill='#555'>" + escapeHtml(fmt(lo)) + "</text>";
    s += "<text x='" + std::to_string(labelW + sw) + "' y='" + std::to_string(sy + 22) +
         "' fill='#555' text-anchor='end'>" + escapeHtml(fmt(hi)) + "</text>";
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = std::string(waiting ? "waiting share" : "step time") + " per rank and step, " +
              std::to_string(rows) + " ranks × " + std::to_string(cols) + " steps, from " +
              fmt(lo) + " to " + fmt(hi);
    return pic;
}

Picture stepBreakdownPicture(const StepBreakdown& b, int width) {
    Picture pic;
    pic.width = width;
    const auto& cats = breakdownCategories();
    constexpr size_t kMaxBars = 48; // more steps: the first 48 (the table says how many)
    const size_t bars = std::min(b.steps.size(), kMaxBars);
    const bool mean = b.meanOver > 1;
    const int top = 24, chartH = 180, axisW = 84, labelH = 18, legendRows = 2;
    const int legendY = top + chartH + labelH + 16;
    pic.height = legendY + legendRows * 18 + 4;
    int64_t longest = std::max<int64_t>(1, mean ? b.meanStepNs : 0);
    for (size_t i = 0; i < bars; ++i) longest = std::max(longest, b.steps[i].lengthNs());
    std::string s = detail::svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml("GPU " + std::to_string(b.device) + " · time per step by what ran" +
                    (mean ? " (legend: the mean of " + std::to_string(b.meanOver) + " steady steps)"
                          : std::string())) +
         "</text>";
    // The axis: 0 and the longest step.
    const double plotW = double(width - axisW);
    const double slot = plotW / double(bars + (mean ? 2 : 0));
    const double barW = std::max(2.0, slot * 0.7);
    auto yOf = [&](int64_t ns) {
        return top + chartH - double(chartH) * double(ns) / double(longest);
    };
    s += "<text x='" + std::to_string(axisW - 6) + "' y='" + std::to_string(top + 10) +
         "' fill='#555' text-anchor='end'>" + escapeHtml(formatDuration(longest)) + "</text>";
    s += "<text x='" + std::to_string(axisW - 6) + "' y='" + std::to_string(top + chartH) +
         "' fill='#555' text-anchor='end'>0</text>";
    s += "<line x1='" + std::to_string(axisW) + "' y1='" + std::to_string(top + chartH) + "' x2='" +
         std::to_string(width) + "' y2='" + std::to_string(top + chartH) + "' stroke='#999'/>";
    auto bar = [&](double x, const std::string& label, int64_t length,
                   const std::array<int64_t, kBreakdownCategories>& ns, bool faded) {
        int64_t below = 0;
        for (size_t k = 0; k < cats.size(); ++k) {
            if (ns[k] <= 0) continue;
            const double y0 = yOf(below), y1 = yOf(below + ns[k]);
            s += "<rect x='" + detail::svgNum(x) + "' y='" + detail::svgNum(y1) + "' width='" +
                 detail::svgNum(barW) + "' height='" + detail::svgNum(std::max(0.0, y0 - y1)) +
                 "' fill='" + hexColor(breakdownRgb(k)) + "'" +
                 (faded ? " fill-opacity='0.45'" : "") + "><title>" +
                 escapeHtml(label + ": " + std::string(cats[k].label) + " " +
                            formatDuration(ns[k]) + " of " + formatDuration(length)) +
                 "</title></rect>";
            below += ns[k];
        }
        if (slot >= 28 || bars <= 16)
            s += "<text x='" + detail::svgNum(x + barW / 2) + "' y='" +
                 std::to_string(top + chartH + 14) + "' fill='#555' text-anchor='middle'>" +
                 escapeHtml(label) + "</text>";
    };
    for (size_t i = 0; i < bars; ++i) {
        const StepBreakdownRow& st = b.steps[i];
        bar(axisW + slot * double(i) + (slot - barW) / 2, "#" + std::to_string(st.number),
            st.lengthNs(), st.ns, st.warmup);
    }
    if (mean)
        bar(axisW + slot * double(bars + 1) + (slot - barW) / 2, "mean", b.meanStepNs, b.meanNs,
            false);
    // Legend: four columns, two rows.
    const double colW = double(width) / 4;
    for (size_t k = 0; k < cats.size(); ++k) {
        const double lx = colW * double(k % 4);
        const int ly = legendY + static_cast<int>(k / 4) * 18;
        s += "<rect x='" + detail::svgNum(lx) + "' y='" + std::to_string(ly - 9) +
             "' width='10' height='10' fill='" + hexColor(breakdownRgb(k)) + "'/>";
        s += "<text x='" + detail::svgNum(lx + 14) + "' y='" + std::to_string(ly) +
             "' fill='#222'>" +
             escapeHtml(std::string(cats[k].label) +
                        (mean ? "  " + formatDuration(b.meanNs[k]) : std::string())) +
             "</text>";
    }
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "GPU " + std::to_string(b.device) + ": time per step by what ran, " +
              std::to_string(b.steps.size()) + " steps";
    return pic;
}

} // namespace stallscope::reports
