// Terminal rendering of an analysis: aligned tables, the top findings first with their fix.
#include "analyze_command.h"

#include "stallscope/analysis/step_breakdown.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace stallscope::cli {

using base::formatBytes;
using base::formatCount;
using base::formatDuration;
using base::formatPercent;

using namespace analysis;

namespace {

std::string pct(double share) { // right-aligned in 6 columns: " 33.1%"
    const std::string s = base::formatPercent(share, 1);
    return std::string(s.size() < 6 ? 6 - s.size() : 0, ' ') + s;
}

std::string pad(const std::string& s, size_t n) {
    // Width by code points, so "µs" and "≤" align.
    size_t cps = 0;
    for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
    return cps >= n ? s : s + std::string(n - cps, ' ');
}

std::string padLeft(const std::string& s, size_t n) { return s.size() >= n ? s : std::string(n - s.size(), ' ') + s; }
std::string padRight(const std::string& s, size_t n) {
    return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

std::string shortName(std::string_view n, size_t max = 70) {
    return n.size() <= max ? std::string(n) : std::string(n.substr(0, max - 3)) + "...";
}

/// Wraps `text` at `width` columns with `indent` spaces.
void wrap(std::ostream& o, const std::string& text, size_t indent, size_t width = 96) {
    std::istringstream words(text);
    std::string word, line;
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width - indent) {
            o << std::string(indent, ' ') << line << "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) o << std::string(indent, ' ') << line << "\n";
}

/// HTA's launch statistics (docs/analysis.md "Launch statistics").
void writeLaunchStats(std::ostream& o, const LaunchStats& l) {
    for (const std::string& line : launchStatsLines(l)) o << "  " << line << "\n";
}

void writeDevice(std::ostream& o, const DeviceMetrics& d) {
    o << "GPU " << d.device << (d.name.empty() ? "" : "  " + d.name) << "\n";
    char line[256];
    std::snprintf(line, sizeof line, "  utilisation %.1f%%   busy %s   idle %s   kernels %.1f%%", d.utilization * 100,
                  formatDuration(d.busyNs).c_str(), formatDuration(d.idleNs).c_str(), d.kernelUtilization * 100);
    o << line;
    if (d.estSmEfficiency >= 0) std::snprintf(line, sizeof line, "   est. SM efficiency %.1f%%", d.estSmEfficiency * 100), o << line;
    if (d.estAchievedOccupancy >= 0) std::snprintf(line, sizeof line, "   est. occupancy %.1f%%", d.estAchievedOccupancy), o << line;
    o << "\n";
    if (d.commNs > 0)
        o << "  communication " << formatDuration(d.commNs) << ", overlapped with compute "
          << pct(double(d.commOverlapNs) / double(d.commNs)) << "\n";
    for (const auto& q : d.queues)
        if (q.launched > 0) {
            std::snprintf(line, sizeof line, "  stream %lld: %llu launches, mean queue depth %.2f\n",
                          static_cast<long long>(q.stream), static_cast<unsigned long long>(q.launched), q.meanDepth);
            o << line;
        }
    writeLaunchStats(o, d.launches);
    const IdleBreakdown& b = d.idle;
    if (b.idleNs <= 0) return;
    o << "\n  Why the GPU was idle (what the launching thread was doing):\n";
    o << "    " << pad("cause", 24) << padLeft("time", 11) << padLeft("window", 9) << padLeft("idle", 9)
      << padLeft("gaps", 8) << "  largest in one gap\n";
    std::vector<size_t> order(kIdleCauseCount);
    for (size_t k = 0; k < kIdleCauseCount; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t c) { return b.causes[a].ns > b.causes[c].ns; });
    for (size_t k : order) {
        const CauseTotals& c = b.causes[k];
        if (c.ns <= 0) continue;
        const int64_t largest = c.largest.empty() ? 0 : c.largest.front().ns;
        o << "    " << pad(std::string(idleCauseName(static_cast<IdleCause>(k))), 24)
          << padLeft(formatDuration(c.ns), 11) << padLeft(pct(double(c.ns) / double(d.windowNs)), 9)
          << padLeft(pct(double(c.ns) / double(b.idleNs)), 9) << padLeft(formatCount(c.gaps), 8) << "  "
          << formatDuration(largest) << "\n";
    }
    o << "    explained " << pct(double(b.explainedNs()) / double(b.idleNs)) << " of idle time ("
      << formatCount(b.gaps.size()) << " gaps)\n";
}

/// The TensorBoard plugin's Overview as a table: each step's time by category (kernel,
/// copies, memsets, communication, runtime, data loading, CPU, other; they add up to the
/// step), the steady steps' mean last; at most 16 steps (the JSON has them all).
void writeStepBreakdown(std::ostream& o, const DeviceMetrics& d) {
    const StepBreakdown b = stepBreakdown(d);
    if (b.empty()) return;
    const auto& cats = breakdownCategories();
    o << "\n  Time per step by what ran (each instant charged once, in this order; they add "
         "up to the step):\n";
    constexpr size_t kCol = 12; // "300.000 us" and two spaces
    o << "    " << pad("step", 14) << padLeft("length", kCol);
    for (const BreakdownCategory& c : cats) o << padLeft(std::string(c.shortLabel), kCol);
    o << "\n";
    auto row = [&](const std::string& label, int64_t length,
                   const std::array<int64_t, kBreakdownCategories>& ns) {
        o << "    " << pad(label, 14) << padLeft(formatDuration(length), kCol);
        for (size_t k = 0; k < cats.size(); ++k) o << padLeft(formatDuration(ns[k]), kCol);
        o << "\n";
    };
    constexpr size_t kShown = 16;
    for (size_t i = 0; i < b.steps.size() && i < kShown; ++i) {
        const StepBreakdownRow& st = b.steps[i];
        row("#" + std::to_string(st.number) + (st.warmup ? " warm-up" : ""), st.lengthNs(), st.ns);
    }
    if (b.steps.size() > kShown)
        o << "    (" << b.steps.size() << " steps in all; --json has every step's roles)\n";
    if (b.meanOver > 1) row("mean of " + std::to_string(b.meanOver), b.meanStepNs, b.meanNs);
    o << "    (";
    for (size_t k = 0; k < cats.size(); ++k)
        o << (k ? ", " : "") << cats[k].shortLabel << " = " << cats[k].label;
    o << ")\n";
}

void writeFindings(std::ostream& o, const model::Trace& t, const AnalysisResult& r) {
    if (r.findings.empty()) {
        o << "\nNo findings: nothing in this window costs measurable GPU time.\n";
        return;
    }
    o << "\nFindings, most severe first (savings by the what-if replay; they add up):\n";
    int n = 0;
    for (const Finding& f : r.findings) {
        ++n;
        std::string sev(severityName(f.severity));
        for (char& ch : sev) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        o << "\n " << n << ". [" << sev << "] " << f.title << (f.device >= 0 ? "  (GPU " + std::to_string(f.device) + ")" : "")
          << "\n";
        o << "    " << savingText(f, shareBase(r)) << "; confidence "
          << static_cast<int>(f.confidence * 100) << "%, id " << f.id << "\n";
        if (!f.ranges.empty()) {
            const auto& first = f.ranges.front();
            o << "    on the timeline: " << f.ranges.size() << " range"
              << (f.ranges.size() == 1 ? "" : "s") << ", first at "
              << (first.start < r.window.startNs
                      ? "-" + formatDuration(r.window.startNs - first.start)
                      : "+" + formatDuration(first.start - r.window.startNs))
              << " (" << formatDuration(first.length()) << ")";
            if (!f.evidence.empty())
                o << "; e.g. `" << shortName(t.str(t.slices().name[f.evidence.front().index()]), 60) << "`";
            o << "\n";
        }
        wrap(o, f.explanation, 4);
        wrap(o, "Fix: " + f.fix, 4);
        if (!f.snippet.empty()) {
            std::istringstream lines(f.snippet);
            std::string l;
            while (std::getline(lines, l)) o << "        " << l << "\n";
        }
    }
}

void writeWaterfalls(std::ostream& o, const AnalysisResult& r) {
    for (const Waterfall& wf : r.waterfalls) {
        if (wf.bars.empty()) continue;
        o << "\nWhat the fixes would give"
          << (wf.device >= 0 ? " (GPU " + std::to_string(wf.device) + ")" : "")
          << ", by the what-if replay; each line includes the ones above:\n";
        const double full = double(std::max<int64_t>(1, wf.measuredNs));
        auto line = [&](const std::string& label, int64_t ns) {
            std::string bar(size_t(std::lround(30.0 * double(ns) / full)), '#');
            o << "    " << label << std::string(label.size() < 44 ? 44 - label.size() : 1, ' ')
              << padLeft(formatDuration(ns), 11) << "  " << pct(double(ns) / full) << "  " << bar
              << "\n";
        };
        line("measured", wf.measuredNs);
        for (const WaterfallBar& b : wf.bars)
            line("+ " + std::string(fixDescription(b.fix)), b.windowNs);
    }
}

void writeTables(std::ostream& o, const model::Trace& t, const AnalysisResult& r) {
    const StatsTables& s = r.stats;
    if (!s.kernels.empty()) {
        o << "\nTop kernels:\n    " << padLeft("total", 11) << padLeft("count", 12)
          << padLeft("mean", 11) << "  name\n";
        for (size_t i = 0; i < s.kernels.size() && i < 8; ++i) {
            const auto& k = s.kernels[i];
            o << "    " << padLeft(formatDuration(k.totalNs), 11)
              << padLeft(formatCount(k.count), 12)
              << padLeft(formatDuration(k.totalNs / int64_t(k.count)), 11) << "  "
              << shortName(t.str(k.name)) << "\n";
        }
    }
    if (!s.operators.empty()) {
        o << "\nTop CPU operators by self time:\n    " << padLeft("self", 11)
          << padLeft("total", 11) << padLeft("count", 12) << padLeft("GPU", 11) << "  name\n";
        for (size_t i = 0; i < s.operators.size() && i < 8; ++i) {
            const auto& k = s.operators[i];
            o << "    " << padLeft(formatDuration(k.selfNs), 11)
              << padLeft(formatDuration(k.totalNs), 11) << padLeft(formatCount(k.count), 12)
              << padLeft(formatDuration(k.gpuNs), 11) << "  " << shortName(t.str(k.name)) << "\n";
        }
    }
    if (!s.collectives.empty()) {
        o << "\nCollectives (kernel time includes waiting for the other ranks; bus bandwidth as "
             "nccl-tests defines it):\n    "
          << pad("type", 15) << padLeft("calls", 8) << padLeft("total", 12) << padLeft("bytes", 12)
          << padLeft("ranks", 7) << padLeft("alg GB/s", 10) << padLeft("bus GB/s", 10)
          << "  algorithm\n";
        for (const CollectiveStat& c : s.collectives) {
            auto gbps = [](double v) {
                char b[32];
                std::snprintf(b, sizeof b, "%.2f", v);
                return v < 0 ? std::string("-") : std::string(b);
            };
            o << "    " << pad(c.type, 15) << padLeft(formatCount(c.count), 8)
              << padLeft(formatDuration(c.totalNs), 12)
              << padLeft(c.sizedCount ? formatBytes(static_cast<uint64_t>(c.bytes))
                                      : std::string("-"),
                         12)
              << padLeft(c.groupSize > 0
                             ? std::to_string(c.groupSize) + (c.groupFromWorld ? "*" : "")
                             : std::string(c.groupSize == 0 ? "mixed" : "-"),
                         7)
              << padLeft(gbps(c.algGbps), 10) << padLeft(gbps(c.busGbps), 10) << "  "
              << (c.algorithms.empty() ? std::string("-") : c.algorithms) << "\n";
        }
        if (std::any_of(s.collectives.begin(), s.collectives.end(),
                        [](const CollectiveStat& c) { return c.groupFromWorld; }))
            o << "    (* no call records its group: the trace's world size)\n";
    }
    if (!s.copies.empty()) {
        o << "\nCopies:\n";
        for (const auto& c : s.copies) {
            char line[200];
            std::snprintf(line, sizeof line, "    %-28s %9llu copies  %10s  %12s  %6.1f GB/s\n",
                          c.kind.c_str(), static_cast<unsigned long long>(c.count),
                          formatBytes(static_cast<uint64_t>(c.bytes)).c_str(),
                          formatDuration(c.totalNs).c_str(), c.gbPerSecond);
            o << line;
        }
    }
}

} // namespace

