// Before → after comparisons (see report.h); the measures and the gate are the analysis's
// (analysis/regression.h).
#include "report_common.h"

#include "stallscope/analysis/regression.h"
#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/reports/escape.h"

#include <cmath>
#include <cstdio>
#include <map>

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

void findingsDiff(ReportDocument& doc, const AnalysisResult& b, const AnalysisResult& a) {
    std::map<std::string, const Finding*> before, after;
    for (const auto& f : b.findings) before[f.id] = &f;
    for (const auto& f : a.findings) after[f.id] = &f;
    Table t;
    t.header = {"Finding", "Status", "Before", "After"};
    t.rightAlign = {false, false, true, true};
    for (const auto& [id, f] : before) {
        const auto it = after.find(id);
        if (it == after.end())
            t.rows.push_back({plain(f->title), {{"fixed", Style::Good}}, plain(formatDuration(f->savingNs)), plain("–")});
        else {
            const double d = double(it->second->savingNs - f->savingNs);
            t.rows.push_back({plain(f->title), {change(d < 0 ? "smaller" : d > 0 ? "larger" : "unchanged", d, true)},
                              plain(formatDuration(f->savingNs)), plain(formatDuration(it->second->savingNs))});
        }
    }
    for (const auto& [id, f] : after)
        if (!before.count(id))
            t.rows.push_back({plain(f->title), {{"new", Style::Bad}}, plain("–"), plain(formatDuration(f->savingNs))});
    doc.heading(2, "Findings", "findings");
    if (t.rows.empty()) doc.paragraph(plain("No findings before or after."));
    else doc.table(std::move(t));
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
    findingsDiff(doc, b, a);
    return doc;
}

} // namespace stallscope::reports
