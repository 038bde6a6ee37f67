// The report's efficiency section (docs/analysis.md "Efficiency"): MFU per GPU against its
// datasheet peak, the roofline, busy time by kernel family with the achieved rates, and the
// operators doing the most work by FLOPs, and each GPU's launch statistics.
#include "report_common.h"

#include "stallscope/base/text_format.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/palette.h"
#include "stallscope/reports/svg.h"

#include <cmath>
#include <cstdio>

namespace stallscope::reports {

using namespace analysis;

namespace {

std::string fixed(double v, const char* fmt) {
    if (v < 0) return "–";
    char b[48];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

/// "10^3" as an axis label: 0.01 .. 1000 written out, beyond that the power of ten.
std::string decade(int e) {
    if (e >= -2 && e <= 4) {
        char b[32];
        std::snprintf(b, sizeof b, "%.*f", e < 0 ? -e : 0, std::pow(10.0, e));
        return b;
    }
    return "1e" + std::to_string(e);
}

} // namespace

Picture rooflinePicture(const DeviceEfficiency& d, int width) {
    const Roofline r = rooflineOf(d);
    Picture pic;
    pic.width = width;
    const int top = 28, left = 70, right = 150, bottom = 44, plotH = 300;
    pic.height = top + plotH + bottom;
    const double plotW = double(width - left - right);
    auto X = [&](double intensity) { return left + plotW * r.xAt(intensity); };
    auto Y = [&](double tflops) { return top + plotH - double(plotH) * r.yAt(tflops); };
    std::string s = detail::svgOpen(width, pic.height);
    s +=
        "<text x='0' y='15' fill='#222' font-weight='bold'>" +
        escapeHtml("GPU " + std::to_string(d.device) + " · roofline" +
                   (d.peak ? " of " + d.peak->key + " (" + std::string(precisionName(d.dtype)) + ")"
                           : std::string(" (peaks unknown: no roof)"))) +
        "</text>";
    // Decade grid and labels.
    for (int e = int(r.logXMin); e <= int(r.logXMax); ++e) {
        const double x = X(std::pow(10.0, e));
        s += "<line x1='" + detail::svgNum(x) + "' y1='" + std::to_string(top) + "' x2='" +
             detail::svgNum(x) + "' y2='" + std::to_string(top + plotH) + "' stroke='#e3e3e3'/>";
        s += "<text x='" + detail::svgNum(x) + "' y='" + std::to_string(top + plotH + 14) +
             "' fill='#555' text-anchor='middle'>" + decade(e) + "</text>";
    }
    for (int e = int(r.logYMin); e <= int(r.logYMax); ++e) {
        const double y = Y(std::pow(10.0, e));
        s += "<line x1='" + std::to_string(left) + "' y1='" + detail::svgNum(y) + "' x2='" +
             detail::svgNum(left + plotW) + "' y2='" + detail::svgNum(y) + "' stroke='#e3e3e3'/>";
        s += "<text x='" + std::to_string(left - 6) + "' y='" + detail::svgNum(y + 4) +
             "' fill='#555' text-anchor='end'>" + decade(e) + "</text>";
    }
    s += "<text x='" + detail::svgNum(left + plotW / 2) + "' y='" +
         std::to_string(top + plotH + 34) +
         "' fill='#333' text-anchor='middle'>arithmetic intensity (FLOP per byte moved)</text>";
    s += "<text x='14' y='" + detail::svgNum(top + plotH / 2.0) +
         "' fill='#333' text-anchor='middle' transform='rotate(-90 14 " +
         detail::svgNum(top + plotH / 2.0) + ")'>TFLOP/s</text>";
    // The roof: bandwidth x intensity up to the ridge, the peak after it.
    if (r.ridge > 0) {
        const double x0 = std::pow(10.0, r.logXMin), x1 = std::pow(10.0, r.logXMax);
        const double y0 = r.bandwidthTbps * x0;
        s += "<polyline fill='none' stroke='#444' stroke-width='2' points='" +
             detail::svgNum(X(x0)) + "," + detail::svgNum(Y(y0)) + " " +
             detail::svgNum(X(r.ridge)) + "," + detail::svgNum(Y(r.peakTflops)) + " " +
             detail::svgNum(X(x1)) + "," + detail::svgNum(Y(r.peakTflops)) + "'/>";
        char b[160];
        std::snprintf(b, sizeof b, "roof: peak %.1f TFLOP/s, %.2f TB/s, ridge at %.0f FLOP/B",
                      r.peakTflops, r.bandwidthTbps, r.ridge);
        s += "<text x='" + std::to_string(left + 6) + "' y='" + std::to_string(top + 14) +
             "' fill='#444'>" + escapeHtml(b) + "</text>";
    }
    // The families: area by busy time.
    int64_t most = 1;
    for (const RooflinePoint& p : r.points) most = std::max(most, p.busyNs);
    int legend = 0;
    for (const RooflinePoint& p : r.points) {
        const double rad = 4 + 10 * std::sqrt(double(p.busyNs) / double(most));
        const std::string colour = hexColor(familyRgb(p.family));
        char tip[200];
        std::snprintf(tip, sizeof tip, "%s: %.3g FLOP/B, %.3g TFLOP/s, %s%s", p.family.c_str(),
                      p.intensity, p.tflops, base::formatDuration(p.busyNs).c_str(),
                      p.bound.empty() ? "" : (", " + p.bound + "-bound").c_str());
        s += "<circle cx='" + detail::svgNum(X(p.intensity)) + "' cy='" +
             detail::svgNum(Y(p.tflops)) + "' r='" + detail::svgNum(rad) + "' fill='" + colour +
             "' fill-opacity='0.75' stroke='#222' stroke-width='0.5'><title>" + escapeHtml(tip) +
             "</title></circle>";
        const int ly = top + 12 + 18 * legend++;
        s += "<circle cx='" + std::to_string(width - right + 16) + "' cy='" +
             std::to_string(ly - 4) + "' r='5' fill='" + colour + "'/><text x='" +
             std::to_string(width - right + 26) + "' y='" + std::to_string(ly) + "' fill='#333'>" +
             escapeHtml(p.family) + "</text>";
    }
    if (r.points.empty())
        s += "<text x='" + detail::svgNum(left + plotW / 2) + "' y='" +
             detail::svgNum(top + plotH / 2.0) +
             "' fill='#777' text-anchor='middle'>no kernel family with costed work</text>";
    s += "</svg>";
    pic.svg = std::move(s);
    pic.alt = "Roofline of GPU " + std::to_string(d.device) + ": " +
              std::to_string(r.points.size()) +
              " kernel families by arithmetic intensity and achieved TFLOP/s";
    return pic;
}

namespace detail {

void efficiency(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
                const ReportOptions& o) {
    const Efficiency& e = in.analysis->efficiency;
    if (e.devices.empty() && !e.shapes) return;
    doc.heading(2, prefix + "Efficiency: FLOPs, MFU and the roofline",
                anchor(prefix + "efficiency"));
    if (!e.shapes) {
        doc.paragraph(plain(
            "The operators carry no input shapes (profile with record_shapes=True): their FLOPs, "
            "the model FLOPs utilisation (MFU) and the roofline cannot be computed. Busy time by "
            "kernel family follows."));
    } else {
        doc.paragraph(plain(
            "FLOPs and bytes come from each operator's recorded input shapes and types "
            "(FlopCounterMode's formulas for matrix multiplies, convolutions and attention); MFU "
            "is those model FLOPs per second over the GPU's datasheet peak for the data type that "
            "ran."));
    }
    for (const DeviceEfficiency& d : e.devices) {
        doc.heading(3, prefix + "GPU " + std::to_string(d.device) +
                           (d.gpu.empty() ? "" : " · " + d.gpu));
        Text t;
        if (d.mfu >= 0) {
            char b[320];
            std::snprintf(b, sizeof b,
                          "MFU %.1f%%: %s of matrix multiplies, convolutions and attention in %s, "
                          "against the "
                          "%s peak of %.1f TFLOP/s (%s, its type from the %s).",
                          d.mfu * 100, formatFlops(d.modelFlops).c_str(),
                          base::formatDuration(d.windowNs).c_str(),
                          std::string(precisionName(d.dtype)).c_str(), d.peakTflops,
                          d.peak->key.c_str(), d.dtypeFrom.c_str());
            t.push_back({b, Style::Bold});
            if (d.upperBound())
                t.push_back(
                    {" An upper bound: " + pct(d.upperBoundFlops / d.modelFlops) +
                         " of these FLOPs are convolutions whose strides the trace does not record "
                         "(counted at stride 1; PyTorch 2.1 and later record them).",
                     Style::Note});
        } else if (e.shapes) {
            t.push_back({"MFU unknown: " + d.why + ".", Style::Note});
        }
        if (d.achievedTflops >= 0)
            t.push_back({" The kernels doing that work ran at " +
                             formatFlopRate(d.achievedTflops * 1e12) + ".",
                         Style::Plain});
        if (d.peak) { // the datasheet, named but not linked: a report fetches nothing
            std::string src = d.peak->source;
            for (const char* scheme : {"https://", "http://"})
                if (src.rfind(scheme, 0) == 0) src.erase(0, std::string_view(scheme).size());
            t.push_back({" Peaks from " + src, Style::Muted});
        }
        if (!d.gpuNote.empty()) t.push_back({" (" + d.gpuNote + ")", Style::Muted});
        for (const std::string& n : d.notes) t.push_back({" Note: " + n + ".", Style::Note});
        if (!t.empty()) doc.paragraph(std::move(t));
        if (o.pictures && e.shapes) doc.picture(rooflinePicture(d));
        Table tb;
        tb.header = {"Kernel family", "Kernels", "Time",      "Share of busy",
                     "TFLOP/s",       "TB/s",    "FLOP/byte", "Bound"};
        tb.rightAlign = {false, true, true, true, true, true, true, false};
        int64_t busy = 0;
        for (const FamilyEfficiency& f : d.families) busy += f.busyNs;
        for (const FamilyEfficiency& f : d.families)
            tb.rows.push_back({plain(f.family), plain(base::formatCount(f.kernels)),
                               plain(base::formatDuration(f.busyNs)),
                               plain(pct(busy > 0 ? double(f.busyNs) / double(busy) : 0)),
                               plain(fixed(f.tflops, "%.2f")), plain(fixed(f.tbps, "%.3f")),
                               plain(fixed(f.intensity, "%.1f")),
                               plain(f.bound.empty() ? "–" : f.bound)});
        if (!tb.rows.empty()) doc.table(std::move(tb));
        for (const DeviceMetrics& m : in.analysis->devices)
            if (m.device == d.device) {
                const std::vector<std::string> lines = launchStatsLines(m.launches);
                if (!lines.empty())
                    doc.paragraph(
                        {{"Launches (Holistic Trace Analysis' launch statistics): ", Style::Bold},
                         {lines[0] + "; " + lines[1] + ".", Style::Plain}});
            }
        if (d.steps.size() > 1 && d.mfu >= 0) {
            std::string line = "MFU per step:";
            for (size_t i = 0; i < d.steps.size() && i < 16; ++i)
                line += (i ? ", #" : " #") + std::to_string(d.steps[i].number) + " " +
                        pct(d.steps[i].mfu);
            doc.paragraph(plain(line + "."));
        }
    }
    if (!e.operators.empty()) {
        Table tb;
        tb.header = {"Operator",     "Input shapes",   "Calls", "FLOPs per call",
                     "FLOPs in all", "Bytes per call", "Exact"};
        tb.rightAlign = {false, false, true, true, true, true, false};
        constexpr size_t kRows = 12;
        for (size_t i = 0; i < e.operators.size() && i < kRows; ++i) {
            const OperatorCostRow& r = e.operators[i];
            if (!r.cost.sized || r.cost.flops <= 0) break;
            tb.rows.push_back(
                {{{shortName(r.name), Style::Code}},
                 plain(shortName(r.dims, 60)),
                 plain(base::formatCount(r.calls)),
                 plain(formatFlops(r.cost.flops)),
                 plain(formatFlops(r.cost.flops * double(r.calls))),
                 plain(r.cost.bytes ? base::formatBytes(uint64_t(*r.cost.bytes)) : "–"),
                 plain(r.cost.exact ? "yes" : "upper bound")});
        }
        if (!tb.rows.empty()) {
            doc.paragraph(plain("The operators doing the most work (calls inside another costed "
                                "operator are listed "
                                "but counted once, by the outermost):"));
            doc.table(std::move(tb));
        }
    }
    for (const std::string& n : e.notes) doc.paragraph({{"Note: " + n, Style::Note}});
}

} // namespace detail

} // namespace stallscope::reports
