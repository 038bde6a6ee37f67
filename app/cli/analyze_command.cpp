#include "analyze_command.h"
#include "command.h"

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
    // Everything first: with two or more ranks the cross-rank summary comes before the detail.
    std::vector<workspace::Workspace> loaded;
    for (const auto& path : options.paths) {
        auto r = workspace::loadAndAnalyse(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            rc = 1;
            continue;
        }
        for (const auto& p : r.value().session.problems)
            err << "stallscope-cli: " << path << ": skipped " << p << "\n";
        loaded.push_back(std::move(r.value()));
    }
    std::vector<RankInput> ranks;
    for (const auto& l : loaded)
        for (const auto& at : l.traces)
            ranks.push_back({at.entry.rank >= 0 ? at.entry.rank : int32_t(ranks.size()),
                             at.entry.label, at.entry.trace.get(), at.analysis.get()});
    if (options.ranksOnly || ranks.size() >= 2) {
        const CrossRankResult cr = analyzeRanks(ranks);
        if (options.ranksOnly) {
            if (options.json) {
                JsonWriter rw(true);
                writeCrossRankJson(rw, cr);
                out << rw.str() << "\n";
            } else {
                writeCrossRankText(out, cr);
            }
            return rc;
        }
        if (!options.json) writeCrossRankText(out, cr);
    }
    for (const auto& l : loaded) {
        for (const auto& at : l.traces) {
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

namespace {
int analyzeMain(Args& args, std::ostream& out, std::ostream& err) {
    const Command& me = kAnalyzeCommand;
    AnalyzeOptions o;
    while (args.more()) {
        const std::string a = args.take();
        std::string v;
        if (a == "--json")
            o.json = true;
        else if (a == "--ranks")
            o.ranksOnly = true;
        else if (a == "--window") {
            if (!args.value(v) || !parseWindow(v, o.analysis.window))
                return usageError(me, "--window needs all, steps, hta or a step number", err);
        } else if (a == "--device") {
            if (!args.intValue(o.analysis.device))
                return usageError(me, "--device needs a device index", err);
        } else if (a == "--fail-on") {
            std::string error;
            if (!args.value(v)) return usageError(me, "--fail-on needs KIND[:MIN_PCT],...", err);
            if (!parseFailOn(v, o.failOn, error)) return usageError(me, error, err);
        } else if (a == "--threads") {
            if (!args.unsignedValue(o.threads))
                return usageError(me, "--threads needs a number", err);
        } else if (a == "--baseline") {
            if (!args.value(o.baseline)) return usageError(me, "--baseline needs a trace", err);
        } else if (a == "--max-regression") {
            if (!args.percentValue(o.maxRegressionPct))
                return usageError(me, "--max-regression needs a percentage", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.empty()) return usageError(me, "analyze needs at least one PATH", err);
    return runAnalyze(o, out, err);
}
} // namespace

const Command kAnalyzeCommand{
    "analyze",
    "  analyze [--json] [--ranks] [--window all|steps|hta|STEP] [--device N] [--fail-on "
    "KIND[:MIN_PCT],...]\n"
    "          [--baseline BEFORE [--max-regression PCT]] PATH...\n"
    "                                        why the GPU is idle: utilisation, idle causes, "
    "findings\n"
    "                                        with their fix; --fail-on exits 3 when a listed "
    "finding\n"
    "                                        saves at least MIN_PCT of step time; --baseline exits "
    "3\n"
    "                                        when step time grew more than PCT % or the GPU idle "
    "share\n"
    "                                        more than PCT points against BEFORE (default 5); "
    "with\n"
    "                                        several ranks (a folder of workers, several files) a\n"
    "                                        cross-rank summary comes first, --ranks prints only "
    "it\n",
    analyzeMain};

} // namespace stallscope::cli