namespace {
/// The ranks × steps table: each rank's step time per step, the straggler of each step
/// marked with '*'; at most 16 steps and 64 ranks (the JSON has them all).
void writeStepsText(std::ostream& o, const CrossRankResult& r) {
    const size_t cols = std::min<size_t>(r.stepLabels.size(), 16);
    if (cols == 0 || r.cells.empty()) return;
    o << "  Step time per rank and step (* arrived last most often in that step):\n";
    o << "    rank";
    for (size_t c = 0; c < cols; ++c) o << padLeft(r.stepLabels[c], 12);
    o << "\n";
    const size_t rows = std::min<size_t>(r.cells.size(), 64);
    for (size_t i = 0; i < rows; ++i) {
        o << "    " << padLeft(std::to_string(r.ranks[i].rank), 4);
        for (size_t c = 0; c < cols; ++c)
            o << padLeft(formatDuration(r.cells[i][c].stepNs) +
                             (r.stepStraggler[c] == r.ranks[i].rank ? "*" : " "),
                         12);
        o << "\n";
    }
    if (rows < r.cells.size() || cols < r.stepLabels.size())
        o << "    (" << r.cells.size() << " ranks × " << r.stepLabels.size()
          << " steps in all; --ranks --json has every cell)\n";
}
} // namespace

