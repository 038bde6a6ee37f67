#pragma once
// Two runs of one program compared (docs/analysis.md "Comparing two runs"): did the fix work,
// and what else moved. The step time with its step-to-step spread, idle by cause, findings
// resolved / new / persisting, the work itself aligned (operators by name, input shapes and
// dtypes; kernels by name and launching operator, else by family under the same operator),
// what BEFORE's replay predicted for the fixes AFTER applied, and a differential flame graph.
//
// Windows differ in length (6 steps before, 10 after), so every time and count of the tables
// is per step when both runs have steps, else per window ("per" says which).
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/kernel_catalogue.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stallscope::analysis {

struct StepTimeChange {
    int64_t beforeNs = 0, afterNs = 0; // comparedStepTimeNs
    size_t beforeSteps = 0, afterSteps = 0;
    double beforeStddevNs = 0, afterStddevNs = 0; // step-to-step spread (cv x mean)
    double changePct = 0;
    // Twice the standard error of the difference of the means (Welch): a change smaller
    // than this is within the step-to-step noise. -1 when a side has fewer than 2 steps.
    double noiseNs = -1;
    [[nodiscard]] bool beyondNoise() const {
        return noiseNs >= 0 &&
               double(afterNs > beforeNs ? afterNs - beforeNs : beforeNs - afterNs) > noiseNs;
    }
};

/// One idle cause of a device pair, per step (per window without steps).
struct CauseChange {
    IdleCause cause{};
    int64_t beforeNs = 0, afterNs = 0;
};

struct DeviceChange {
    int32_t beforeDevice = -1, afterDevice = -1; // matched by id, else by order
    std::string beforeName, afterName;
    double beforeUtilization = 0, afterUtilization = 0;
    int64_t beforeIdleNs = 0, afterIdleNs = 0; // per step
    int64_t beforeBusyNs = 0, afterBusyNs = 0; // per step
    std::vector<CauseChange> causes;           // every cause either side has; largest change first
};

enum class FindingStatus : uint8_t { Resolved, New, Persisting };
std::string_view findingStatusName(FindingStatus s); // "resolved"

struct FindingChange {
    std::string id;                // the finding's id (kind and device): BEFORE's, else AFTER's
    std::string beforeId, afterId; // on each side; empty where absent
    std::string title;             // AFTER's when it persists
    FindingStatus status{};
    int64_t beforeSavingNs = -1, afterSavingNs = -1; // -1: absent on that side
    int64_t beforeIdleNs = -1, afterIdleNs = -1;
};

enum class RowChange : uint8_t { Added, Removed, Faster, Slower, Same };
std::string_view rowChangeName(RowChange c); // "faster"

/// One side of an aligned row: the window's totals, and the steps they are over.
struct RowSide {
    uint64_t calls = 0;
    int64_t totalNs = 0; // operators: host inclusive time; kernels: GPU time
    int64_t selfNs = 0;  // operators: host self time; kernels: = totalNs
    int64_t gpuNs =
        0;            // operators: GPU time launched from inside (device total); kernels: = totalNs
    double units = 1; // steps of the window when compared per step, else 1
    model::SliceId example;         // first call (in this side's trace)
    std::vector<std::string> names; // family rows: the kernels merged, by GPU time
    [[nodiscard]] bool present() const { return calls > 0; }
    [[nodiscard]] double perStep(int64_t v) const { return double(v) / units; }
    [[nodiscard]] double perCallNs(bool gpu) const {
        return calls ? double(gpu ? gpuNs : totalNs) / double(calls) : 0;
    }
};

struct AlignedRow {
    std::string name;   // operator or kernel; family rows: "gemm kernels"
    std::string shapes; // operators: "Input Dims" as JSON text, empty when not recorded
    std::string dtypes; // operators: "Input type" as JSON text
    std::string op;     // kernels: the launching operator; empty outside any operator
    KernelFamily family = KernelFamily::Other; // kernels
    bool byFamily = false; // kernels of different names doing the same job, matched by family
    RowSide before, after;
    RowChange change = RowChange::Same;
    bool gpuTimed = false; // operators: compared by GPU time (both launch GPU work)
    /// The compared time of a side: kernels' GPU time, operators' GPU or host time.
    [[nodiscard]] double compared(const RowSide& s) const {
        return s.perStep(gpuTimed ? s.gpuNs : s.totalNs);
    }
    [[nodiscard]] double deltaNs() const { return compared(after) - compared(before); }
};

/// BEFORE's replay of a fix (or of every fix AFTER applied) beside what AFTER measured.
struct Prediction {
    std::vector<std::string> findingIds; // the findings BEFORE said the fix addresses
    FixSet fixes = 0;
    int32_t device = -1;
    int64_t beforeNs = 0;    // BEFORE's step time as measured
    int64_t predictedNs = 0; // as BEFORE's replay predicts it with the fixes
    int64_t afterNs = 0;     // AFTER's step time as measured
};

/// Differential flame graph: GPU time by the CPU stack that launched it, both runs merged by
/// name path, per step. Node 0 is the root.
struct DiffFlameNode {
    std::string name;
    int32_t parent = -1, depth = 0;
    int64_t beforeNs = 0, afterNs = 0; // inclusive, per step
    std::vector<int32_t> children;     // by max(before, after) descending
    bool gpuLeaf = false;              // a kernel, copy or memset
};
struct DiffFlameGraph {
    std::vector<DiffFlameNode> nodes;
    int32_t maxDepth = 0;
    [[nodiscard]] bool empty() const {
        return nodes.empty() || (nodes[0].beforeNs <= 0 && nodes[0].afterNs <= 0);
    }
};

struct RunDiff {
    StepTimeChange step;
    bool perStep = false; // table figures per step (both have steps), else per window
    std::vector<DeviceChange> devices;
    std::vector<FindingChange> findings; // resolved, then new, then persisting
    std::vector<AlignedRow> operators;   // largest |change| first
    std::vector<AlignedRow> kernels;
    std::vector<Prediction> predictions;
    DiffFlameGraph flame;
    std::vector<std::string> notes; // what could not be compared and why
};

struct DiffOptions {
    double changeThreshold = 0.10; // per-call change that makes a row faster/slower
    bool flame = true;
};

/// BEFORE and AFTER compared; `options` must be the ones both were analysed with (the replay
/// runs again on BEFORE for the predictions).
RunDiff diffRuns(const model::Trace& beforeTrace, const AnalysisResult& before,
                 const model::Trace& afterTrace, const AnalysisResult& after,
                 const AnalysisOptions& options, const DiffOptions& diff = {});

} // namespace stallscope::analysis
