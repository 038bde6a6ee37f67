// stallscope-cli diff BEFORE AFTER: two runs of one program compared (analysis/run_diff.h):
// step time against its noise, idle by cause, findings resolved / new / persisting, what
// BEFORE's replay predicted for the fixes AFTER applied, and the operators and kernels
// aligned; rank by rank for runs of several ranks; memory recordings as `memory --compare`.
#include "diff_command.h"

#include "command.h"
#include "memory_compare.h"

#include "stallscope/analysis/memory.h"
#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/base/json_writer.h"
#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/workspace/workspace.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <map>

namespace stallscope::cli {

extern const Command kDiffCommand; // defined at the end of this file

namespace {

using namespace analysis;
using base::formatDuration;
using base::JsonWriter;

struct DiffCliOptions {
    bool json = false;
    unsigned top = 15;
    bool topGiven = false; // else memory recordings list memory --compare's 10
    unsigned threads = 0;
    double maxRegressionPct = -1; // < 0: no gate
    AnalysisOptions analysis;
    std::vector<std::string> paths;
};

std::string ns(double v) {
    return formatDuration(int64_t(std::llround(v)));
}

std::string signedNs(double v) {
    return (v > 0 ? "+" : v < 0 ? "-" : "") + ns(std::abs(v));
}

std::string pctText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v);
    return buf;
}

std::string callsText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f" : "%.1f", v);
    return buf;
}

std::string stepsText(size_t n) {
    return std::to_string(n) + (n == 1 ? " step" : " steps");
}

const char* noiseVerdict(const StepTimeChange& s) {
    if (s.noiseNs < 0) return "spread unknown (a run has fewer than 2 steps)";
    return s.beyondNoise() ? "beyond the step-to-step noise" : "within the step-to-step noise";
}

// ---------------------------------------------------------------- text

void writeStep(std::ostream& o, const RunDiff& d) {
    const StepTimeChange& s = d.step;
    const char* what = s.beforeSteps && s.afterSteps ? "Step time (mean)" : "Window";
    o << what << ": " << formatDuration(s.beforeNs);
    if (s.beforeSteps >= 2) o << " ±" << ns(s.beforeStddevNs);
    o << " (" << stepsText(s.beforeSteps) << ") -> " << formatDuration(s.afterNs);
    if (s.afterSteps >= 2) o << " ±" << ns(s.afterStddevNs);
    o << " (" << stepsText(s.afterSteps) << ")   " << pctText(s.changePct) << ", "
      << noiseVerdict(s);
    if (s.noiseNs >= 0) o << " (±" << ns(s.noiseNs) << ")";
    o << "\n";
}

void writePredictions(std::ostream& o, const RunDiff& d) {
    if (d.predictions.empty()) return;
    o << "\nBEFORE's replay of the fixes for the findings AFTER no longer has (or has halved), "
         "beside AFTER's measured step:\n";
    for (const Prediction& p : d.predictions) {
        std::string ids, fixes;
        for (const auto& id : p.findingIds) ids += (ids.empty() ? "" : " + ") + id;
        for (size_t f = 0; f < size_t(Fix::Count); ++f)
            if (p.fixes & fixBit(Fix(f)))
                fixes += (fixes.empty() ? "" : ", ") + std::string(fixName(Fix(f)));
        o << "  " << ids << " (" << fixes << "): " << formatDuration(p.beforeNs) << " -> predicted "
          << formatDuration(p.predictedNs) << ", measured " << formatDuration(p.afterNs) << "\n";
    }
}

