#pragma once
// Shared, precomputed views of a trace used by every part of the analysis.
#include "stallscope/analysis/analysis.h"

#include <vector>

namespace stallscope::analysis::detail {

using model::SliceId;
using model::TrackId;

struct DeviceActivity {
    int32_t device = -1;
    std::vector<uint32_t> work;        // GPU work slices (kernels, copies, memsets), by start
    Intervals busy;                    // merged union of all work
    Intervals kernelBusy;              // merged union of kernels
    std::vector<TrackId> streams;
    TrackId mainLaunchThread;          // the thread that launched most of this device's work
};

class Context {
public:
    Context(const model::Trace& trace, const AnalysisOptions& options);

    const model::Trace& trace;
    const AnalysisOptions& options;
    std::vector<Step> steps;
    std::vector<DeviceActivity> devices;
    Window window;
    /// Per slice: true when it is, or contains, a launch call that started GPU work.
    std::vector<bool> launchesGpu;

    [[nodiscard]] std::string_view name(uint32_t slice) const {
        return trace.str(trace.slices().name[slice]);
    }
    [[nodiscard]] int64_t start(uint32_t s) const { return trace.slices().start[s]; }
    [[nodiscard]] int64_t end(uint32_t s) const { return trace.slices().start[s] + trace.slices().dur[s]; }
    [[nodiscard]] model::EventKind kind(uint32_t s) const { return trace.slices().kind[s]; }
    /// Device of a slice on a GPU row, -1 otherwise.
    [[nodiscard]] int32_t deviceOf(uint32_t slice) const;
    /// The step containing `ns` (by CPU range), or null.
    [[nodiscard]] const Step* stepAt(int64_t ns) const;
    /// Sum of step durations inside the window (the "step time" shares are relative to).
    [[nodiscard]] int64_t windowLength() const { return window.length(); }

private:
    void collectDevices();
    void findSteps();
    void resolveWindow();
    void markLaunchers();
};

/// End of the GPU work (on `device`, or any when -1) launched by calls starting inside
/// [lo, hi]; at least hi.
int64_t gpuEndOfLaunchesIn(const model::Trace& t, int32_t device, int64_t lo, int64_t hi);

} // namespace stallscope::analysis::detail
