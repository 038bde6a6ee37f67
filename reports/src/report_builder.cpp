// What a report says (see report.h): summary, idle causes, findings with their picture and
// fix, statistics tables, notes. Format-neutral: the renderers decide how it looks.
#include "report_common.h"
#include "stallscope/analysis/cross_rank.h"

#include "stallscope/base/text_format.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/svg.h"

#include <algorithm>

namespace stallscope::reports {

using base::closeBidi;
using base::formatCount;
using base::formatDuration;
using base::formatOffset;

using namespace analysis;
using detail::pct;

namespace {

Style severityStyle(FindingSeverity s) {
    switch (s) {
    case FindingSeverity::High: return Style::High;
    case FindingSeverity::Medium: return Style::Medium;
    case FindingSeverity::Low: return Style::Low;
    case FindingSeverity::Note: break;
    }
    return Style::Note;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::string shareOf(const AnalysisResult& a) {
    return std::string(shareBase(a));
}

void summary(ReportDocument& doc, const ReportInput& in, const std::string& prefix) {
    const AnalysisResult& a = *in.analysis;
    doc.heading(2, prefix + "Summary", detail::anchor(prefix + "summary"));
    Text window{{"Window: ", Style::Bold}, {a.window.description + ", " + formatDuration(a.window.length()), Style::Plain}};
    if (a.stepTimes.count > 0)
        window.push_back({"; " + std::to_string(a.stepTimes.count) + " steps, mean " + formatDuration(a.stepTimes.meanNs) +
                              " (min " + formatDuration(a.stepTimes.minNs) + ", max " + formatDuration(a.stepTimes.maxNs) +
                              ", variation " + pct(a.stepTimes.cv) + ")",
                          Style::Plain});
    doc.paragraph(window);
    if (a.devices.empty()) {
        doc.paragraph(plain("No GPU work in this trace."));
    } else {
        Table t;
        t.header = {"Device", "Utilisation", "Busy", "Idle", "Kernels", "est. SM efficiency", "est. occupancy"};
        t.rightAlign = {false, true, true, true, true, true, true};
        for (const DeviceMetrics& d : a.devices)
            t.rows.push_back({plain("GPU " + std::to_string(d.device) + (d.name.empty() ? "" : " · " + d.name)),
                              plain(pct(d.utilization)), plain(formatDuration(d.busyNs)), plain(formatDuration(d.idleNs)),
                              plain(pct(d.kernelUtilization)),
                              plain(d.estSmEfficiency >= 0 ? pct(d.estSmEfficiency) : "–"),
                              plain(d.estAchievedOccupancy >= 0 ? pct(d.estAchievedOccupancy / 100) : "–")});
        doc.table(std::move(t));
    }
    if (!a.findings.empty()) {
        const Finding& f = a.findings.front();
        doc.paragraph({{"Largest finding: ", Style::Bold},
                       {f.title, Style::Plain},
                       {" — " + savingText(f, shareOf(a)) + ".", Style::Plain}});
    }
}

void idleCauses(ReportDocument& doc, const ReportInput& in, const std::string& prefix, const ReportOptions& o) {
    const AnalysisResult& a = *in.analysis;
    bool any = false;
    for (const DeviceMetrics& d : a.devices) any = any || d.idle.idleNs > 0;
    if (!any) return;
    doc.heading(2, prefix + "Why the GPU was idle", detail::anchor(prefix + "idle"));
    doc.paragraph(plain("Every idle nanosecond is charged to what the launching thread was doing at the time "
                        "(definitions in docs/analysis.md)."));
    for (const DeviceMetrics& d : a.devices) {
        if (d.idle.idleNs <= 0) continue;
        if (o.pictures) doc.picture(idleCausePicture(d));
        Table t;
        t.header = {"Cause", "Time", "of window", "of idle", "Gaps", "What it means"};
        t.rightAlign = {false, true, true, true, true, false};
        std::vector<size_t> order(kIdleCauseCount);
        for (size_t k = 0; k < kIdleCauseCount; ++k) order[k] = k;
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return d.idle.causes[x].ns > d.idle.causes[y].ns; });
        for (size_t k : order) {
            const CauseTotals& c = d.idle.causes[k];
            if (c.ns <= 0) continue;
            const auto cause = static_cast<IdleCause>(k);
            t.rows.push_back({{{std::string(idleCauseName(cause)), Style::Code}},
                              plain(formatDuration(c.ns)),
                              plain(pct(double(c.ns) / double(std::max<int64_t>(1, d.windowNs)))),
                              plain(pct(double(c.ns) / double(d.idle.idleNs))),
                              plain(formatCount(c.gaps)),
                              {{std::string(idleCauseDescription(cause)), Style::Muted}}});
        }
        doc.table(std::move(t));
    }
}

/// The TensorBoard plugin's Overview: each step's time by what ran (kernel, copies, memsets,
/// communication, runtime, data loading, CPU, other), as stacked bars and a table.
void stepBreakdownSection(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
                          const ReportOptions& o) {
    const AnalysisResult& a = *in.analysis;
    bool any = false;
    for (const DeviceMetrics& d : a.devices) any = any || !d.steps.empty();
    if (!any) return;
    doc.heading(2, prefix + "Time per step", detail::anchor(prefix + "steps"));
    doc.paragraph(plain("Each instant of a step (its start to the next step's start) is charged "
                        "once, in this order: GPU kernel, memcpy, memset, communication, then "
                        "what the host did while the GPU had none of these: runtime calls, data "
                        "loading, CPU operators, other (nothing traced). The parts add up to the "
                        "step; warm-up steps are marked."));
    const auto& cats = breakdownCategories();
    for (const DeviceMetrics& d : a.devices) {
        const StepBreakdown b = stepBreakdown(d);
        if (b.empty()) continue;
        if (o.pictures) doc.picture(stepBreakdownPicture(b));
        Table t;
        t.header = {"Step", "Length"};
        t.rightAlign = {false, true};
        for (const BreakdownCategory& c : cats) {
            t.header.push_back(std::string(c.label));
            t.rightAlign.push_back(true);
        }
        auto row = [&](const std::string& label, int64_t length,
                       const std::array<int64_t, kBreakdownCategories>& ns) {
            std::vector<Text> r{plain(label), plain(formatDuration(length))};
            for (size_t k = 0; k < cats.size(); ++k)
                r.push_back(plain(formatDuration(ns[k]) + " (" +
                                  pct(double(ns[k]) / double(std::max<int64_t>(1, length))) + ")"));
            t.rows.push_back(std::move(r));
        };
        constexpr size_t kRows = 32;
        for (size_t i = 0; i < b.steps.size() && i < kRows; ++i)
            row("#" + std::to_string(b.steps[i].number) + (b.steps[i].warmup ? " (warm-up)" : ""),
                b.steps[i].lengthNs(), b.steps[i].ns);
        if (b.meanOver > 1)
            row("mean of " + std::to_string(b.meanOver) + " steady steps", b.meanStepNs, b.meanNs);
        doc.table(std::move(t));
        if (b.steps.size() > kRows)
            doc.paragraph(plain(std::to_string(b.steps.size()) +
                                " steps in all; the analysis JSON has every step."));
    }
}

void finding(ReportDocument& doc, const ReportInput& in, const Finding& f, size_t n,
             const std::string& prefix, const ReportOptions& o,
             std::shared_ptr<const scene::TimelineIndex>& index) {
    const model::Trace& t = *in.trace;
    const AnalysisResult& a = *in.analysis;
    doc.heading(3, std::to_string(n) + ". " + f.title, detail::anchor(prefix + f.id));
    Text meta{{upper(severityName(f.severity)), severityStyle(f.severity)},
              {" · ", Style::Plain},
              {savingText(f, shareOf(a)), Style::Bold},
              {" · confidence " + std::to_string(static_cast<int>(f.confidence * 100)) + "%" +
                   (f.device >= 0 ? " · GPU " + std::to_string(f.device) : "") + " · ",
               Style::Plain},
              {f.id, Style::Muted}};
    doc.paragraph(meta);
    if (o.pictures && !f.ranges.empty()) {
        if (!index) index = scene::TimelineIndex::build(t); // once per trace, for all its pictures
        TimelinePictureOptions po;
        po.index = index;
        doc.picture(findingTimelinePicture(t, a, f, po));
    }
    doc.paragraph(detail::prose(f.explanation));
    if (!f.ranges.empty()) {
        const auto largest = *std::max_element(f.ranges.begin(), f.ranges.end(),
                                               [](const auto& x, const auto& y) { return x.length() < y.length(); });
        doc.paragraph({{"On the timeline: ", Style::Bold},
                       {std::to_string(f.ranges.size()) + (f.ranges.size() == 1 ? " range" : " ranges") +
                            ", the largest " + formatDuration(largest.length()) + " at " +
                            formatOffset(largest.start - a.window.startNs, 1000) + " from the window start.",
                        Style::Plain}});
    }
    if (!f.waitedFor.empty()) {
        Table w;
        w.header = {"GPU waited for", "Time"};
        w.rightAlign = {false, true};
        for (const auto& [name, ns] : f.waitedFor) w.rows.push_back({{{detail::shortName(name), Style::Code}}, plain(formatDuration(ns))});
        doc.table(std::move(w));
    }
    Text fix{{"Fix: ", Style::Bold}};
    for (Span& sp : detail::prose(f.fix)) fix.push_back(std::move(sp));
    doc.paragraph(std::move(fix));
    if (!f.snippet.empty()) doc.code(f.snippet);
    if (!f.evidence.empty()) {
        Text ev{{"Evidence: ", Style::Bold}};
        const auto& s = t.slices();
        for (size_t i = 0; i < f.evidence.size() && i < 5; ++i) {
            if (i) ev.push_back({", ", Style::Plain});
            const uint32_t e = f.evidence[i].index();
            ev.push_back({detail::shortName(t.str(s.name[e]), 80), Style::Code});
            ev.push_back({" " + formatDuration(s.dur[e]) + " at " + formatOffset(s.start[e] - a.window.startNs, 1000),
                          Style::Muted});
        }
        if (f.evidence.size() > 5) ev.push_back({" and " + std::to_string(f.evidence.size() - 5) + " more", Style::Muted});
        doc.paragraph(ev);
    }
}

void findings(ReportDocument& doc, const ReportInput& in, const std::string& prefix, const ReportOptions& o) {
    const AnalysisResult& a = *in.analysis;
    doc.heading(2, prefix + "Findings", detail::anchor(prefix + "findings"));
    if (a.findings.empty()) {
        doc.paragraph(plain("No findings: nothing in this window costs measurable GPU time."));
        return;
    }
    Table overview;
    overview.header = {"#", "Severity", "Finding", "Saves up to", "of " + shareOf(a)};
    overview.rightAlign = {true, false, false, true, true};
    for (size_t i = 0; i < a.findings.size() && i < o.maxFindings; ++i) {
        const Finding& f = a.findings[i];
        overview.rows.push_back({plain(std::to_string(i + 1)), {{std::string(severityName(f.severity)), severityStyle(f.severity)}},
                                 plain(f.title), plain(formatDuration(f.savingNs)), plain(pct(f.savingShare))});
    }
    doc.table(std::move(overview));
    std::shared_ptr<const scene::TimelineIndex> index;
    for (size_t i = 0; i < a.findings.size() && i < o.maxFindings; ++i)
        finding(doc, in, a.findings[i], i + 1, prefix, o, index);
    if (a.findings.size() > o.maxFindings)
        doc.paragraph(plain(std::to_string(a.findings.size() - o.maxFindings) + " more findings are in the JSON report."));
}

/// The what-if waterfall: the step time now, then after each finding's fix in turn.
void waterfall(ReportDocument& doc, const ReportInput& in, const std::string& prefix,
               const ReportOptions& o) {
    const AnalysisResult& a = *in.analysis;
    bool any = false;
    for (const Waterfall& wf : a.waterfalls) any = any || !wf.bars.empty();
    if (!any) return;
    doc.heading(2, prefix + "What the fixes would give", detail::anchor(prefix + "waterfall"));
    doc.paragraph(plain(
        "The what-if replay (docs/analysis.md) replays the window with each finding's fix "
        "applied in turn; each line includes the fixes above it, so the findings' savings add "
        "up."));
    for (const Waterfall& wf : a.waterfalls) {
        if (wf.bars.empty()) continue;
        if (o.pictures) doc.picture(waterfallPicture(wf));
        Table t;
        t.header = {"After", "Finding", shareOf(a) == "step time" ? "Window (steps)" : "Window",
                    "Saves", "of " + shareOf(a)};
        t.rightAlign = {false, false, true, true, true};
        t.rows.push_back({plain("measured"), plain(""), plain(formatDuration(wf.measuredNs)),
                          plain(""), plain("")});
        int64_t before = wf.measuredNs;
        for (const WaterfallBar& b : wf.bars) {
            t.rows.push_back({plain("+ " + std::string(fixDescription(b.fix))),
                              {{b.findingId, Style::Code}},
                              plain(formatDuration(b.windowNs)),
                              plain(formatDuration(before - b.windowNs)),
                              plain(pct(double(before - b.windowNs) /
                                        double(std::max<int64_t>(1, wf.measuredNs))))});
            before = b.windowNs;
        }
        doc.table(std::move(t));
    }
}

void notes(ReportDocument& doc, const ReportInput& in, const std::string& prefix) {
    const model::Trace& t = *in.trace;
    std::vector<Text> items;
    for (const std::string& n : in.analysis->notes) items.push_back(plain(n));
    const auto& d = t.diagnostics();
    for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<model::DiagnosticKind>(k);
        if (!d.count(kind)) continue;
        items.push_back({{formatCount(d.count(kind)) + " × ", Style::Bold},
                         {std::string(model::diagnosticInfo(kind).summary), Style::Plain}});
    }
    if (items.empty()) return;
    doc.heading(2, prefix + "Notes", detail::anchor(prefix + "notes"));
    doc.bullets(std::move(items));
}

