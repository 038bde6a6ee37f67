// Before → after comparisons (see report.h); the measures and the gate are the analysis's
// (analysis/regression.h).
#include "report_common.h"

#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/svg.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace stallscope::reports {

using base::closeBidi;
using base::formatDuration;

using namespace analysis;
using detail::pct;

namespace {

std::string signedPct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v);
    return buf;
}

std::string signedPts(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f pts", v);
    return buf;
}

/// A change cell: green when it went the good way, red when not, plain when unchanged.
Span change(std::string text, double delta, bool lowerIsBetter) {
    if (std::abs(delta) < 1e-9) return {std::move(text), Style::Muted};
    const bool good = lowerIsBetter ? delta < 0 : delta > 0;
    return {std::move(text), good ? Style::Good : Style::Bad};
}

const DeviceMetrics* device(const AnalysisResult& a, int32_t id) {
    for (const auto& d : a.devices)
        if (d.device == id) return &d;
    return nullptr;
}

void metricsTable(ReportDocument& doc, const AnalysisResult& b, const AnalysisResult& a) {
    Table t;
    t.header = {"Metric", "Before", "After", "Change"};
    t.rightAlign = {false, true, true, true};
    const int64_t sb = comparedStepTimeNs(b), sa = comparedStepTimeNs(a);
    const double stepPct = sb > 0 ? 100.0 * double(sa - sb) / double(sb) : 0;
    t.rows.push_back({plain(b.stepTimes.count && a.stepTimes.count ? "Step time (mean)" : "Window"),
                      plain(formatDuration(sb)), plain(formatDuration(sa)), {change(signedPct(stepPct), stepPct, true)}});
    for (const DeviceMetrics& db : b.devices) {
        const DeviceMetrics* da = device(a, db.device);
        if (!da) continue;
        const std::string g = "GPU " + std::to_string(db.device) + " ";
        const double du = 100 * (da->utilization - db.utilization);
        t.rows.push_back({plain(g + "utilisation"), plain(pct(db.utilization)), plain(pct(da->utilization)),
                          {change(signedPts(du), du, false)}});
        if (db.estSmEfficiency >= 0 && da->estSmEfficiency >= 0) {
            const double ds = 100 * (da->estSmEfficiency - db.estSmEfficiency);
            t.rows.push_back({plain(g + "est. SM efficiency"), plain(pct(db.estSmEfficiency)), plain(pct(da->estSmEfficiency)),
                              {change(signedPts(ds), ds, false)}});
        }
        for (size_t k = 0; k < kIdleCauseCount; ++k) {
            const double vb = double(db.idle.causes[k].ns) / double(std::max<int64_t>(1, db.windowNs));
            const double va = double(da->idle.causes[k].ns) / double(std::max<int64_t>(1, da->windowNs));
            if (vb <= 0 && va <= 0) continue;
            const double d = 100 * (va - vb);
            t.rows.push_back({{{g + "idle: ", Style::Plain}, {std::string(idleCauseName(static_cast<IdleCause>(k))), Style::Code}},
                              plain(pct(vb)), plain(pct(va)), {change(signedPts(d), d, true)}});
        }
    }
    doc.table(std::move(t));
}

/// Findings fixed, new and persisting. With the traces (`d`), matched across renumbered GPUs
/// and their savings per step, as the rest of the comparison; else by id, per window.
void findingsDiff(ReportDocument& doc, const AnalysisResult& b, const AnalysisResult& a,
                  const RunDiff* d) {
    Table t;
    const std::string per = d && d->perStep ? " / step" : "";
    t.header = {"Finding", "Status", "Saves before" + per, "Saves after" + per};
    t.rightAlign = {false, false, true, true};
    auto row = [&](const std::string& title, Span status, int64_t sb, int64_t sa) {
        t.rows.push_back({plain(title),
                          {std::move(status)},
                          plain(sb < 0 ? "–" : formatDuration(sb)),
                          plain(sa < 0 ? "–" : formatDuration(sa))});
    };
    auto persisting = [&](const std::string& title, int64_t sb, int64_t sa) {
        const double delta = double(sa - sb);
        row(title,
            change(delta < 0   ? "smaller"
                   : delta > 0 ? "larger"
                               : "unchanged",
                   delta, true),
            sb, sa);
    };
    if (d) {
        for (const FindingChange& f : d->findings) {
            if (f.status == FindingStatus::Resolved)
                row(f.title, {"fixed", Style::Good}, f.beforeSavingNs, -1);
            else if (f.status == FindingStatus::New)
                row(f.title, {"new", Style::Bad}, -1, f.afterSavingNs);
            else
                persisting(f.title, f.beforeSavingNs, f.afterSavingNs);
        }
    } else {
        std::map<std::string, const Finding*> before, after;
        for (const auto& f : b.findings) before[f.id] = &f;
        for (const auto& f : a.findings) after[f.id] = &f;
        for (const auto& [id, f] : before) {
            const auto it = after.find(id);
            if (it == after.end())
                row(f->title, {"fixed", Style::Good}, f->savingNs, -1);
            else
                persisting(f->title, f->savingNs, it->second->savingNs);
        }
        for (const auto& [id, f] : after)
            if (!before.count(id)) row(f->title, {"new", Style::Bad}, -1, f->savingNs);
    }
    doc.heading(2, "Findings", "findings");
    if (t.rows.empty()) doc.paragraph(plain("No findings before or after."));
    else doc.table(std::move(t));
}

