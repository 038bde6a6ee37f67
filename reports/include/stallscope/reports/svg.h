#pragma once
// SVG pictures for the reports: a finding's stretch of timeline with its ranges shaded, and
// the idle-cause breakdown of a device. Plain SVG 1.1 (no scripts, no external references,
// no CSS beyond presentation attributes), so they embed in HTML, render with QtSvg for the
// PDF, and stay readable in any browser. Every text from the trace is escaped.
#include "stallscope/reports/report_document.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/analysis/step_breakdown.h"
#include "stallscope/model/trace.h"
#include "stallscope/scene/timeline_index.h"

#include <memory>

namespace stallscope::reports {

struct TimelinePictureOptions {
    int width = 880;
    int maxThreads = 2;      // CPU threads shown (those that launch the finding's GPU work first)
    int maxStreams = 4;      // GPU streams of the finding's device
    int maxDepth = 4;        // nesting lanes per thread
    size_t maxRects = 6000;  // sub-pixel events are merged; this caps the file size
    // The trace's timeline index (lanes per depth), shared by the pictures of one report;
    // built for the picture when null.
    std::shared_ptr<const scene::TimelineIndex> index;
};

/// The finding's largest range with half its length of context on each side: the rows
/// it concerns (launching threads, the device's streams), every finding range in view
/// shaded and labelled, a time axis relative to the analysis window start. Drawn from the
/// timeline scene (stallscope/scene/timeline_scene.h), the draw list the GUI paints.
Picture findingTimelinePicture(const model::Trace& trace, const analysis::AnalysisResult& analysis,
                               const analysis::Finding& finding, const TimelinePictureOptions& options = {});

/// A stacked bar of the device's idle time by cause with the busy share, and a legend.
Picture idleCausePicture(const analysis::DeviceMetrics& device, int width = 880);
/// The what-if waterfall of one device: the window as measured, then after each fix.
Picture waterfallPicture(const analysis::Waterfall& waterfall, int width = 880);
/// The time per step as stacked bars (one per step, the categories of
/// analysis::breakdownCategories() bottom up), the steady steps' mean beside them, a legend.
Picture stepBreakdownPicture(const analysis::StepBreakdown& breakdown, int width = 880);
/// The roofline of one GPU (analysis::rooflineOf): log-log axes, the roof when the GPU's peaks
/// are known, a point per kernel family sized by its busy time.
Picture rooflinePicture(const analysis::DeviceEfficiency& device, int width = 880);

/// The differential flame graph of two runs (analysis/run_diff.h): frames as wide as the mean
/// of their before and after GPU time per step, red where AFTER spends more, blue where less;
/// frames deeper than `maxDepth` are left out (and the legend says so).
Picture diffFlamePicture(const analysis::DiffFlameGraph& graph, int width = 880, int maxDepth = 24);
/// The waterfall of a GPU's idle time before -> after: idle before, each cause's change
/// (red: grew, green: shrank) from the running total, idle after.
Picture idleChangePicture(const analysis::DeviceChange& device, bool perStep, int width = 880);
/// A frame's colour (0xRRGGBB) for its before and after time, shared with the GUI.
uint32_t diffFlameRgb(int64_t beforeNs, int64_t afterNs);
/// "name: 1.2 ms -> 0.8 ms a step (-400 us)".
std::string diffFlameTitle(const analysis::DiffFlameNode& node);

/// The ranks × steps heat map: one cell per rank and step coloured by its step time (or,
/// with `waiting`, by the share of the step spent waiting in collectives for another rank),
/// the step's straggler outlined, a colour scale with its range.
Picture rankHeatmapPicture(const analysis::CrossRankResult& cross, bool waiting, int width = 880);

} // namespace stallscope::reports
