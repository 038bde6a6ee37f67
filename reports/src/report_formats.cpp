// Report formats by extension or name, and the JSON report.
#include "stallscope/analysis/analysis_json.h"
#include "stallscope/base/atomic_file.h"
#include "stallscope/base/utf8.h"
#include "stallscope/reports/annotated_trace.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/report.h"
#include "stallscope/reports/report_format.h"

#include <algorithm>

namespace stallscope::reports {

using base::replaceInvalidUtf8;
using base::writeFileAtomically;

namespace {

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

namespace {

base::Status writeHtml(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                       const ReportOptions& options) {
    return writeFileAtomically(out, renderHtml(buildReport(inputs, options)));
}
base::Status compareHtml(const ReportInput& before, const ReportInput& after,
                         const std::filesystem::path& out, const ReportOptions& options) {
    return writeFileAtomically(out, renderHtml(buildComparison(before, after, options)));
}
base::Status writeMarkdown(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                           const ReportOptions& options) {
    return writeFileAtomically(out, renderMarkdown(buildReport(inputs, options)));
}
base::Status compareMarkdown(const ReportInput& before, const ReportInput& after,
                             const std::filesystem::path& out, const ReportOptions& options) {
    return writeFileAtomically(out, renderMarkdown(buildComparison(before, after, options)));
}
base::Status writeJson(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                       const ReportOptions&) {
    return writeFileAtomically(out, renderJson(inputs));
}
base::Status writeTrace(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                        const ReportOptions&) {
    if (inputs.size() != 1)
        return base::Error{base::ErrorKind::InvalidArgument,
                           "an annotated trace is written per trace file; this input holds " +
                               std::to_string(inputs.size()) + " traces (pass one of its files)"};
    return writeAnnotatedTrace(*inputs.front().trace, *inputs.front().analysis, out);
}

} // namespace

// One row per line of report_formats.def, each defined beside its writer.
#define STALLSCOPE_REPORT_FORMAT(Name) extern const ReportFormatInfo kReportFormat##Name;
#include "stallscope/reports/report_formats.def"
#undef STALLSCOPE_REPORT_FORMAT

// The rows of the formats that came before report_formats.def; a new format defines its
// row beside its writer.
const ReportFormatInfo kReportFormatHtml{
    ReportFormat::Html, {"html"}, {".html", ".htm"}, "HTML report (*.html)", writeHtml,
    compareHtml,        {}};
const ReportFormatInfo kReportFormatPdf{
    ReportFormat::Pdf,
    {"pdf"},
    {".pdf"},
    "PDF report (*.pdf)",
    nullptr,
    nullptr,
    "PDF needs the Qt part of Stallscope (this build has none)"};
const ReportFormatInfo kReportFormatMarkdown{ReportFormat::Markdown,
                                             {"md", "markdown"},
                                             {".md", ".markdown"},
                                             "Markdown report (*.md)",
                                             writeMarkdown,
                                             compareMarkdown,
                                             {}};
const ReportFormatInfo kReportFormatJson{
    ReportFormat::Json, {"json"}, {".json"}, "Analysis JSON (*.json)", writeJson, nullptr, {}};
const ReportFormatInfo kReportFormatAnnotatedTrace{
    ReportFormat::AnnotatedTrace,
    {"trace"},
    {".trace.json", ".trace.json.gz", ".json.gz"},
    "Annotated trace for Perfetto (*.trace.json.gz *.trace.json)",
    writeTrace,
    nullptr,
    {}};

namespace {

std::vector<ReportFormatInfo>& table() {
    // A copy of the rows: app/pdf registers the PDF writers into it.
    static std::vector<ReportFormatInfo> formats{
#define STALLSCOPE_REPORT_FORMAT(Name) kReportFormat##Name,
#include "stallscope/reports/report_formats.def"
#undef STALLSCOPE_REPORT_FORMAT
    };
    return formats;
}

} // namespace

const std::vector<ReportFormatInfo>& reportFormats() {
    return table();
}

const ReportFormatInfo& reportFormatInfo(ReportFormat format) {
    for (const ReportFormatInfo& f : table())
        if (f.format == format) return f;
    return table().front(); // every ReportFormat has a row (test_reports checks)
}

void registerReportWriters(ReportFormat format, ReportFormatInfo::WriteFn write,
                           ReportFormatInfo::CompareFn compare) {
    for (ReportFormatInfo& f : table())
        if (f.format == format) f.write = write, f.compare = compare;
}

bool formatFromPath(const std::filesystem::path& path, ReportFormat& out) {
    std::string name = path.filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    size_t best = 0; // the longest extension that matches: .trace.json before .json
    for (const ReportFormatInfo& f : table())
        for (std::string_view ext : f.extensions)
            if (ext.size() > best && endsWith(name, ext)) best = ext.size(), out = f.format;
    return best > 0;
}

bool formatFromName(std::string_view name, ReportFormat& out) {
    for (const ReportFormatInfo& f : table())
        for (std::string_view n : f.names)
            if (n == name) {
                out = f.format;
                return true;
            }
    return false;
}

std::string renderJson(const std::vector<ReportInput>& inputs) {
    base::JsonWriter w;
    w.beginArray();
    for (const ReportInput& in : inputs)
        if (in.trace && in.analysis)  // JSON strings are UTF-8: a path's bad bytes become U+FFFD
            analysis::writeAnalysisJson(w, *in.trace, *in.analysis, replaceInvalidUtf8(in.path), in.rank);
    w.endArray();
    return w.str() + "\n";
}

base::Status writeReport(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                         ReportFormat format, const ReportOptions& options) {
    if (inputs.empty()) return base::Error{base::ErrorKind::InvalidArgument, "nothing to report"};
    const ReportFormatInfo& f = reportFormatInfo(format);
    if (!f.write) return base::Error{base::ErrorKind::Unsupported, std::string(f.unavailable)};
    return f.write(inputs, out, options);
}

base::Status writeComparison(const ReportInput& before, const ReportInput& after,
                             const std::filesystem::path& out, ReportFormat format,
                             const ReportOptions& options) {
    const ReportFormatInfo& f = reportFormatInfo(format);
    if (!f.compare) {
        std::string names;
        for (const ReportFormatInfo& g : table())
            if (g.compare) names += (names.empty() ? "" : ", ") + std::string(g.names.front());
        return base::Error{base::ErrorKind::Unsupported,
                           "a comparison is written as " +
                               (names.empty() ? std::string("nothing in this build") : names)};
    }
    return f.compare(before, after, out, options);
}

base::Status writeRanksReport(const analysis::CrossRankResult& cross, const std::string& source,
                              const std::filesystem::path& out, ReportFormat format) {
    switch (format) {
    case ReportFormat::Html:
        return writeFileAtomically(out, renderHtml(buildRanksReport(cross, source)));
    case ReportFormat::Markdown:
        return writeFileAtomically(out, renderMarkdown(buildRanksReport(cross, source)));
    case ReportFormat::Json: {
        base::JsonWriter w(true);
        analysis::writeCrossRankJson(w, cross);
        return writeFileAtomically(out, w.str() + "\n");
    }
    default:
        return base::Error{base::ErrorKind::Unsupported,
                           "a ranks report from summaries is written as html, md or json (" +
                               std::string(reportFormatInfo(format).names.front()) +
                               " needs the traces: use `report` on them)"};
    }
}

} // namespace stallscope::reports