std::string perStepText(double ns) {
    return formatDuration(int64_t(std::llround(ns)));
}

std::string callsText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f" : "%.1f", v);
    return buf;
}

Span rowChangeSpan(const AlignedRow& r) {
    const double d = r.deltaNs();
    std::string text(rowChangeName(r.change));
    if (r.change == RowChange::Same) return {std::move(text), Style::Muted};
    const bool good = r.change == RowChange::Faster || (r.change == RowChange::Removed && d < 0) ||
                      (r.change == RowChange::Added && d <= 0);
    return {std::move(text), good ? Style::Good : Style::Bad};
}

void alignedTable(ReportDocument& doc, const RunDiff& d, bool kernels, size_t rows) {
    const auto& all = kernels ? d.kernels : d.operators;
    size_t n[5] = {0, 0, 0, 0, 0};
    for (const auto& r : all) ++n[size_t(r.change)];
    doc.heading(3, kernels ? "Kernels" : "Operators", kernels ? "diff-kernels" : "diff-operators");
    doc.paragraph(plain(std::string(kernels ? "Matched by name and launching operator; kernels of "
                                              "different names doing one job (another GPU's "
                                              "library, another algorithm) by family under their "
                                              "operator. "
                                            : "Matched by name, input shapes and dtypes; compared "
                                              "by the GPU time they launch when both launch some, "
                                              "else by CPU time. ") +
                        std::to_string(n[0]) + " added, " + std::to_string(n[1]) + " removed, " +
                        std::to_string(n[2]) + " faster, " + std::to_string(n[3]) + " slower, " +
                        std::to_string(n[4]) + " about the same (10 % per call); the " +
                        std::to_string(std::min(rows, all.size())) + " largest changes:"));
    Table t;
    t.header = {kernels ? "Kernel" : "Operator",
                kernels ? "Launched by" : "Input shapes",
                d.perStep ? "Calls / step" : "Calls",
                d.perStep ? "Time / step" : "Time",
                "Per call",
                "Change",
                ""};
    t.rightAlign = {false, false, true, true, true, true, false};
    for (size_t i = 0; i < all.size() && i < rows; ++i) {
        const AlignedRow& r = all[i];
        const bool gpu = r.gpuTimed;
        std::string name = r.name;
        if (r.byFamily) {
            std::string b, a;
            for (const auto& k : r.before.names) b += (b.empty() ? "" : ", ") + k;
            for (const auto& k : r.after.names) a += (a.empty() ? "" : ", ") + k;
            name += " (" + detail::shortName(b, 40) + " → " + detail::shortName(a, 40) + ")";
        }
        const double delta = r.deltaNs();
        t.rows.push_back(
            {{{detail::shortName(name, 72), Style::Code}},
             {{detail::shortName(kernels ? (r.op.empty() ? "(no operator)" : r.op) : r.shapes, 48),
               kernels ? Style::Code : Style::Plain}},
             plain(callsText(r.before.perStep(int64_t(r.before.calls))) + " → " +
                   callsText(r.after.perStep(int64_t(r.after.calls)))),
             plain(perStepText(r.compared(r.before)) + " → " + perStepText(r.compared(r.after)) +
                   (!kernels && gpu ? " (GPU)" : "")),
             plain(perStepText(r.before.perCallNs(gpu)) + " → " +
                   perStepText(r.after.perCallNs(gpu))),
             {change((delta > 0   ? "+"
                      : delta < 0 ? "-"
                                  : "") +
                         perStepText(std::abs(delta)),
                     delta, true)},
             {rowChangeSpan(r)}});
    }
    doc.table(std::move(t));
}

