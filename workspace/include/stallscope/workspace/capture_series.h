#pragma once
// Several captures of one worker are a series in time, not ranks. torch.profiler's
// tensorboard_trace_handler writes one file per capture ({worker}.{epoch_ms}.pt.trace.json):
// a folder with four captures of one worker is one rank captured four times. The ranks stay
// what distributedInfo or the worker names say (model::TraceEntry::rank); a rank's captures
// (TraceEntry::span) are its series, in time order, each labelled warm-up or steady from its
// own analysis (capturePhase). Where a folder is summarised per rank (the cross-rank analysis,
// rank summaries, the CLI's detail), each rank is represented by one capture: its latest steady
// one, else its latest (marked warm-up). docs/architecture.md "Captures of one worker".
#include "stallscope/analysis/analysis.h"
#include "stallscope/base/json_writer.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::workspace {

struct AnalysedTrace;

enum class CapturePhase : uint8_t { WarmUp, Steady };
std::string_view capturePhaseName(CapturePhase p); // "warm-up", "steady"

/// The one rule (every front end calls it, none repeats it): a capture is warm-up when its
/// analysis found its whole window to be warm-up (Warmup::wholeWindow), or warm-up that is at
/// least half of the window before warm-up was set apart (Warmup::lengthNs() * 2 >=
/// wholeEndNs - wholeStartNs); else steady, including when no warm-up was found (an explicit
/// window such as `--window all` or a step looks for none: every capture is then steady).
CapturePhase capturePhase(const analysis::AnalysisResult& a);

/// One capture of a rank and the figures that tell the series apart. The figures are of the
/// whole capture (its window before warm-up was set apart), as its timeline shows it;
/// `windowUtilization` is of the analysed window, the figure a rank's summary uses.
struct Capture {
    size_t trace = SIZE_MAX; // index into Workspace::traces (SIZE_MAX: not loaded, a RankSet's)
    int32_t span = 0;        // TraceEntry::span: its position among its worker's captures
    std::string path;        // its file
    std::string tag;         // the file name's capture tag ({epoch_ms}), empty when none
    CapturePhase phase = CapturePhase::Steady;
    int64_t startNs = 0;     // the trace's first event
    int64_t wholeNs = 0;     // the capture's window (before warm-up was set apart)
    int64_t warmupNs = 0;    // its warm-up part, 0 when none was found
    int64_t windowNs = 0;    // the analysed window: the steady part when warm-up was set apart
    size_t steps = 0;        // steps in the whole window (warm-up steps included)
    int64_t stepMeanNs = -1; // their mean (CPU ranges), -1 without steps
    // The busiest GPU's busy share of the whole window (with warm-up set apart: its steps'
    // busy time over their tiles; -1 without steps then, or without a GPU).
    double utilization = -1;
    double windowUtilization = -1; // of the analysed window; -1 without a GPU
};

/// The figures of one analysed capture (trace, span, path and tag are the caller's).
Capture describeCapture(const model::Trace& trace, const analysis::AnalysisResult& a);

/// One rank and its captures in time order.
struct RankSeries {
    int32_t rank = -1;
    std::string label;             // the worker's name
    std::vector<Capture> captures; // in time order (span, then start)
    size_t representative = 0;     // index into captures: the latest steady, else the latest

    [[nodiscard]] const Capture& summarisedBy() const { return captures[representative]; }
    /// True when every capture is warm-up (the representative is then a warm-up capture).
    [[nodiscard]] bool onlyWarmUp() const {
        return captures[representative].phase == CapturePhase::WarmUp;
    }
    [[nodiscard]] size_t count(CapturePhase p) const;
};

/// The index of the capture that represents a series: the latest steady one, else the latest.
size_t representativeCapture(const std::vector<Capture>& captures);

/// The series of analysed traces (a workspace's, in any order): one per rank, by rank; the
/// captures of a rank in time order. Traces without an analysis are left out.
std::vector<RankSeries> rankSeries(const std::vector<AnalysedTrace>& traces);

/// True when some rank has more than one capture.
bool hasSeries(const std::vector<RankSeries>& series);

/// The series as JSON: [{"rank", "label", "summarised_by" (index into captures), "captures":
/// [{"index", "tag", "path", "phase", "start_ns", "whole_ns", "warmup_ns", "window_ns",
/// "steps", "step_mean_ns", "utilization", "window_utilization" (null when unknown)}]}]
/// (docs/analysis-json.md "Captures").
void writeRankSeriesJson(base::JsonWriter& w, const std::vector<RankSeries>& series);

} // namespace stallscope::workspace
