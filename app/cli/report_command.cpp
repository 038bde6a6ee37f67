#include "report_command.h"

#include "stallscope/importers/memory_budget.h"
#include "stallscope/workspace/workspace.h"

#ifdef STALLSCOPE_HAVE_PDF
#include "pdf_report.h"
#endif

namespace stallscope::cli {

bool loadInputs(const std::string& path, unsigned threads, const analysis::AnalysisOptions& options,
                std::vector<reports::ReportInput>& out, std::ostream& err) {
    workspace::LoadOptions lo;
    lo.memoryBudgetBytes = importers::memoryBudgetFromEnvironment().value_or(0);
    lo.threads = threads;
    lo.analysis = options;
    auto r = workspace::loadAndAnalyse(path, lo);
    if (!r) {
        err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
        return false;
    }
    for (const auto& p : r.value().session.problems)
        err << "stallscope-cli: " << path << ": skipped " << p << "\n";
    const bool several = r.value().traces.size() > 1;
    for (const auto& at : r.value().traces) {
        const model::TraceEntry& e = at.entry;
        reports::ReportInput in;
        in.path = e.path;
        in.rank = e.rank;
        if (several) in.label = (e.rank >= 0 ? "rank " + std::to_string(e.rank) + " · " : "") + e.label;
        in.trace = e.trace;
        in.analysis = at.analysis;
        out.push_back(std::move(in));
    }
    if (out.empty()) {
        err << "stallscope-cli: " << path << ": no traces\n";
        return false;
    }
    return true;
}

int runReport(const ReportOptions& o, std::ostream& out, std::ostream& err) {
    reports::ReportFormat format{};
    if (o.format) format = *o.format;
    else if (!reports::formatFromPath(o.out, format)) {
        err << "stallscope-cli: cannot tell the format from '" << o.out
            << "': use .html, .md, .json, .pdf or .trace.json[.gz], or --format\n";
        return 2;
    }
    reports::ReportOptions ro;
    ro.version = STALLSCOPE_VERSION;
    std::vector<reports::ReportInput> after, before;
    if (!loadInputs(o.path, o.threads, o.analysis, after, err)) return 1;
    if (!o.baseline.empty() && !loadInputs(o.baseline, o.threads, o.analysis, before, err)) return 1;
    std::string error;
    bool ok;
#ifdef STALLSCOPE_HAVE_PDF
    if (!o.baseline.empty()) ok = pdf::writeComparisonFile(before.front(), after.front(), o.out, format, ro, error);
    else ok = pdf::writeReportFile(after, o.out, format, ro, error);
#else
    if (!o.baseline.empty()) ok = reports::writeComparison(before.front(), after.front(), o.out, format, ro, error);
    else ok = reports::writeReport(after, o.out, format, ro, error);
#endif
    if (!ok) {
        err << "stallscope-cli: cannot write " << o.out << ": " << error << "\n";
        return 1;
    }
    out << o.out << "\n";
    return 0;
}

} // namespace stallscope::cli