/// The ranks section: the cross-rank sentences, the straggler, the heat maps, the findings
/// across ranks and one row per rank. From the CrossRankResult alone, so a report of merged
/// rank summaries (no traces loaded) has the same section.
void ranksOverview(ReportDocument& doc, const CrossRankResult& cross, bool pictures) {
    doc.heading(2, "Ranks", "ranks");
    const std::vector<std::string> sentences = crossRankSentences(cross);
    std::string line;
    for (const std::string& x : sentences) line += (line.empty() ? "" : " ") + x;
    line += (line.empty() ? "" : " ") + std::string("Slowest window ") + pct(cross.stepImbalance) +
            " longer than the fastest.";
    doc.paragraph(plain(line));
    if (!cross.stepLabels.empty()) {
        doc.heading(3, "Ranks × steps", "ranks-steps");
        if (pictures) {
            doc.picture(rankHeatmapPicture(cross, false));
            if (cross.collectives > 0) doc.picture(rankHeatmapPicture(cross, true));
        }
        std::vector<Text> items;
        for (size_t c = 0; c < cross.stepLabels.size() && items.size() < 20; ++c) {
            if (cross.stepStraggler[c] < 0) continue;
            items.push_back(plain(cross.stepLabels[c] + ": rank " +
                                  std::to_string(cross.stepStraggler[c]) +
                                  " arrived last most often"));
        }
        if (!items.empty()) doc.bullets(std::move(items));
    }
    if (!cross.findings.empty()) {
        Table ft;
        ft.header = {"Finding", "Ranks", "Saves (of step time)", "Most on rank"};
        ft.rightAlign = {false, true, true, true};
        for (const RankFinding& f : cross.findings)
            ft.rows.push_back(
                {{{std::string(findingKindName(f.kind)), Style::Code}},
                 plain(std::to_string(f.ranks) + " of " + std::to_string(cross.ranks.size())),
                 plain(f.maxShare > f.minShare ? pct(f.minShare) + "–" + pct(f.maxShare)
                                               : pct(f.minShare)),
                 plain(std::to_string(f.worstRank))});
        doc.table(std::move(ft));
    }
    for (const auto& n : cross.notes) doc.paragraph({{n, Style::Muted}});
    Table t;
    t.header = {"Rank",        "Trace",          "Step time", "GPU utilisation",
                "Top finding", "In collectives", "Waiting",   "Transfer",
                "Last"};
    t.rightAlign = {true, false, true, true, false, true, true, true, true};
    const bool colls = cross.collectives > 0;
    for (size_t i = 0; i < cross.ranks.size(); ++i) {
        const RankSummary& rs = cross.ranks[i];
        int64_t step = rs.windowNs;
        if (i < cross.cells.size() && !cross.cells[i].empty()) {
            int64_t sum = 0;
            for (const RankStepCell& c : cross.cells[i]) sum += c.stepNs;
            step = sum / int64_t(cross.cells[i].size());
        }
        t.rows.push_back({plain(std::to_string(rs.rank)),
                          plain(rs.label.empty() ? rs.path : closeBidi(rs.label)),
                          plain(formatDuration(step)), plain(pct(rs.utilization)),
                          plain(rs.topFinding.empty() ? "none" : rs.topFinding),
                          plain(colls ? formatDuration(rs.collectiveNs) : "–"),
                          plain(colls ? formatDuration(rs.waitNs) : "–"),
                          plain(colls ? formatDuration(rs.transferNs) : "–"),
                          plain(colls ? std::to_string(rs.lastArrivals) : "–")});
    }
    doc.table(std::move(t));
}

} // namespace