void writeDevices(std::ostream& o, const RunDiff& d) {
    const char* per = d.perStep ? "per step" : "per window";
    for (const DeviceChange& g : d.devices) {
        o << "\nGPU " << g.beforeDevice;
        if (g.afterDevice != g.beforeDevice) o << " -> GPU " << g.afterDevice;
        o << ": utilisation " << base::formatPercent(g.beforeUtilization) << " -> "
          << base::formatPercent(g.afterUtilization) << "; idle " << per << " "
          << formatDuration(g.beforeIdleNs) << " -> " << formatDuration(g.afterIdleNs) << " ("
          << signedNs(double(g.afterIdleNs - g.beforeIdleNs)) << ")\n";
        o << "  what changed in the idle time, " << per << ":\n";
        for (const CauseChange& c : g.causes)
            o << "    " << std::left << std::setw(22) << idleCauseName(c.cause) << std::right
              << std::setw(14) << formatDuration(c.beforeNs) << " -> " << std::setw(14)
              << formatDuration(c.afterNs) << std::setw(16)
              << signedNs(double(c.afterNs - c.beforeNs)) << "\n";
    }
}

void writeFindings(std::ostream& o, const RunDiff& d) {
    size_t n[3] = {0, 0, 0};
    for (const auto& f : d.findings) ++n[size_t(f.status)];
    o << "\nFindings: " << n[0] << " resolved, " << n[1] << " new, " << n[2] << " persisting\n";
    for (const auto& f : d.findings) {
        o << "  " << std::left << std::setw(11) << findingStatusName(f.status) << std::right
          << std::left << std::setw(28) << f.id << std::right << " " << f.title;
        if (f.status == FindingStatus::Resolved)
            o << " (BEFORE's replay: saves " << formatDuration(f.beforeSavingNs) << ")";
        else if (f.status == FindingStatus::New)
            o << " (saves " << formatDuration(f.afterSavingNs) << ")";
        else
            o << " (saves " << formatDuration(f.beforeSavingNs) << " -> "
              << formatDuration(f.afterSavingNs) << ")";
        o << "\n";
    }
}

void writeRows(std::ostream& o, const std::vector<AlignedRow>& rows, bool kernels, const RunDiff& d,
               size_t top) {
    size_t n[5] = {0, 0, 0, 0, 0};
    for (const auto& r : rows) ++n[size_t(r.change)];
    o << "\n"
      << (kernels ? "Kernels" : "Operators") << " (" << (d.perStep ? "per step" : "per window")
      << "; "
      << (kernels ? "matched by name and launching operator, else by family"
                  : "matched by name, input shapes and dtypes")
      << "): " << n[0] << " added, " << n[1] << " removed, " << n[2] << " faster, " << n[3]
      << " slower, " << n[4] << " about the same\n";
    o << "  " << std::left << std::setw(8) << "change" << std::right << std::setw(13) << "calls"
      << std::setw(26) << (kernels ? "GPU time" : "time") << std::setw(26) << "per call"
      << std::setw(13) << "change"
      << "  name\n";
    for (size_t i = 0; i < rows.size() && i < top; ++i) {
        const AlignedRow& r = rows[i];
        const bool gpu = r.gpuTimed;
        const double pb = r.before.perCallNs(gpu), pa = r.after.perCallNs(gpu);
        std::string calls = callsText(r.before.perStep(int64_t(r.before.calls))) + " -> " +
                            callsText(r.after.perStep(int64_t(r.after.calls)));
        std::string time = ns(r.compared(r.before)) + " -> " + ns(r.compared(r.after));
        std::string per = ns(pb) + " -> " + ns(pa);
        std::string name = r.name;
        if (!kernels && !r.shapes.empty()) name += " " + r.shapes;
        if (!kernels && gpu) name += " [GPU]";
        if (kernels) name = (r.op.empty() ? std::string("(no operator)") : r.op) + " > " + name;
        if (r.byFamily) {
            std::string b, a;
            for (const auto& k : r.before.names) b += (b.empty() ? "" : ", ") + k;
            for (const auto& k : r.after.names) a += (a.empty() ? "" : ", ") + k;
            name += "  {" + base::truncateUtf8(b, 60) + " -> " + base::truncateUtf8(a, 60) + "}";
        }
        o << "  " << std::left << std::setw(8) << rowChangeName(r.change) << std::right
          << std::setw(13) << calls << std::setw(26) << time << std::setw(26) << per
          << std::setw(13) << signedNs(r.deltaNs()) << "  " << base::truncateUtf8(name, 160)
          << "\n";
    }
    if (rows.size() > top)
        o << "  ... " << rows.size() - top << " more (--top N, or --json for all)\n";
}

