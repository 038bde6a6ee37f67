// A report format added as one file (this) plus one line in report_formats.def, by
// tests/extension/scratch_build.py: one line per finding.
#include "stallscope/base/atomic_file.h"
#include "stallscope/reports/report.h"
#include "stallscope/reports/report_format.h"

namespace stallscope::reports {

namespace {

base::Status writeScratch(const std::vector<ReportInput>& inputs, const std::filesystem::path& out,
                          const ReportOptions&) {
    std::string text = "scratch report\n";
    for (const ReportInput& in : inputs)
        if (in.analysis)
            for (const analysis::Finding& f : in.analysis->findings) text += f.id + "\n";
    return base::writeFileAtomically(out, text);
}

} // namespace

extern const ReportFormatInfo kReportFormatScratch{ReportFormat::Scratch,
                                                   {"scratch"},
                                                   {".scratch"},
                                                   "Scratch report (*.scratch)",
                                                   writeScratch,
                                                   nullptr,
                                                   {}};

} // namespace stallscope::reports
