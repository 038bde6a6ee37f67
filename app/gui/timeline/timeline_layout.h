#pragma once
// The rows of the timeline: per process a header, then its threads/streams (one lane per
// nesting depth) and counter tracks. The lanes and their queries are the scene's
// TimelineIndex (stallscope/scene/timeline_index.h).
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/intervals.h"
#include "stallscope/model/trace.h"
#include "stallscope/scene/timeline_index.h"

#include <QString>

#include <algorithm>
#include <memory>
#include <vector>

namespace stallscope::gui {

enum class RowKind { Group, Slices, Counter };

// The per-trace index (lanes, counters) lives in the Qt-free scene library, shared with the
// report pictures.
using scene::CounterKind;
using scene::CounterSeries;
using scene::gallop;
using scene::TimelineIndex;

struct TimelineRow {
    RowKind kind = RowKind::Slices;
    int group = -1;                  // index into groups()
    model::TrackId track;            // Slices rows
    int lanes = 1;                   // Slices rows: nesting depths shown
    int allLanes = 1;                // Slices rows: nesting depths there are (lanes <= allLanes;
                                     // deeper slices are drawn in the last lane shown)
    model::TrackId laneTrack;        // Slices rows: the lane set drawn (track, or its
                                     // operators-only view: TimelineIndex::operatorsOnly)
    int counter = -1;                // Counter rows: index into counters()
    QString label, sublabel;
    int y = 0, height = 0;           // after relayout()
    bool visible = true;
    bool hidden = false; // hidden by the user (the row's context menu)
};

struct TimelineGroup {
    QString label;
    model::ProcessId process;
    int32_t device = -1;             // GPU device, or -1
    bool collapsed = false;
};

class TimelineLayout {
public:
    static constexpr int kLaneHeight = 18;
    static constexpr int kGroupHeight = 24;
    static constexpr int kCounterHeight = 40;
    static constexpr int kMaxLanes = TimelineIndex::kMaxLanes;
    /// A CPU thread opens with at most this many levels, so deep Python stacks do not push the
    /// GPU rows below the fold; a click on the thread's name shows all of them (or folds back).
    static constexpr int kOpenCpuLanes = 8;

    TimelineLayout() = default;
    /// Builds rows for `trace`; `index` is built here when not given (see TimelineIndex).
    void build(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
               std::shared_ptr<const TimelineIndex> index = nullptr);
    /// Recomputes row positions after a group was collapsed or expanded.
    void relayout();
    void setCollapsed(int group, bool collapsed);
    /// Shows all of row `row`'s nesting levels, or folds it back to kOpenCpuLanes.
    void setAllLanes(int row, bool all);
    /// Shows row `row` (a thread with Python frames) as its operators alone, or as all of its
    /// slices; false when the row has no Python frames to leave out.
    bool setOperatorsOnly(int row, bool on);
    [[nodiscard]] bool canShowOperatorsOnly(int row) const;
    /// Every thread with Python frames as its operators alone (or all back); the rows changed.
    int setAllOperatorsOnly(bool on);
    /// Hides a thread, stream or counter row (not a group header); showHiddenRows() brings
    /// them all back.
    void hideRow(int row);
    void showHiddenRows();
    [[nodiscard]] int hiddenRows() const;
    /// Moves group `group` (its header and rows) `delta` groups up (< 0) or down, or to the
    /// top (pinGroup); the other groups keep their order. Returns each old row's new index.
    std::vector<int> moveGroup(int group, int delta);
    std::vector<int> pinGroup(int group);
    /// Moves a thread, stream or counter row `delta` rows up (< 0) or down inside its group
    /// (a header is not passed). Returns each old row's new index.
    std::vector<int> moveRow(int row, int delta);
    /// The groups in display order.
    [[nodiscard]] std::vector<int> groupOrder() const;

    [[nodiscard]] const model::Trace* trace() const { return m_trace.get(); }
    [[nodiscard]] const std::shared_ptr<const model::Trace>& sharedTrace() const { return m_trace; }
    [[nodiscard]] const std::shared_ptr<const TimelineIndex>& index() const { return m_index; }
    [[nodiscard]] const analysis::AnalysisResult* analysis() const { return m_analysis.get(); }
    [[nodiscard]] const std::vector<TimelineRow>& rows() const { return m_rows; }
    [[nodiscard]] const std::vector<TimelineGroup>& groups() const { return m_groups; }
    [[nodiscard]] const std::vector<CounterSeries>& counters() const { return m_index ? m_index->counters : m_noCounters; }
    [[nodiscard]] int totalHeight() const { return m_totalHeight; }
    /// Slices of `track` at nesting `depth`, sorted by start (indices into the slice table).
    [[nodiscard]] const std::vector<uint32_t>& lane(model::TrackId track, int depth) const;
    /// TimelineIndex::seek and firstVisible on this layout's trace.
    [[nodiscard]] size_t seek(model::TrackId track, int depth, size_t from, int64_t t) const;
    [[nodiscard]] size_t firstVisible(model::TrackId track, int depth, int64_t t) const;
    /// Row index at content y (after relayout), or -1.
    [[nodiscard]] int rowAt(int y) const;
    /// First visible row of `track`, or -1.
    [[nodiscard]] int rowOfTrack(model::TrackId track) const;
    /// Rows of a GPU device's streams and of the threads that launch its work inside
    /// [lo, hi) (scene::launchingThreads: the rule the report pictures use).
    [[nodiscard]] std::vector<int> rowsForDevice(int32_t device, int64_t lo = model::kMinNs,
                                                 int64_t hi = model::kMaxNs) const;
    [[nodiscard]] int64_t startNs() const { return m_startNs; }
    [[nodiscard]] int64_t endNs() const { return m_endNs; }

private:

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    std::vector<TimelineRow> m_rows;
    std::vector<TimelineGroup> m_groups;
    std::shared_ptr<const TimelineIndex> m_index;
    std::vector<CounterSeries> m_noCounters;
    int m_totalHeight = 0;
    int64_t m_startNs = 0, m_endNs = 0;
};

} // namespace stallscope::gui
