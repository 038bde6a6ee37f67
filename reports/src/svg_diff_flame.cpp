// The differential flame graph as SVG (analysis/run_diff.h): GPU time by the CPU stack that
// launched it, both runs merged by name path, per step. A frame's width is the mean of its
// before and after time (children never overflow their parent on either side, so neither on
// the mean), its colour the change: red where AFTER spends more, blue where less, grey where
// the same; a frame only in one run is the full colour. Every frame's title gives both times.
#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/svg.h"

#include <algorithm>
#include <cmath>

namespace stallscope::reports {

using analysis::DiffFlameGraph;
using analysis::DiffFlameNode;
using base::formatDuration;

uint32_t diffFlameRgb(int64_t beforeNs, int64_t afterNs) {
    const double hi = double(std::max(beforeNs, afterNs));
    const double rel = hi > 0 ? double(afterNs - beforeNs) / hi : 0; // -1 .. 1
    const double t = std::min(1.0, std::abs(rel) * 1.5);
    // From a light grey towards red (more time) or blue (less time).
    const double g0 = 0xDD;
    const auto mix = [&](double to) { return uint32_t(std::lround(g0 + (to - g0) * t)); };
    if (rel >= 0) return (mix(0xE0) << 16) | (mix(0x4A) << 8) | mix(0x3C);
    return (mix(0x3C) << 16) | (mix(0x78) << 8) | mix(0xD8);
}

std::string diffFlameTitle(const DiffFlameNode& n) {
    const int64_t d = n.afterNs - n.beforeNs;
    return n.name + ": " + formatDuration(n.beforeNs) + " -> " + formatDuration(n.afterNs) +
           " a step (" +
           (d > 0   ? "+"
            : d < 0 ? "-"
                    : "") +
           formatDuration(d < 0 ? -d : d) + ")";
}

Picture diffFlamePicture(const DiffFlameGraph& g, int width, int maxDepth) {
    Picture pic;
    pic.width = width;
    if (g.empty()) return pic;
    const int rowH = 17, top = 22;
    const int depth = std::min(g.maxDepth, maxDepth);
    pic.height = top + (depth + 1) * rowH + 22;
    const DiffFlameNode& root = g.nodes[0];
    const double scale = double(width) / (0.5 * double(root.beforeNs + root.afterNs));
    std::string s = detail::svgOpen(width, pic.height, 10);
    s += "<text x='0' y='14' fill='#222' font-weight='bold'>" +
         escapeHtml("GPU time by launching stack, per step: " + formatDuration(root.beforeNs) +
                    " -> " + formatDuration(root.afterNs)) +
         "</text>";
    // Depth-first from the root: each frame at its x, children left to right.
    struct Item {
        int32_t node;
        double x;
    };
    std::vector<Item> todo{{0, 0}};
    size_t drawn = 0;
    bool cut = false;
    while (!todo.empty()) {
        const Item it = todo.back();
        todo.pop_back();
        const DiffFlameNode& n = g.nodes[size_t(it.node)];
        const double w = 0.5 * double(n.beforeNs + n.afterNs) * scale;
        if (w < 0.8) continue;
        if (n.depth > depth) {
            cut = true;
            continue;
        }
        const int y = top + n.depth * rowH;
        s += "<rect x='" + detail::svgNum(it.x) + "' y='" + std::to_string(y) + "' width='" +
             detail::svgNum(std::max(w - 0.5, 0.5)) + "' height='" + std::to_string(rowH - 1) +
             "' fill='" + hexColor(diffFlameRgb(n.beforeNs, n.afterNs)) + "'><title>" +
             escapeHtml(diffFlameTitle(n)) + "</title></rect>";
        if (w > 40) {
            const size_t chars = size_t((w - 4) / 5.6);
            s += "<text x='" + detail::svgNum(it.x + 2) + "' y='" + std::to_string(y + rowH - 5) +
                 "' fill='#111' pointer-events='none'>" +
                 escapeHtml(detail::shortName(n.name, std::max<size_t>(chars, 2))) + "</text>";
        }
        ++drawn;
        double cx = it.x;
        std::vector<Item> kids;
        for (int32_t c : n.children) {
            const DiffFlameNode& k = g.nodes[size_t(c)];
            kids.push_back({c, cx});
            cx += 0.5 * double(k.beforeNs + k.afterNs) * scale;
        }
        for (auto k = kids.rbegin(); k != kids.rend(); ++k) todo.push_back(*k);
    }
    const int ly = pic.height - 6;
    s += "<rect x='0' y='" + std::to_string(ly - 9) + "' width='10' height='10' fill='" +
         hexColor(diffFlameRgb(0, 1)) + "'/><text x='14' y='" + std::to_string(ly) +
         "' fill='#222'>more GPU time after</text>";
    s += "<rect x='150' y='" + std::to_string(ly - 9) + "' width='10' height='10' fill='" +
         hexColor(diffFlameRgb(1, 0)) + "'/><text x='164' y='" + std::to_string(ly) +
         "' fill='#222'>less GPU time after</text>";
    s += "<text x='" + std::to_string(width - 4) + "' y='" + std::to_string(ly) +
         "' fill='#555' text-anchor='end'>" +
         escapeHtml("width: mean of before and after" +
                    std::string(cut ? "; frames below depth " + std::to_string(depth) + " not drawn"
                                    : "")) +
         "</text></svg>";
    pic.svg = std::move(s);
    pic.alt = "Differential flame graph: GPU time by launching stack, " +
              formatDuration(root.beforeNs) + " -> " + formatDuration(root.afterNs) +
              " per step (" + std::to_string(drawn) + " frames)";
    return pic;
}

Picture idleChangePicture(const analysis::DeviceChange& d, bool perStep, int width) {
    Picture pic;
    pic.width = width;
    const int rowH = 22, top = 24, labelW = 220, valueW = 190;
    const size_t rows = d.causes.size() + 2;
    pic.height = top + int(rows) * rowH + 8;
    const double barSpace = double(width - labelW - valueW);
    // The scale: the largest running total (the idle time before, after, or in between).
    int64_t running = d.beforeIdleNs, most = std::max(d.beforeIdleNs, d.afterIdleNs);
    for (const auto& c : d.causes) most = std::max(most, running += c.afterNs - c.beforeNs);
    const double full = double(std::max<int64_t>(1, most));
    const std::string per = perStep ? " a step" : "";
    std::string s = detail::svgOpen(width, pic.height);
    s += "<text x='0' y='15' fill='#222' font-weight='bold'>" +
         escapeHtml(
             "GPU " + std::to_string(d.beforeDevice) +
             (d.afterDevice != d.beforeDevice ? " -> GPU " + std::to_string(d.afterDevice) : "") +
             ": what changed in the idle time" + per) +
         "</text>";
    auto x = [&](int64_t ns) { return labelW + barSpace * double(ns) / full; };
    auto row = [&](size_t i, const std::string& label, int64_t from, int64_t to, const char* fill,
                   const std::string& value) {
        const int y = top + int(i) * rowH;
        const int64_t lo = std::min(from, to), hi = std::max(from, to);
        s += "<text x='0' y='" + std::to_string(y + 15) + "' fill='#222'>" + escapeHtml(label) +
             "</text>";
        s += "<rect x='" + detail::svgNum(x(lo)) + "' y='" + std::to_string(y + 3) + "' width='" +
             detail::svgNum(std::max(x(hi) - x(lo), 1.0)) + "' height='" +
             std::to_string(rowH - 6) + "' fill='" + fill + "'><title>" +
             escapeHtml(label + ": " + value) + "</title></rect>";
        s += "<text x='" + std::to_string(width - 4) + "' y='" + std::to_string(y + 15) +
             "' fill='#222' text-anchor='end'>" + escapeHtml(value) + "</text>";
    };
    row(0, "idle before", 0, d.beforeIdleNs, "#9aa5b1", formatDuration(d.beforeIdleNs));
    running = d.beforeIdleNs;
    for (size_t i = 0; i < d.causes.size(); ++i) {
        const auto& c = d.causes[i];
        const int64_t delta = c.afterNs - c.beforeNs;
        row(i + 1, std::string(analysis::idleCauseName(c.cause)), running, running + delta,
            delta > 0 ? "#d9534f" : "#4c9a6a",
            (delta > 0   ? "+"
             : delta < 0 ? "-"
                         : "") +
                formatDuration(delta < 0 ? -delta : delta) + "  (" + formatDuration(c.beforeNs) +
                " -> " + formatDuration(c.afterNs) + ")");
        running += delta;
    }
    row(rows - 1, "idle after", 0, d.afterIdleNs, "#9aa5b1", formatDuration(d.afterIdleNs));
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "GPU " + std::to_string(d.beforeDevice) + " idle" + per + " " +
              formatDuration(d.beforeIdleNs) + " -> " + formatDuration(d.afterIdleNs) +
              ", by cause";
    return pic;
}

} // namespace stallscope::reports