void writeRanks(std::ostream& o, const CrossRankResult& b, const CrossRankResult& a) {
    o << "\nRanks (window per rank and the time it waited for the last rank at collectives):\n";
    o << "  rank" << std::setw(32) << "window" << std::setw(32) << "waiting\n";
    for (const RankSummary& rb : b.ranks)
        for (const RankSummary& ra : a.ranks)
            if (ra.rank == rb.rank)
                o << "  " << std::setw(4) << rb.rank << std::setw(32)
                  << (formatDuration(rb.windowNs) + " -> " + formatDuration(ra.windowNs))
                  << std::setw(31)
                  << (formatDuration(rb.waitNs) + " -> " + formatDuration(ra.waitNs)) << "\n";
}

// ---------------------------------------------------------------- JSON

void side(JsonWriter& w, const model::Trace& t, const RowSide& s) {
    w.beginObject();
    w.key("calls").value(s.calls);
    w.key("total_ns").value(s.totalNs);
    w.key("self_ns").value(s.selfNs);
    w.key("gpu_ns").value(s.gpuNs);
    w.key("steps").value(s.units, 0);
    w.key("example_ts_ns");
    if (s.example.valid())
        w.value(t.slices().start[s.example.index()]);
    else
        w.null();
    if (!s.names.empty()) {
        w.key("kernels").beginArray();
        for (const auto& k : s.names) w.value(k);
        w.endArray();
    }
    w.endObject();
}

void rowsJson(JsonWriter& w, const model::Trace& tb, const model::Trace& ta,
              const std::vector<AlignedRow>& rows, bool kernels) {
    w.beginArray();
    for (const AlignedRow& r : rows) {
        w.beginObject();
        w.key("name").value(r.name);
        if (kernels) {
            w.key("operator").value(r.op);
            w.key("family").value(kernelFamilyName(r.family));
            w.key("by_family").value(r.byFamily);
        } else {
            w.key("shapes").value(r.shapes);
            w.key("dtypes").value(r.dtypes);
            w.key("compared_by").value(r.gpuTimed ? "gpu" : "host");
        }
        w.key("change").value(rowChangeName(r.change));
        w.key("delta_ns_per_unit").value(r.deltaNs(), 1);
        w.key("before");
        side(w, tb, r.before);
        w.key("after");
        side(w, ta, r.after);
        w.endObject();
    }
    w.endArray();
}

void runJson(JsonWriter& w, const std::string& path, const AnalysisResult& r) {
    w.beginObject();
    w.key("path").value(path);
    w.key("window_start_ns").value(r.window.startNs);
    w.key("window_end_ns").value(r.window.endNs);
    w.key("steps").value(uint64_t(r.stepTimes.count));
    w.key("devices").beginArray();
    for (const auto& d : r.devices) w.value(d.device);
    w.endArray();
    w.endObject();
}

} // namespace