void writeCrossRankText(std::ostream& o, const CrossRankResult& r) {
    o << "Ranks: " << r.ranks.size();
    if (r.stepImbalance > 0)
        o << ", slowest window " << pct(r.stepImbalance) << " longer than the fastest";
    o << "\n";
    const std::vector<std::string> sentences = crossRankSentences(r);
    if (r.collectives > 0) o << "  " << sentences.front() << "\n";
    o << "    rank  " << padLeft("window", 11) << padLeft("GPU busy", 9) << "  "
      << padRight("largest idle cause", 28) << padLeft("in colls", 11) << padLeft("waiting", 11)
      << padLeft("transfer", 11) << padLeft("last", 6)
      << (r.clocksAligned ? padLeft("clock", 11) : "") << "  trace\n";
    for (const RankSummary& s : r.ranks) {
        o << "    " << padLeft(std::to_string(s.rank), 4) << "  "
          << padLeft(formatDuration(s.windowNs), 11) << padLeft(pct(s.utilization), 9) << "  "
          << padRight(std::string(idleCauseName(s.topCause)) + " " + formatDuration(s.topCauseNs),
                      28)
          << padLeft(formatDuration(s.collectiveNs), 11) << padLeft(formatDuration(s.waitNs), 11)
          << padLeft(formatDuration(s.transferNs), 11) << padLeft(std::to_string(s.lastArrivals), 6)
          << (r.clocksAligned ? padLeft(formatDuration(s.clockOffsetNs), 11) : "") << "  "
          << s.label << "\n";
    }
    for (size_t i = r.collectives > 0 ? 1 : 0; i < sentences.size(); ++i)
        o << "  " << sentences[i] << "\n";
    writeStepsText(o, r);
    if (!r.findings.empty()) {
        o << "  Findings across the ranks (saving, share of each rank's step time):\n";
        for (const RankFinding& f : r.findings)
            o << "    " << padRight(std::string(findingKindName(f.kind)), 20) << " on " << f.ranks
              << " of " << r.ranks.size() << " ranks, " << formatPercent(f.minShare)
              << (f.maxShare > f.minShare ? "-" + formatPercent(f.maxShare) + " (most on rank " +
                                                std::to_string(f.worstRank) + ")"
                                          : std::string())
              << "\n";
    }
    for (const auto& n : r.notes) o << "  note: " << n << "\n";
    o << "\n";
}

