// Report formats by extension or name, and the JSON report.
#include "stallscope/analysis/analysis_json.h"
#include "stallscope/base/atomic_file.h"
#include "stallscope/base/utf8.h"
#include "stallscope/reports/annotated_trace.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/report.h"

#include <algorithm>

namespace stallscope::reports {

using base::replaceInvalidUtf8;
using base::writeFileAtomically;

namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

bool formatFromPath(const std::filesystem::path& path, ReportFormat& out) {
    std::string name = path.filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (endsWith(name, ".trace.json") || endsWith(name, ".trace.json.gz") || endsWith(name, ".json.gz")) {
        out = ReportFormat::AnnotatedTrace;
        return true;
    }
    if (endsWith(name, ".html") || endsWith(name, ".htm")) out = ReportFormat::Html;
    else if (endsWith(name, ".md") || endsWith(name, ".markdown")) out = ReportFormat::Markdown;
    else if (endsWith(name, ".json")) out = ReportFormat::Json;
    else if (endsWith(name, ".pdf")) out = ReportFormat::Pdf;
    else return false;
    return true;
}

bool formatFromName(std::string_view name, ReportFormat& out) {
    if (name == "html") out = ReportFormat::Html;
    else if (name == "md" || name == "markdown") out = ReportFormat::Markdown;
    else if (name == "json") out = ReportFormat::Json;
    else if (name == "pdf") out = ReportFormat::Pdf;
    else if (name == "trace") out = ReportFormat::AnnotatedTrace;
    else return false;
    return true;
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

bool writeReport(const std::vector<ReportInput>& inputs, const std::filesystem::path& out, ReportFormat format,
                 const ReportOptions& options, std::string& error) {
    if (inputs.empty()) {
        error = "nothing to report";
        return false;
    }
    switch (format) {
    case ReportFormat::Html: return writeFileAtomically(out, renderHtml(buildReport(inputs, options)), error);
    case ReportFormat::Markdown: return writeFileAtomically(out, renderMarkdown(buildReport(inputs, options)), error);
    case ReportFormat::Json: return writeFileAtomically(out, renderJson(inputs), error);
    case ReportFormat::AnnotatedTrace:
        if (inputs.size() != 1) {
            error = "an annotated trace is written per trace file; this input holds " + std::to_string(inputs.size()) +
                    " traces (pass one of its files)";
            return false;
        }
        return writeAnnotatedTrace(*inputs.front().trace, *inputs.front().analysis, out, error);
    case ReportFormat::Pdf: error = "PDF needs the Qt part of Stallscope (this build has none)"; return false;
    }
    return false;
}

bool writeComparison(const ReportInput& before, const ReportInput& after, const std::filesystem::path& out,
                     ReportFormat format, const ReportOptions& options, std::string& error) {
    switch (format) {
    case ReportFormat::Html: return writeFileAtomically(out, renderHtml(buildComparison(before, after, options)), error);
    case ReportFormat::Markdown:
        return writeFileAtomically(out, renderMarkdown(buildComparison(before, after, options)), error);
    default: error = "a comparison is written as HTML, Markdown or PDF"; return false;
    }
}

} // namespace stallscope::reports
