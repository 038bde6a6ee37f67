#pragma once
// stallscope-cli report: HTML, Markdown, JSON, PDF or annotated-trace reports, and
// before → after comparisons.
#include "stallscope/analysis/analysis.h"
#include "stallscope/reports/report.h"
#include "stallscope/workspace/workspace.h"

#include <optional>
#include <ostream>
#include <string>

namespace stallscope::cli {

struct ReportOptions {
    std::string path;                              // the trace (AFTER with --baseline)
    std::string out;                               // -o
    std::optional<reports::ReportFormat> format;   // --format, else from -o's extension
    std::string baseline;                          // --baseline BEFORE
    unsigned threads = 0;
    analysis::AnalysisOptions analysis;
};

/// Opens PATH (a file or a TensorBoard folder; a report's input or its baseline) and gives
/// each rank's representative capture as a report input.
bool loadInputs(const std::string& path, const workspace::LoadOptions& options,
                std::vector<reports::ReportInput>& out, std::ostream& err);

/// 0 written, 1 unreadable input or the report could not be written, 2 usage.
int runReport(const ReportOptions& options, std::ostream& out, std::ostream& err);

} // namespace stallscope::cli
