#pragma once
// Reports: what goes in them (buildReport / buildComparison), the formats, the renderers and
// the regression gate. The PDF renderer needs Qt and lives in app/pdf; the annotated trace
// is in annotated_trace.h.
#include "stallscope/reports/report_document.h"

#include "stallscope/analysis/cross_rank.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/base/result.h"
#include "stallscope/model/trace.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
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
    // What the inputs were analysed with: a comparison replays BEFORE's fixes with them.
    analysis::AnalysisOptions analysis;
};

/// The whole report of one or more traces (the ranks of a folder get a section each after
/// an overview table).
ReportDocument buildReport(const std::vector<ReportInput>& inputs, const ReportOptions& options = {});

/// The ranks section alone, from a cross-rank analysis (`merge` of rank summaries: no traces).
ReportDocument buildRanksReport(const analysis::CrossRankResult& cross, const std::string& source,
                                const ReportOptions& options = {});
/// Before → after: step time, utilisation and each idle cause, and the findings fixed, new
/// and changed (matched by finding id).
ReportDocument buildComparison(const ReportInput& before, const ReportInput& after, const ReportOptions& options = {});

/// A report format: its values are in report_format.h (one per line of report_formats.def).
enum class ReportFormat;

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

/// The report formats as a table: names, extensions, the file-dialog filter and the
/// writers. formatFromPath/formatFromName, writeReport/writeComparison, the CLI's --format
/// and the GUI's export dialog all read it. PDF needs Qt: app/pdf registers its writers
/// (pdf::registerPdfReports); until then writing PDF says so. A new format is its writer's
/// file (with its row) plus one line in report_formats.def.
/// A format's row: defined beside its writer as `extern const ReportFormatInfo
/// kReportFormat<Name>{...}` (extern: the table finds it by name) and registered by one line in
/// report_formats.def.
struct ReportFormatInfo {
    using WriteFn = base::Status (*)(const std::vector<ReportInput>& inputs,
                                     const std::filesystem::path& out,
                                     const ReportOptions& options);
    using CompareFn = base::Status (*)(const ReportInput& before, const ReportInput& after,
                                       const std::filesystem::path& out,
                                       const ReportOptions& options);
    ReportFormat format;
    std::vector<std::string_view> names;      // --format NAME: the first is the canonical one
    std::vector<std::string_view> extensions; // lower case, with the dot: the longest match wins
    std::string_view dialogFilter;            // "HTML report (*.html)"
    WriteFn write = nullptr;                  // null: not in this build (the error says why)
    CompareFn compare = nullptr;              // null: no comparisons in this format
    std::string_view unavailable;             // why write is null
};
/// In the order the export dialog lists them.
const std::vector<ReportFormatInfo>& reportFormats();
const ReportFormatInfo& reportFormatInfo(ReportFormat format);
/// Sets the writers of `format` (PDF from app/pdf); call before writing, from one thread.
void registerReportWriters(ReportFormat format, ReportFormatInfo::WriteFn write,
                           ReportFormatInfo::CompareFn compare);

/// That report written atomically as HTML or Markdown, or the cross-rank JSON; PDF and the
/// annotated trace need the traces and say so.
base::Status writeRanksReport(const analysis::CrossRankResult& cross, const std::string& source,
                              const std::filesystem::path& out, ReportFormat format);

/// Writes the report in `format` atomically through its registered writer (the annotated
/// trace: one input).
base::Status writeReport(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                         ReportFormat format, const ReportOptions& options);
/// A comparison in a format that has one (HTML, Markdown; PDF once app/pdf registered).
base::Status writeComparison(const ReportInput& before, const ReportInput& after,
                             const std::filesystem::path& out, ReportFormat format,
                             const ReportOptions& options);

} // namespace stallscope::reports
