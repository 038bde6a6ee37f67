#include "analyze_command.h"

#include "command.h"
#include "stallscope/base/atomic_file.h"

#include "report_command.h"
#include "series_text.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/analysis/regression.h"
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace stallscope::cli {

extern const Command kMergeCommand;   // defined at the end of this file
extern const Command kAnalyzeCommand; // defined at the end of this file

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

namespace {

/// Atomically (a full disk leaves the old file as it was), never through a link or into a
/// device (base::AtomicFile).
bool writeFile(const std::string& path, const std::string& text, std::ostream& err) {
    std::string error;
    if (!base::writeFileAtomically(path, text, error)) {
        err << "stallscope-cli: cannot write " << path << ": " << error << "\n";
        return false;
    }
    return true;
}

/// `analyze --summary`: one rank summary per trace; to stdout (one trace, no -o), to the file
/// -o names (one trace) or into the folder -o names as RANK.summary.json (several).
int writeSummaries(const std::vector<RankDigest>& ranks, const std::string& output,
                   std::ostream& out, std::ostream& err) {
    if (ranks.size() == 1 && output.empty()) {
        out << workspace::rankSummaryJson(ranks.front());
        return 0;
    }
    if (ranks.size() > 1 && output.empty()) {
        err << "stallscope-cli: " << ranks.size()
            << " traces: --summary needs -o FOLDER for their summaries\n";
        return 2;
    }
    std::error_code ec;
    const bool folder = ranks.size() > 1 || std::filesystem::is_directory(output, ec);
    if (folder) std::filesystem::create_directories(output, ec);
    // Two traces claiming one rank would write one file twice: refused before anything is written.
    std::map<int64_t, size_t> perRank;
    for (const RankDigest& r : ranks) ++perRank[r.rank];
    for (const auto& [rank, n] : perRank)
        if (folder && n > 1) {
            err << "stallscope-cli: " << n << " traces claim rank " << rank
                << ": their summaries would overwrite each other in " << output
                << "; nothing written (summarise them apart)\n";
            return 1;
        }
    for (const RankDigest& r : ranks) {
        const std::string path = folder ? (std::filesystem::path(output) /
                                           ("rank" + std::to_string(r.rank) + ".summary.json"))
                                              .string()
                                        : output;
        if (!writeFile(path, workspace::rankSummaryJson(r), err)) return 1;
    }
    err << "stallscope-cli: " << ranks.size()
        << (ranks.size() == 1 ? " rank summary" : " rank summaries") << " written to " << output
        << "\n";
    return 0;
}

void writeCrossRank(const CrossRankResult& cr, bool json, std::ostream& out) {
    if (json) {
        JsonWriter rw(true);
        writeCrossRankJson(rw, cr);
        out << rw.str() << "\n";
    } else {
        writeCrossRankText(out, cr);
    }
}

} // namespace

int runMerge(const MergeOptions& options, std::ostream& out, std::ostream& err) {
    std::vector<RankDigest> digests;
    for (const std::string& p : options.paths) {
        std::vector<std::string> files = workspace::rankSummaryFiles(p);
        if (files.empty()) files.push_back(p); // read it to say why it is not one
        for (const std::string& f : files) {
            auto d = workspace::readRankSummaries(f);
            if (!d) {
                err << "stallscope-cli: " << d.error().message << "\n";
                return 1;
            }
            for (RankDigest& one : d.value()) digests.push_back(std::move(one));
        }
    }
    if (!options.summaries.empty()) {
        // Every rank's summary in one file: the GUI opens it, `merge` reads it back.
        if (!writeFile(options.summaries, workspace::rankSummariesJson(digests), err)) return 1;
        err << "stallscope-cli: " << digests.size() << " rank summaries merged into "
            << options.summaries << "\n";
    }
    const CrossRankResult cr = analyzeRanks(std::move(digests));
    if (!options.report.empty()) {
        reports::ReportFormat format;
        if (!reports::formatFromPath(options.report, format)) {
            err << "stallscope-cli: " << options.report
                << ": say the report's format by its extension (.html, .md, .json)\n";
            return 2;
        }
        const base::Status st = reports::writeRanksReport(
            cr, "merged from " + std::to_string(cr.ranks.size()) + " rank summaries",
            options.report, format);
        if (!st) {
            err << "stallscope-cli: " << options.report << ": " << st.error().message << "\n";
            return st.error().kind == base::ErrorKind::Unsupported ? 2 : 1;
        }
        err << "stallscope-cli: wrote " << options.report << "\n";
    }
    if (options.json || options.report.empty()) writeCrossRank(cr, options.json, out);
    return 0;
}

namespace {

/// --ranks or --summary of a folder: rank by rank, never holding all the traces (hundreds of
/// ranks of GBs each fit this way).
int analyzeRankFolder(const AnalyzeOptions& options, const workspace::LoadOptions& lo,
                      std::ostream& out, std::ostream& err) {
    auto set = workspace::digestRanks(options.paths.front(), lo);
    if (!set) {
        err << "stallscope-cli: " << set.error().message << "\n";
        return 1;
    }
    for (const auto& p : set.value().problems) err << "stallscope-cli: skipped " << p << "\n";
    if (options.summary) {
        if (set.value().fromSummaries) {
            err << "stallscope-cli: " << options.paths.front()
                << " holds rank summaries already: `merge` them\n";
            return 2;
        }
        return writeSummaries(set.value().digests, options.output, out, err);
    }
    writeCrossRank(analyzeRanks(std::move(set.value().digests)), options.json, out);
    return 0;
}

/// Every PATH opened, what each skipped or noted said; rc 1 when one could not be opened.
std::vector<workspace::Workspace> openPaths(const AnalyzeOptions& options,
                                            const workspace::LoadOptions& lo, std::ostream& err,
                                            int& rc) {
    std::vector<workspace::Workspace> loaded;
    for (const auto& path : options.paths) {
        auto r = workspace::open(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            rc = 1;
            continue;
        }
        for (const auto& p : r.value().session.problems)
            err << "stallscope-cli: " << path << ": skipped " << p << "\n";
        for (const auto& n : r.value().session.notes)
            err << "stallscope-cli: " << path << ": " << n << "\n";
        loaded.push_back(std::move(r.value()));
    }
    return loaded;
}

/// Each rank once: a rank captured several times (a worker's captures in a TensorBoard folder)
/// is summarised and detailed by its latest steady capture (capture_series.h); the captures
/// section lists them all.
struct Detail {
    std::vector<workspace::RankSeries> series;
    std::vector<const workspace::AnalysedTrace*> traces; // per rank, its summarised capture
    std::vector<const workspace::Workspace*> of;
};
Detail detailOf(const std::vector<workspace::Workspace>& loaded) {
    Detail d;
    for (const auto& l : loaded)
        for (size_t k = 0; k < l.series.size(); ++k)
            if (const workspace::AnalysedTrace* at = l.representative(k)) {
                d.series.push_back(l.series[k]);
                d.traces.push_back(at);
                d.of.push_back(&l);
            }
    return d;
}

/// --summary of what was opened: each rank's digest.
int summariseOpened(const AnalyzeOptions& options, const std::vector<workspace::Workspace>& loaded,
                    std::ostream& out, std::ostream& err) {
    std::vector<RankInput> ranks;
    for (const auto& l : loaded)
        for (RankInput& r : workspace::rankInputs(l)) ranks.push_back(std::move(r));
    // --rank when the trace does not say (no distributedInfo): the task's index.
    if (options.rank >= 0 && ranks.size() == 1 &&
        !ranks.front().trace->metadata().distributed.present)
        ranks.front().rank = options.rank;
    std::vector<RankDigest> digests;
    for (const RankInput& r : ranks) digests.push_back(digestRank(r));
    return writeSummaries(digests, options.output, out, err);
}

/// The gates on one rank's detail: an input cut short, and --fail-on. True when one fails.
bool detailGatesFail(const AnalyzeOptions& options, const workspace::AnalysedTrace& at,
                     std::ostream& err) {
    bool failed = false;
    const model::TraceEntry& e = at.entry;
    // An input cut short (a truncated or damaged file): what follows the cut is missing, so
    // "no findings" proves nothing. Said always; a gate fails unless told otherwise.
    const model::Diagnostics& dg = e.trace->diagnostics();
    const uint64_t cut = dg.count(model::DiagnosticKind::TruncatedInput) +
                         dg.count(model::DiagnosticKind::CorruptCompression);
    if (cut) {
        err << "stallscope-cli: " << e.path
            << " was cut short (the input ends early or its compression is damaged): the "
               "analysis covers only what was read";
        const bool gated = !options.failOn.empty() || !options.baseline.empty();
        if (gated && !options.allowTruncated) {
            err << "; the gate fails (--allow-truncated accepts it)";
            failed = true;
        }
        err << "\n";
    }
    for (const FailRule& rule : options.failOn)
        for (const Finding& f : at.analysis->findings)
            if (f.kind == rule.kind && f.savingShare * 100 >= rule.minPct) {
                char line[512];
                std::snprintf(line, sizeof line,
                              "stallscope-cli: fail-on %s: %s saves %.1f%% of step time "
                              "(threshold %.1f%%) in %s\n",
                              std::string(findingKindName(rule.kind)).c_str(), f.id.c_str(),
                              f.savingShare * 100, rule.minPct, e.path.c_str());
                err << line;
                failed = true;
            }
    return failed;
}

/// The regression gate: the first rank of the first PATH (as detailed) against the
/// baseline's first, the baseline opened as PATH was. 1: the baseline could not be opened;
/// 3: regressed; 0: within the limit.
int baselineGate(const AnalyzeOptions& options, const workspace::LoadOptions& lo,
                 const workspace::AnalysedTrace& after, std::ostream& err) {
    std::vector<reports::ReportInput> before;
    if (!loadInputs(options.baseline, lo, before, err)) return 1;
    const analysis::RegressionCheck c = analysis::checkRegression(
        *before.front().analysis, *after.analysis, options.maxRegressionPct);
    char line[256];
    std::snprintf(line, sizeof line,
                  "baseline: step time %+.1f%%, GPU idle share %+.1f points (limit %.1f)\n",
                  c.stepTimeChangePct, c.idleShareChangePts, options.maxRegressionPct);
    err << line;
    if (!c.regressed) return 0;
    err << "stallscope-cli: regression: " << c.reason << "\n";
    return 3;
}

} // namespace

int runAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err) {
    workspace::LoadOptions lo;
    lo.threads = options.threads;
    lo.analysis = options.analysis;
    lo.detailRanks = workspace::kEveryRank; // every rank's detail is printed
    std::error_code ec;
    if ((options.ranksOnly || options.summary) && options.paths.size() == 1 &&
        std::filesystem::is_directory(options.paths.front(), ec))
        return analyzeRankFolder(options, lo, out, err);
    // Everything first: with two or more ranks the cross-rank summary comes before the detail.
    int rc = 0;
    const std::vector<workspace::Workspace> loaded = openPaths(options, lo, err, rc);
    const Detail detail = detailOf(loaded);
    const bool captures = workspace::hasSeries(detail.series);
    if (options.summary) return rc ? rc : summariseOpened(options, loaded, out, err);
    JsonWriter w(true);
    const bool severalRanks = detail.traces.size() >= 2;
    if (!options.json && captures && !options.ranksOnly) writeCaptureSeriesText(out, detail.series);
    if (options.ranksOnly || severalRanks) {
        const CrossRankResult cr = workspace::crossRank(loaded);
        if (options.ranksOnly) {
            writeCrossRank(cr, options.json, out);
            return rc;
        }
        if (!options.json)
            writeCrossRankText(out, cr);
        else {
            // Several ranks: {"ranks": the cross-rank analysis, "traces": [each analysis]}.
            w.beginObject();
            w.key("ranks");
            writeCrossRankJson(w, cr);
        }
    }
    // Several captures of a rank: {"captures": each rank's series, ["ranks": ...,] "traces":
    // [each rank's summarised capture's analysis]}.
    const bool object = severalRanks || captures;
    if (options.json && object) {
        if (!severalRanks) w.beginObject();
        if (captures) {
            w.key("captures");
            workspace::writeRankSeriesJson(w, detail.series);
        }
        w.key("traces");
    }
    if (options.json) w.beginArray();
    bool failed = false;
    for (size_t k = 0; k < detail.traces.size(); ++k) {
        const workspace::AnalysedTrace& at = *detail.traces[k];
        const model::TraceEntry& e = at.entry;
        if (options.json)
            writeAnalysisJson(w, *e.trace, *at.analysis, e.path, e.rank);
        else
            writeAnalysisText(out, *e.trace, *at.analysis,
                              detail.of[k]->traces.size() > 1
                                  ? e.path + " · rank " + std::to_string(e.rank)
                                  : e.path);
        failed |= detailGatesFail(options, at, err);
    }
    if (options.json) {
        w.endArray();
        if (object) w.endObject();
        out << w.str() << "\n";
    }
    if (rc) return rc;
    if (!options.baseline.empty()) {
        if (detail.traces.empty()) return 1;
        const int gate = baselineGate(options, lo, *detail.traces.front(), err);
        if (gate == 1) return 1;
        failed |= gate == 3;
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
        else if (a == "--summary")
            o.summary = true;
        else if (a == "-o" || a == "--output") {
            if (!args.value(o.output)) return usageError(me, a + " needs a path", err);
        } else if (a == "--rank") {
            if (!args.intValue(o.rank) || o.rank < 0)
                return usageError(me, "--rank needs a rank number", err);
        } else if (a == "--window") {
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
            // A bound, not the machine's cores: a thread each is a stack each (100,000 of
            // them cannot be started).
            if (!args.unsignedValue(o.threads, kMaxThreads))
                return usageError(me, "--threads needs a number from 0 (one per core) to 1024",
                                  err);
        } else if (a == "--baseline") {
            if (!args.value(o.baseline)) return usageError(me, "--baseline needs a trace", err);
        } else if (a == "--allow-truncated") {
            o.allowTruncated = true;
        } else if (a == "--max-regression") {
            if (!args.percentValue(o.maxRegressionPct))
                return usageError(me, "--max-regression needs a percentage", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.empty()) return usageError(me, "analyze needs at least one PATH", err);
    if (!o.output.empty() && !o.summary) return usageError(me, "-o goes with --summary", err);
    return runAnalyze(o, out, err);
}

int mergeMain(Args& args, std::ostream& out, std::ostream& err) {
    const Command& me = kMergeCommand;
    MergeOptions o;
    while (args.more()) {
        const std::string a = args.take();
        if (a == "--json")
            o.json = true;
        else if (a == "-o" || a == "--report") {
            if (!args.value(o.report)) return usageError(me, a + " needs a report path", err);
        } else if (a == "--summaries") {
            if (!args.value(o.summaries)) return usageError(me, "--summaries needs a file", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.empty()) return usageError(me, "merge needs rank summaries", err);
    return runMerge(o, out, err);
}
} // namespace

extern const Command kMergeCommand{
    "merge",
    "  merge [--json] [-o REPORT] [--summaries OUT] SUMMARY...|FOLDER\n"
    "                                        the cross-rank analysis of rank summaries written "
    "by\n"
    "                                        `analyze --summary` (one per rank, e.g. a Slurm "
    "array\n"
    "                                        task each): the same figures as analysing all the "
    "ranks'\n"
    "                                        traces in one process; -o writes a ranks report,\n"
    "                                        --summaries every rank's summary in one file (the "
    "GUI\n"
    "                                        opens it and loads a rank's trace on demand)\n",
    mergeMain};

extern const Command kAnalyzeCommand{
    "analyze",
    "  analyze [--json] [--ranks] [--window all|steps|hta|STEP] [--device N] [--fail-on "
    "KIND[:MIN_PCT],...]\n"
    "          [--baseline BEFORE [--max-regression PCT]] [--allow-truncated] PATH...\n"
    "                                        why the GPU is idle: utilisation, idle causes, "
    "findings\n"
    "                                        with their fix; --fail-on exits 3 when a listed "
    "finding\n"
    "                                        saves at least MIN_PCT of step time; --baseline exits "
    "3\n"
    "                                        when step time grew more than PCT % or the GPU idle "
    "share\n"
    "                                        more than PCT points against BEFORE (default 5); "
    "an\n"
    "                                        input cut short fails these gates unless\n"
    "                                        --allow-truncated; "
    "with\n"
    "                                        several ranks (a folder of workers, several files) a\n"
    "                                        cross-rank summary comes first, --ranks prints only "
    "it;\n"
    "                                        --summary [-o FILE|FOLDER] [--rank N] writes each "
    "trace's\n"
    "                                        rank summary for `merge` instead\n",
    analyzeMain};

} // namespace stallscope::cli