ReportDocument buildReport(const std::vector<ReportInput>& inputs, const ReportOptions& o) {
    ReportDocument doc;
    if (inputs.empty()) return doc;
    const ReportInput& first = inputs.front();
    doc.title = "Stallscope report: " + detail::fileName(first.path);
    doc.subtitle = detail::subtitle(first, o);
    if (inputs.size() > 1) {
        std::vector<RankInput> ri;
        for (size_t i = 0; i < inputs.size(); ++i)
            ri.push_back({inputs[i].rank >= 0 ? inputs[i].rank : int32_t(i), inputs[i].label,
                          inputs[i].trace.get(), inputs[i].analysis.get(), inputs[i].path});
        ranksOverview(doc, analyzeRanks(ri), o.pictures);
    }
    for (const ReportInput& in : inputs) {
        if (!in.trace || !in.analysis) continue;
        std::string prefix;
        if (inputs.size() > 1) {
            prefix = (in.label.empty() ? detail::fileName(in.path) : closeBidi(in.label)) + ": ";
            doc.blocks.push_back(Block{Block::Kind::Rule});
        }
        summary(doc, in, prefix);
        stepBreakdownSection(doc, in, prefix, o);
        idleCauses(doc, in, prefix, o);
        findings(doc, in, prefix, o);
        waterfall(doc, in, prefix, o);
        detail::efficiency(doc, in, prefix, o);
        detail::statistics(doc, in, prefix, o);
        detail::memory(doc, in, prefix, o);
        notes(doc, in, prefix);
    }
    return doc;
}

ReportDocument buildRanksReport(const CrossRankResult& cross, const std::string& source,
                                const ReportOptions& o) {
    ReportDocument doc;
    doc.title = "Stallscope ranks report: " + std::to_string(cross.ranks.size()) + " ranks";
    doc.subtitle = source;
    ranksOverview(doc, cross, o.pictures);
    return doc;
}

} // namespace stallscope::reports
