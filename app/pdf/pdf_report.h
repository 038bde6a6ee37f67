#pragma once
// PDF reports and report pictures through Qt's rich text engine (QtGui + QtSvg, no
// widgets): the report document is laid out by QTextDocument on an A4 QPdfWriter, so the
// text stays text (selectable, searchable); the SVG pictures are rendered at 3x.
#include "stallscope/reports/report.h"

#include <QImage>

#include <filesystem>
#include <string>

namespace stallscope::pdf {

/// Creates a QGuiApplication when none exists (offscreen when there is no display), so
/// the command line can lay out text. Call before the functions below.
void ensureGuiApplication();

/// The report as an A4 PDF with page numbers; atomic (temporary file + rename).
base::Status writePdf(const reports::ReportDocument& doc, const std::filesystem::path& out);

/// The rich-text rendering (what the PDF pages show, without page breaks) as one image.
QImage renderReportImage(const reports::ReportDocument& doc, int width);

/// Registers the PDF writers in the report-format table (reports::reportFormats()).
void registerPdfReports();
/// Any report format through reports::writeReport, PDF registered first.
base::Status writeReportFile(const std::vector<reports::ReportInput>& inputs,
                             const std::filesystem::path& out, reports::ReportFormat format,
                             const reports::ReportOptions& options);
/// A comparison as HTML, Markdown or PDF.
base::Status writeComparisonFile(const reports::ReportInput& before,
                                 const reports::ReportInput& after,
                                 const std::filesystem::path& out, reports::ReportFormat format,
                                 const reports::ReportOptions& options);

} // namespace stallscope::pdf
