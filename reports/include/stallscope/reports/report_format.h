#pragma once
// The report formats' values, one per line of report_formats.def. report.h declares the enum
// opaque, so adding a format recompiles only the files that name one.

namespace stallscope::reports {

enum class ReportFormat {
#define STALLSCOPE_REPORT_FORMAT(Name) Name,
#include "stallscope/reports/report_formats.def"
#undef STALLSCOPE_REPORT_FORMAT
};

} // namespace stallscope::reports
