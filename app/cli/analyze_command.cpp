#include "analyze_command.h"

#include "report_command.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/importers/memory_budget.h"
#include "stallscope/workspace/workspace.h"

#include <cstdio>

namespace stallscope::cli {

using base::JsonWriter;

using namespace analysis;

bool parseFailOn(const std::string& text, std::vector<FailRule>& out, std::string& error) {
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (item.empty()) continue;
        FailRule r;
        const size_t colon = item.find(':');
        const std::string kind = item.substr(0, colon);
        if (!findingKindFromName(kind, r.kind)) {
            error = "unknown finding kind '" + kind + "' in --fail-on";
            return false;
        }
        if (colon != std::string::npos) {
            try {
                size_t used = 0;
                r.minPct = std::stod(item.substr(colon + 1), &used);
                if (used != item.size() - colon - 1 || r.minPct < 0) throw std::invalid_argument("");
            } catch (...) {
                error = "bad percentage in --fail-on rule '" + item + "'";
                return false;
            }
        }
        out.push_back(r);
    }
    if (out.empty()) {
        error = "--fail-on needs KIND[:MIN_PCT],...";
        return false;
    }
    return true;
}

bool parseWindow(const std::string& text, WindowSpec& out) {
    if (text == "steps") out.kind = WindowKind::Steps;
    else if (text == "all") out.kind = WindowKind::All;
    else if (text == "hta") out.kind = WindowKind::Hta;
    else {
        try {
            size_t used = 0;
            const long long n = std::stoll(text, &used);
            if (used != text.size() || n < 0) return false;
            out.kind = WindowKind::Step;
            out.step = n;
        } catch (...) {
            return false;
        }
    }
    return true;
}

int runAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err) {
    int rc = 0;
    bool failed = false;
    JsonWriter w(true);
    if (options.json) w.beginArray();
    workspace::LoadOptions lo;
    lo.memoryBudgetBytes = importers::memoryBudgetFromEnvironment().value_or(0);
    lo.threads = options.threads;
    lo.analysis = options.analysis;
    for (const auto& path : options.paths) {
        auto r = workspace::loadAndAnalyse(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            rc = 1;
            continue;
        }
        for (const auto& p : r.value().session.problems)
            err << "stallscope-cli: " << path << ": skipped " << p << "\n";
        for (const auto& at : r.value().traces) {
            const model::TraceEntry& e = at.entry;
            const AnalysisResult& a = *at.analysis;
            if (options.json) writeAnalysisJson(w, *e.trace, a, e.path, e.rank);
            else writeAnalysisText(out, *e.trace, a, e.path);
            for (const FailRule& rule : options.failOn)
                for (const Finding& f : a.findings)
                    if (f.kind == rule.kind && f.savingShare * 100 >= rule.minPct) {
                        char line[512];
                        std::snprintf(line, sizeof line,
                                      "stallscope-cli: fail-on %s: %s saves %.1f%% of step time (threshold %.1f%%) in %s\n",
                                      std::string(findingKindName(rule.kind)).c_str(), f.id.c_str(), f.savingShare * 100,
                                      rule.minPct, e.path.c_str());
                        err << line;
                        failed = true;
                    }
        }
    }
    if (options.json) {
        w.endArray();
        out << w.str() << "\n";
    }
    if (rc) return rc;
    if (!options.baseline.empty()) {
        // The regression gate: the first trace of the first PATH against the baseline's first.
        std::vector<reports::ReportInput> before, after;
        if (!loadInputs(options.baseline, options.threads, options.analysis, before, err) ||
            !loadInputs(options.paths.front(), options.threads, options.analysis, after, err))
            return 1;
        const reports::RegressionCheck c =
            reports::checkRegression(*before.front().analysis, *after.front().analysis, options.maxRegressionPct);
        char line[256];
        std::snprintf(line, sizeof line, "baseline: step time %+.1f%%, GPU idle share %+.1f points (limit %.1f)\n",
                      c.stepTimeChangePct, c.idleShareChangePts, options.maxRegressionPct);
        err << line;
        if (c.regressed) {
            err << "stallscope-cli: regression: " << c.reason << "\n";
            failed = true;
        }
    }
    return failed ? 3 : 0;
}

} // namespace stallscope::cli