/// How close to the GPU's peak it ran (docs/analysis.md "Efficiency"): MFU, then busy time
/// by kernel family with the achieved rates and roofline position of the costed work.
void writeEfficiency(std::ostream& o, const AnalysisResult& r, int32_t device) {
    const Efficiency& e = r.efficiency;
    const auto it = std::find_if(e.devices.begin(), e.devices.end(),
                                 [&](const DeviceEfficiency& d) { return d.device == device; });
    if (it == e.devices.end()) return;
    const DeviceEfficiency& d = *it;
    char line[300];
    o << "\n  Efficiency (FLOPs from the operators' input shapes):\n";
    if (!e.shapes) {
        o << "    no input shapes in the trace (record_shapes=True records them): no FLOPs, MFU or "
             "roofline\n";
    } else if (d.mfu >= 0) {
        std::snprintf(line, sizeof line,
                      "    MFU %.1f%%: %s of matrix multiplies, convolutions and attention in %s, "
                      "against %s's %s peak of %.1f TFLOP/s (dtype from the %s)\n",
                      d.mfu * 100, formatFlops(d.modelFlops).c_str(),
                      formatDuration(d.windowNs).c_str(), d.peak->key.c_str(),
                      std::string(precisionName(d.dtype)).c_str(), d.peakTflops,
                      d.dtypeFrom.c_str());
        o << line;
        if (d.upperBound())
            o << "    an upper bound: " << int(std::lround(100 * d.upperBoundFlops / d.modelFlops))
              << "% of these FLOPs are convolutions whose strides the trace does not record "
                 "(counted at "
                 "stride 1)\n";
    } else {
        o << "    MFU unknown: " << d.why << "\n";
    }
    if (!d.gpuNote.empty()) o << "    (" << d.gpuNote << ")\n";
    if (d.achievedTflops >= 0)
        o << "    achieved " << formatFlopRate(d.achievedTflops * 1e12)
          << " in the kernels that did that work\n";
    for (const std::string& n : d.notes) o << "    note: " << n << "\n";
    if (d.families.empty()) return;
    o << "    " << pad("kernel family", 14) << padLeft("kernels", 9) << padLeft("time", 12)
      << padLeft("busy", 8) << padLeft("TFLOP/s", 10) << padLeft("TB/s", 8) << padLeft("FLOP/B", 9)
      << "  bound\n";
    auto num = [](double v, const char* fmt) {
        if (v < 0) return std::string("-");
        char b[32];
        std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
    };
    int64_t busy = 0;
    for (const FamilyEfficiency& f : d.families) busy += f.busyNs;
    for (const FamilyEfficiency& f : d.families)
        o << "    " << pad(f.family, 14) << padLeft(formatCount(f.kernels), 9)
          << padLeft(formatDuration(f.busyNs), 12)
          << padLeft(pct(busy > 0 ? double(f.busyNs) / double(busy) : 0), 8)
          << padLeft(num(f.tflops, "%.2f"), 10) << padLeft(num(f.tbps, "%.3f"), 8)
          << padLeft(num(f.intensity, "%.1f"), 9) << "  " << (f.bound.empty() ? "-" : f.bound)
          << "\n";
}