void writeDiffJson(JsonWriter& w, const std::string& pb, const model::Trace& tb,
                   const AnalysisResult& b, const std::string& pa, const model::Trace& ta,
                   const AnalysisResult& a, const RunDiff& d, const CrossRankResult* rb,
                   const CrossRankResult* ra) {
    w.beginObject();
    w.key("schema").value("stallscope.diff/1");
    w.key("before");
    runJson(w, pb, b);
    w.key("after");
    runJson(w, pa, a);
    w.key("per").value(d.perStep ? "step" : "window");
    const StepTimeChange& s = d.step;
    w.key("step_time").beginObject();
    w.key("before_ns").value(s.beforeNs);
    w.key("after_ns").value(s.afterNs);
    w.key("before_stddev_ns").value(s.beforeStddevNs, 1);
    w.key("after_stddev_ns").value(s.afterStddevNs, 1);
    w.key("change_pct").value(s.changePct, 3);
    w.key("noise_ns");
    if (s.noiseNs >= 0)
        w.value(s.noiseNs, 1);
    else
        w.null();
    w.key("beyond_noise").value(s.beyondNoise());
    w.endObject();
    w.key("devices").beginArray();
    for (const DeviceChange& g : d.devices) {
        w.beginObject();
        w.key("before_device").value(g.beforeDevice);
        w.key("after_device").value(g.afterDevice);
        w.key("before_utilization").value(g.beforeUtilization, 4);
        w.key("after_utilization").value(g.afterUtilization, 4);
        w.key("before_idle_ns").value(g.beforeIdleNs);
        w.key("after_idle_ns").value(g.afterIdleNs);
        w.key("idle_causes").beginArray();
        for (const CauseChange& c : g.causes) {
            w.beginObject();
            w.key("cause").value(idleCauseName(c.cause));
            w.key("before_ns").value(c.beforeNs);
            w.key("after_ns").value(c.afterNs);
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endArray();
    w.key("findings").beginArray();
    for (const FindingChange& f : d.findings) {
        w.beginObject();
        w.key("id").value(f.id);
        w.key("status").value(findingStatusName(f.status));
        w.key("title").value(f.title);
        w.key("before_saving_ns").value(f.beforeSavingNs);
        w.key("after_saving_ns").value(f.afterSavingNs);
        w.endObject();
    }
    w.endArray();
    w.key("predictions").beginArray();
    for (const Prediction& p : d.predictions) {
        w.beginObject();
        w.key("findings").beginArray();
        for (const auto& id : p.findingIds) w.value(id);
        w.endArray();
        w.key("fixes").beginArray();
        for (size_t f = 0; f < size_t(Fix::Count); ++f)
            if (p.fixes & fixBit(Fix(f))) w.value(fixName(Fix(f)));
        w.endArray();
        w.key("device").value(p.device);
        w.key("before_ns").value(p.beforeNs);
        w.key("predicted_ns").value(p.predictedNs);
        w.key("after_ns").value(p.afterNs);
        w.endObject();
    }
    w.endArray();
    w.key("operators");
    rowsJson(w, tb, ta, d.operators, false);
    w.key("kernels");
    rowsJson(w, tb, ta, d.kernels, true);
    if (rb && ra) {
        w.key("ranks").beginArray();
        for (const RankSummary& x : rb->ranks)
            for (const RankSummary& y : ra->ranks)
                if (x.rank == y.rank) {
                    w.beginObject();
                    w.key("rank").value(x.rank);
                    w.key("before_window_ns").value(x.windowNs);
                    w.key("after_window_ns").value(y.windowNs);
                    w.key("before_wait_ns").value(x.waitNs);
                    w.key("after_wait_ns").value(y.waitNs);
                    w.endObject();
                }
        w.endArray();
    }
    w.key("notes").beginArray();
    for (const auto& n : d.notes) w.value(n);
    w.endArray();
    w.endObject();
}

namespace {

void writeJson(std::ostream& o, const std::string& pb, const model::Trace& tb,
               const AnalysisResult& b, const std::string& pa, const model::Trace& ta,
               const AnalysisResult& a, const RunDiff& d, const CrossRankResult* rb,
               const CrossRankResult* ra) {
    JsonWriter w(true);
    writeDiffJson(w, pb, tb, b, pa, ta, a, d, rb, ra);
    o << w.str() << "\n";
}

bool memoryOnly(const model::Trace& t) {
    return t.slices().size() == 0 && !t.memorySamples().empty();
}

int runDiff(const DiffCliOptions& o, std::ostream& out, std::ostream& err) {
    workspace::LoadOptions lo;
    lo.threads = o.threads;
    lo.analysis = o.analysis;
    lo.detailRanks = workspace::kEveryRank;
    std::vector<workspace::Workspace> ws;
    for (const auto& path : o.paths) {
        auto r = workspace::open(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            return 1;
        }
        if (r.value().traces.empty()) {
            err << "stallscope-cli: " << path << ": no trace to compare"
                << (r.value().detailNote.empty() ? "" : " (" + r.value().detailNote + ")") << "\n";
            return 1;
        }
        ws.push_back(std::move(r.value()));
    }
    const workspace::AnalysedTrace* tb = ws[0].representative(0);
    const workspace::AnalysedTrace* ta = ws[1].representative(0);
    if (!tb) tb = &ws[0].traces.front();
    if (!ta) ta = &ws[1].traces.front();
    const model::Trace& b = *tb->entry.trace;
    const model::Trace& a = *ta->entry.trace;
    if (memoryOnly(b) || memoryOnly(a)) {
        if (!(memoryOnly(b) && memoryOnly(a))) {
            err << "stallscope-cli: one side is a memory recording alone (a snapshot or memory "
                   "timeline) and the other a trace: compare like with like\n";
            return 1;
        }
        const MemoryAnalysis mb = analyzeMemory(b, *tb->analysis),
                             ma = analyzeMemory(a, *ta->analysis);
        writeMemoryComparison(out, {o.paths[0], &b, &mb}, {o.paths[1], &a, &ma}, o.json,
                              o.topGiven ? o.top : 10);
        return 0;
    }
    const RunDiff d = diffRuns(b, *tb->analysis, a, *ta->analysis, o.analysis);
    const bool ranks = ws[0].ranks.ranks.size() >= 2 && ws[1].ranks.ranks.size() >= 2;
    if (o.json)
        writeJson(out, tb->entry.path, b, *tb->analysis, ta->entry.path, a, *ta->analysis, d,
                  ranks ? &ws[0].ranks : nullptr, ranks ? &ws[1].ranks : nullptr);
    else {
        out << "before: " << tb->entry.path << "\nafter:  " << ta->entry.path << "\n";
        if (ws[0].traces.size() > 1 || ws[1].traces.size() > 1)
            out << "(the tables compare rank " << tb->entry.rank << " with rank " << ta->entry.rank
                << ")\n";
        out << "\n";
        writeStep(out, d);
        writePredictions(out, d);
        writeDevices(out, d);
        writeFindings(out, d);
        writeRows(out, d.operators, false, d, o.top);
        writeRows(out, d.kernels, true, d, o.top);
        if (ranks) writeRanks(out, ws[0].ranks, ws[1].ranks);
        if (!d.notes.empty()) {
            out << "\nNotes:\n";
            for (const auto& n : d.notes) out << "  " << n << "\n";
        }
    }
    if (o.maxRegressionPct < 0) return 0;
    const RegressionCheck c = checkRegression(*tb->analysis, *ta->analysis, o.maxRegressionPct);
    if (!c.regressed) return 0;
    err << "stallscope-cli: regression: " << c.reason << "\n";
    return 3;
}

int diffMain(Args& args, std::ostream& out, std::ostream& err) {
    const Command& me = kDiffCommand;
    DiffCliOptions o;
    while (args.more()) {
        const std::string a = args.take();
        if (a == "--json")
            o.json = true;
        else if (a == "--top") {
            if (!args.unsignedValue(o.top, 1000000) || o.top == 0)
                return usageError(me, "--top needs a number of rows (1 or more)", err);
            o.topGiven = true;
        } else if (a == "--max-regression") {
            if (!args.percentValue(o.maxRegressionPct))
                return usageError(me, "--max-regression needs a percentage", err);
        } else if (a == "--threads") {
            if (!args.unsignedValue(o.threads, kMaxThreads))
                return usageError(me, "--threads needs a number from 0 (one per core) to 1024",
                                  err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(me, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.size() != 2) return usageError(me, "diff needs two paths: BEFORE AFTER", err);
    return runDiff(o, out, err);
}

} // namespace

extern const Command kDiffCommand{
    "diff",
    "  diff [--json] [--top N] [--max-regression PCT] BEFORE AFTER\n"
    "                                        two runs compared: step time against its noise,\n"
    "                                        idle by cause, findings resolved/new/persisting,\n"
    "                                        the replay's prediction beside the measurement,\n"
    "                                        operators and kernels aligned; --max-regression\n"
    "                                        exits 3 when AFTER is slower by more than PCT\n",
    diffMain};

} // namespace stallscope::cli
