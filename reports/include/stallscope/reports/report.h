#pragma once
// Reports: what goes in them (buildReport / buildComparison), the formats, the renderers and
// the regression gate. The PDF renderer needs Qt and lives in app/pdf; the annotated trace
// is in annotated_trace.h.
#include "stallscope/reports/report_document.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/model/trace.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace stallscope::reports {

struct ReportInput {
    std::string path;   // as the user gave it
    std::string label;  // "rank 0 · worker0" for the traces of a folder, else empty
    int32_t rank = -1;
    std::shared_ptr<const model::Trace> trace;
    std::shared_ptr<const analysis::AnalysisResult> analysis;
};

struct ReportOptions {
    size_t maxFindings = 20;
    size_t tableRows = 15;
    bool pictures = true;
    std::string generatedAt;  // empty: now, UTC
    std::string version;      // Stallscope version for the subtitle
};

/// The whole report of one or more traces (the ranks of a folder get a section each after
/// an overview table).
ReportDocument buildReport(const std::vector<ReportInput>& inputs, const ReportOptions& options = {});

/// Before → after: step time, utilisation and each idle cause, and the findings fixed, new
/// and changed (matched by finding id).
ReportDocument buildComparison(const ReportInput& before, const ReportInput& after, const ReportOptions& options = {});

/// The regression gate of `analyze --baseline`: step time (mean step, or the window when there
/// are no steps) may grow by at most `maxPct` percent, and the GPU idle share (of the window,
/// averaged over devices) by at most `maxPct` percentage points.
struct RegressionCheck {
    bool regressed = false;
    std::string reason;  // one line when regressed
    double stepTimeChangePct = 0;
    double idleShareChangePts = 0;
};
RegressionCheck checkRegression(const analysis::AnalysisResult& before, const analysis::AnalysisResult& after,
                                double maxPct);

enum class ReportFormat { Html, Markdown, Json, Pdf, AnnotatedTrace };

/// By extension: .html/.htm, .md/.markdown, .json (but .trace.json[.gz] is the annotated
/// trace), .pdf. False when the extension says nothing.
bool formatFromPath(const std::filesystem::path& path, ReportFormat& out);
/// By name: html, md/markdown, json, pdf, trace.
bool formatFromName(std::string_view name, ReportFormat& out);

/// One self-contained HTML file: inline CSS and SVG, no scripts, nothing fetched.
std::string renderHtml(const ReportDocument& doc);
/// GitHub-flavoured Markdown: tables, fenced code, no HTML.
std::string renderMarkdown(const ReportDocument& doc);
/// The subset of HTML that Qt's rich text engine lays out (for the PDF): pictures become
/// <img src="picture:N"> with N the index into `pictures`, at most `maxPictureWidth` wide.
std::string renderRichText(const ReportDocument& doc, std::vector<const Picture*>& pictures, int maxPictureWidth);
/// The analysis JSON (schema stallscope.analysis/1) of every input.
std::string renderJson(const std::vector<ReportInput>& inputs);

/// Writes HTML, Markdown, JSON or the annotated trace (one input) atomically; PDF needs Qt
/// and is written by app/pdf (writeReportFile), which calls this for the other formats.
bool writeReport(const std::vector<ReportInput>& inputs, const std::filesystem::path& out, ReportFormat format,
                 const ReportOptions& options, std::string& error);
/// A comparison as HTML or Markdown (PDF: app/pdf).
bool writeComparison(const ReportInput& before, const ReportInput& after, const std::filesystem::path& out,
                     ReportFormat format, const ReportOptions& options, std::string& error);

} // namespace stallscope::reports
