// The captures of each rank as text: see series_text.h.
#include "series_text.h"

#include "stallscope/base/text_format.h"

#include <cstdio>

namespace stallscope::cli {

using workspace::Capture;
using workspace::CapturePhase;
using workspace::RankSeries;

namespace {

std::string padLeft(const std::string& s, size_t n) {
    return s.size() >= n ? s : std::string(n - s.size(), ' ') + s;
}
std::string padRight(const std::string& s, size_t n) {
    return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

/// "#1, #2" (1-based, as the table numbers them).
std::string numbers(const RankSeries& s, CapturePhase p) {
    std::string out;
    for (size_t i = 0; i < s.captures.size(); ++i)
        if (s.captures[i].phase == p) out += (out.empty() ? "#" : ", #") + std::to_string(i + 1);
    return out;
}

std::string counted(size_t n, const char* what, const std::string& which) {
    return std::to_string(n) + " " + what + (which.empty() ? "" : " (" + which + ")");
}

void writeSeries(std::ostream& o, const RankSeries& s) {
    const size_t warm = s.count(CapturePhase::WarmUp), steady = s.count(CapturePhase::Steady);
    const std::string rep = "#" + std::to_string(s.representative + 1);
    o << "  rank " << s.rank << " · " << s.label << ": " << s.captures.size() << " captures, "
      << counted(warm, "warm-up", numbers(s, CapturePhase::WarmUp)) << ", "
      << counted(steady, "steady", numbers(s, CapturePhase::Steady)) << "; summarised by "
      << (s.onlyWarmUp() ? rep + ", the latest (every capture is warm-up)"
                         : rep + ", the latest steady one")
      << "\n";
    o << "        #  " << padRight("capture", 14) << padLeft("start", 12) << "  "
      << padRight("phase", 8) << padLeft("window", 12) << padLeft("warm-up", 12)
      << padLeft("steps", 7) << padLeft("step time", 12) << padLeft("GPU busy", 10) << "\n";
    const int64_t first = s.captures.front().startNs;
    for (size_t i = 0; i < s.captures.size(); ++i) {
        const Capture& c = s.captures[i];
        char busy[32] = "-";
        if (c.utilization >= 0) std::snprintf(busy, sizeof busy, "%.1f%%", c.utilization * 100);
        o << (i == s.representative ? "    *" : "     ") << padLeft(std::to_string(i + 1), 4)
          << "  " << padRight(c.tag.empty() ? "-" : c.tag, 14)
          << padLeft(i == 0 ? "0" : "+" + base::formatDuration(c.startNs - first), 12) << "  "
          << padRight(std::string(workspace::capturePhaseName(c.phase)), 8)
          << padLeft(base::formatDuration(c.wholeNs), 12)
          << padLeft(c.warmupNs > 0 ? base::formatDuration(c.warmupNs) : "-", 12)
          << padLeft(std::to_string(c.steps), 7)
          << padLeft(c.stepMeanNs >= 0 ? base::formatDuration(c.stepMeanNs) : "-", 12)
          << padLeft(busy, 10) << "\n";
    }
}

} // namespace

void writeCaptureSeriesText(std::ostream& o, const std::vector<RankSeries>& series) {
    if (!workspace::hasSeries(series)) return;
    o << "Captures: several of one worker are a series in time of its rank. A capture is "
         "warm-up when\n"
         "  warm-up (set-up, code generation, allocator growth) is its whole window or at "
         "least half of it.\n"
         "  The figures are of each whole capture; each rank is summarised by its latest "
         "steady capture (*).\n";
    std::string single;
    for (const RankSeries& s : series) {
        if (s.captures.size() > 1)
            writeSeries(o, s);
        else
            single += (single.empty() ? "" : ", ") + std::to_string(s.rank);
    }
    if (!single.empty())
        o << "  one capture each: rank" << (single.find(',') != std::string::npos ? "s " : " ")
          << single << "\n";
    o << "\n";
}

} // namespace stallscope::cli
