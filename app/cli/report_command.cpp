#include "report_command.h"

#include "analyze_command.h"
#include "command.h"

#include "stallscope/workspace/workspace.h"

#ifdef STALLSCOPE_HAVE_PDF
#include "pdf_report.h"
#endif

#include <filesystem>

namespace stallscope::cli {

extern const Command kReportCommand; // defined at the end of this file

bool loadInputs(const std::string& path, const workspace::LoadOptions& options,
                std::vector<reports::ReportInput>& out, std::ostream& err) {
    auto r = workspace::open(path, options);
    if (!r) {
        err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
        return false;
    }
    for (const auto& p : r.value().session.problems)
        err << "stallscope-cli: " << path << ": skipped " << p << "\n";
    // Each rank once, by its latest steady capture (a worker captured several times is one
    // rank: workspace/capture_series.h); the --baseline gate compares those too.
    const workspace::Workspace& ws = r.value();
    for (size_t k = 0; k < ws.series.size(); ++k) {
        const workspace::AnalysedTrace* at = ws.representative(k);
        if (!at) continue;
        reports::ReportInput in;
        in.path = at->entry.path;
        in.rank = at->entry.rank;
        in.label = workspace::representativeLabel(ws, ws.series[k]);
        in.trace = at->entry.trace;
        in.analysis = at->analysis;
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
        std::string known;
        for (const reports::ReportFormatInfo& f : reports::reportFormats())
            known += (known.empty() ? "" : ", ") + std::string(f.extensions.front());
        err << "stallscope-cli: cannot tell the format from '" << o.out << "': use " << known
            << " (or .trace.json.gz), or --format\n";
        return 2;
    }
    // The report never replaces what it reads.
    for (const std::string& in : {o.path, o.baseline}) {
        std::error_code ec;
        if (!in.empty() && std::filesystem::equivalent(in, o.out, ec) && !ec) {
            err << "stallscope-cli: " << o.out << " is the input " << in
                << ": a report never replaces its own trace; choose another -o\n";
            return 2;
        }
    }
    reports::ReportOptions ro;
    ro.version = STALLSCOPE_VERSION;
    ro.analysis = o.analysis;
    // A baseline opens as the trace does: the same call, the same options.
    workspace::LoadOptions lo;
    lo.threads = o.threads;
    lo.analysis = o.analysis;
    lo.detailRanks = workspace::kEveryRank; // the report details every rank
    std::vector<reports::ReportInput> after, before;
    if (!loadInputs(o.path, lo, after, err)) return 1;
    if (!o.baseline.empty() && !loadInputs(o.baseline, lo, before, err)) return 1;
#ifdef STALLSCOPE_HAVE_PDF
    pdf::registerPdfReports();
#endif
    const base::Status written =
        o.baseline.empty()
            ? reports::writeReport(after, o.out, format, ro)
            : reports::writeComparison(before.front(), after.front(), o.out, format, ro);
    if (!written) {
        err << "stallscope-cli: cannot write " << o.out << ": " << written.error().message << "\n";
        return 1;
    }
    out << o.out << "\n";
    return 0;
}

namespace {
int reportMain(Args& args, std::ostream& out, std::ostream& err) {
    const Command& me = kReportCommand;
    ReportOptions o;
    while (args.more()) {
        const std::string a = args.take();
        std::string v;
        if (a == "-o" || a == "--output") {
            if (!args.value(o.out)) return usageError(me, "-o needs a file", err);
        } else if (a == "--format") {
            reports::ReportFormat f;
            if (!args.value(v) || !reports::formatFromName(v, f))
                return usageError(me, "--format needs one of " + reportFormatNames(", "), err);
            o.format = f;
        } else if (a == "--baseline") {
            if (!args.value(o.baseline)) return usageError(me, "--baseline needs a trace", err);
        } else if (a == "--window") {
            if (!args.value(v) || !parseWindow(v, o.analysis.window))
                return usageError(me, "--window needs all, steps, hta or a step number", err);
        } else if (a == "--device") {
            if (!args.intValue(o.analysis.device))
                return usageError(me, "--device needs a device index", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else if (o.path.empty())
            o.path = a;
        else
            return usageError(me, "report takes one PATH (a file or a TensorBoard folder)", err);
    }
    if (o.path.empty()) return usageError(me, "report needs a PATH", err);
    if (o.out.empty()) return usageError(me, "report needs -o OUT", err);
    return runReport(o, out, err);
}
} // namespace

extern const Command kReportCommand{
    "report",
    "  report [--format {report-formats}] [--window ...] [--device N] [--baseline BEFORE]\n"
    "         -o OUT PATH                    an annotated report: OUT.html (self-contained), .md,\n"
    "                                        .json (the analysis JSON), .pdf, or .trace.json[.gz]\n"
    "                                        (the trace plus a \"Stallscope findings\" process);\n"
    "                                        with --baseline, BEFORE -> PATH compared "
    "(.html/.md/.pdf)\n",
    reportMain};

} // namespace stallscope::cli
