#pragma once
// Helpers shared by the report builders.
#include "stallscope/base/utf8.h"
#include "stallscope/reports/report.h"

#include <string>
#include <string_view>

namespace stallscope::reports::detail {

std::string pct(double share);                                  // "33.1%"
std::string svgNum(double v);                                   // "12.3": an SVG coordinate
/// An <svg> element's opening tag (size, viewBox, the reports' font) and its white background.
std::string svgOpen(int width, int height, int fontSize = 11);
std::string anchor(std::string_view text);                      // "findings", "rank-0-summary"
std::string shortName(std::string_view name, size_t max = 100); // sanitised, cut with "…"
std::string fileName(const std::string& path);                  // sanitised, bidi closed (closeBidi)
std::string subtitle(const ReportInput& in, const ReportOptions& o);  // path · format · events · generated
/// Prose from the analysis with `backticked` names turned into code spans.
Text prose(std::string_view text, Style style = Style::Plain);
/// Top kernels, CPU operators (by self time), copies and runtime calls.
void statistics(ReportDocument& doc, const ReportInput& in, const std::string& prefix, const ReportOptions& o);
/// Efficiency: MFU per GPU, the roofline, the kernel families and the costliest operators
/// by FLOPs (report_efficiency.cpp).
void efficiency(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
                const ReportOptions& o);
/// Memory (traces with allocator events, snapshots, timelines): the curve, peaks, what was
/// live at the peak, the advice (report_memory.cpp).
void memory(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
            const ReportOptions& o);

} // namespace stallscope::reports::detail