void writeAnalysisText(std::ostream& o, const model::Trace& t, const AnalysisResult& r, const std::string& path) {
    o << path << "\n";
    o << "window: " << r.window.description << ", " << formatDuration(r.window.length());
    if (r.stepTimes.count > 0) {
        char line[200];
        std::snprintf(line, sizeof line, "; %zu step%s, mean %s (min %s, max %s, cv %.1f%%)",
                      r.stepTimes.count, r.stepTimes.count == 1 ? "" : "s",
                      formatDuration(r.stepTimes.meanNs).c_str(),
                      formatDuration(r.stepTimes.minNs).c_str(),
                      formatDuration(r.stepTimes.maxNs).c_str(), r.stepTimes.cv * 100);
        o << line;
    }
    o << "\n";
    if (r.warmup) {
        const std::string oneOff =
            formatDuration(r.warmup->oneOffNs[0] + r.warmup->oneOffNs[1] + r.warmup->oneOffNs[2]);
        if (r.warmup->wholeWindow)
            o << "warm-up: the whole window (" << oneOff
              << " of GPU idle in one-off set-up, code generation and allocation): no timing "
                 "findings\n";
        else
            o << "warm-up: " << formatDuration(r.warmup->lengthNs()) << " before the window ("
              << oneOff << " of GPU idle in one-off work), left out of the figures and findings\n";
    }
    o << "\n";
    for (const auto& d : r.devices) {
        writeDevice(o, d);
        writeStepBreakdown(o, d);
        writeEfficiency(o, r, d.device);
        o << "\n";
    }
    for (const auto& n : r.notes) o << "note: " << n << "\n";
    writeFindings(o, t, r);
    writeWaterfalls(o, r);
    writeTables(o, t, r);
    if (r.hta.valid) {
        o << "\nHolistic Trace Analysis-compatible (HTA's window and rules):\n";
        o << "    temporal: idle " << formatDuration(r.hta.idleNs) << ", compute " << formatDuration(r.hta.computeNs)
          << ", non-compute " << formatDuration(r.hta.nonComputeNs) << ", span " << formatDuration(r.hta.spanNs) << "\n";
        for (const auto& s : r.hta.idleByStream)
            o << "    stream " << s.stream << " idle: host wait " << formatDuration(s.hostWaitNs) << ", kernel wait "
              << formatDuration(s.kernelWaitNs) << ", other " << formatDuration(s.otherNs) << "\n";
    }
    o << "\n";
}

} // namespace stallscope::cli