void workDiff(ReportDocument& doc, const RunDiff& d, const ReportOptions& o) {
    const StepTimeChange& s = d.step;
    doc.heading(2, "What changed in the work", "work");
    std::string noise;
    if (s.noiseNs < 0)
        noise = "A run has fewer than 2 steps: the step-to-step spread is unknown, so the change "
                "cannot be told from noise.";
    else
        noise = std::string("The change is ") + (s.beyondNoise() ? "beyond" : "within") +
                " the step-to-step noise (±" + perStepText(s.noiseNs) +
                ": twice the standard error of the difference of the " + "means, spreads ±" +
                perStepText(s.beforeStddevNs) + " before and ±" + perStepText(s.afterStddevNs) +
                " after).";
    doc.paragraph(plain(noise));
    if (!d.predictions.empty()) {
        doc.paragraph(plain("BEFORE's what-if replay of the fixes for the findings AFTER no longer "
                            "has (or has halved), beside AFTER's measured step time:"));
        Table t;
        t.header = {"Findings", "Fix", "Before", "Predicted", "Measured after"};
        t.rightAlign = {false, false, true, true, true};
        for (const Prediction& p : d.predictions) {
            std::string ids, fixes;
            for (const auto& id : p.findingIds) ids += (ids.empty() ? "" : " + ") + id;
            for (size_t f = 0; f < size_t(Fix::Count); ++f)
                if (p.fixes & fixBit(Fix(f)))
                    fixes += (fixes.empty() ? "" : ", ") + std::string(fixDescription(Fix(f)));
            t.rows.push_back({{{ids, Style::Code}},
                              plain(fixes),
                              plain(formatDuration(p.beforeNs)),
                              plain(formatDuration(p.predictedNs)),
                              plain(formatDuration(p.afterNs))});
        }
        doc.table(std::move(t));
    }
    for (const auto& n : d.notes) doc.paragraph({{"Note: " + n, Style::Muted}});
    if (o.pictures)
        for (const DeviceChange& g : d.devices) doc.picture(idleChangePicture(g, d.perStep, 880));
    alignedTable(doc, d, false, o.tableRows);
    alignedTable(doc, d, true, o.tableRows);
    if (!d.flame.empty() && o.pictures) {
        doc.heading(3, "Differential flame graph", "diff-flame");
        doc.paragraph(plain("GPU time by the CPU stack that launched it, both runs merged by frame "
                            "name, per step; hover a frame for its times."));
        doc.picture(diffFlamePicture(d.flame, 880));
    }
}

} // namespace

ReportDocument buildComparison(const ReportInput& before, const ReportInput& after, const ReportOptions& o) {
    ReportDocument doc;
    doc.title = "Stallscope comparison: " + detail::fileName(before.path) + " → " + detail::fileName(after.path);
    doc.subtitle = "before: " + detail::subtitle(before, o) + " | after: " + closeBidi(after.path);
    if (!before.analysis || !after.analysis) return doc;
    const AnalysisResult& b = *before.analysis;
    const AnalysisResult& a = *after.analysis;
    const RegressionCheck rc = checkRegression(b, a, 0);
    doc.heading(2, "Summary", "summary");
    doc.paragraph(
        {{"Step time ", Style::Bold},
         {formatDuration(comparedStepTimeNs(b)) + " → " + formatDuration(comparedStepTimeNs(a)) +
              " (",
          Style::Plain},
         change(signedPct(rc.stepTimeChangePct), rc.stepTimeChangePct, true),
         {"); GPU idle share " + pct(meanGpuIdleShare(b)) + " → " + pct(meanGpuIdleShare(a)) + " (",
          Style::Plain},
         change(signedPts(rc.idleShareChangePts), rc.idleShareChangePts, true),
         {").", Style::Plain}});
    metricsTable(doc, b, a);
    std::optional<RunDiff> d;
    if (before.trace && after.trace) d = diffRuns(*before.trace, b, *after.trace, a, o.analysis);
    findingsDiff(doc, b, a, d ? &*d : nullptr);
    if (d) workDiff(doc, *d, o);
    return doc;
}

} // namespace stallscope::reports
