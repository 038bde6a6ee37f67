#pragma once
// Time per step by what the GPU and the host did: the TensorBoard profiler plugin's Overview
// ("step time breakdown"), from the per-step role breakdown analyze() measures
// (StepMetrics::roles, docs/metrics.md "Time per step"). Each instant of a step is charged to
// one category, by priority: kernel > memcpy > memset > communication > runtime (launch and
// other runtime calls) > data loading > CPU (operators) > other (nothing traced), so the
// categories of a step add up to its length. The CLI text, the reports and the GUI's Overview
// all read this one table.
#include "stallscope/analysis/analysis.h"

#include <array>
#include <string_view>
#include <vector>

namespace stallscope::analysis {

struct BreakdownCategory {
    std::string_view key;        // "kernel": the JSON's roles.<key>_ns
    std::string_view label;      // "Kernel"
    std::string_view shortLabel; // "kern": a narrow table column
    bool gpuBusy;                // the GPU works in it (kernel, memcpy, memset, communication)
    int64_t RoleBreakdown::*field;
};
inline constexpr size_t kBreakdownCategories = 8;
/// In priority order (the stacking order of the charts, bottom up).
const std::array<BreakdownCategory, kBreakdownCategories>& breakdownCategories();

struct StepBreakdownRow {
    int64_t number = -1;
    bool warmup = false;
    int64_t startNs = 0, endNs = 0; // the step's tile: its start to the next step's start
    std::array<int64_t, kBreakdownCategories> ns{};
    std::array<int64_t, kIdleCauseCount> idleByCause{};
    [[nodiscard]] int64_t lengthNs() const { return endNs - startNs; }
};

struct StepBreakdown {
    int32_t device = -1;
    std::vector<StepBreakdownRow> steps; // in time order
    /// The mean over the steady steps (all steps when every one is warm-up), and their count.
    std::array<int64_t, kBreakdownCategories> meanNs{};
    int64_t meanStepNs = 0;
    size_t meanOver = 0;
    [[nodiscard]] bool empty() const { return steps.empty(); }
};

/// The breakdown of one device's steps inside the window (a step outside it, whose part of
/// the window is empty, is left out: a range or one step analysed alone shows its own steps);
/// empty when the window has no steps.
StepBreakdown stepBreakdown(const DeviceMetrics& device);

} // namespace stallscope::analysis
