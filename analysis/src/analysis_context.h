#pragma once
// Shared, precomputed views of a trace used by every part of the analysis.
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/call_catalogue.h"
#include "stream_waits.h"

#include "stallscope/model/graph_replays.h"

#include <algorithm>
#include <optional>
#include <span>
#include <vector>

namespace stallscope::analysis::detail {

using model::SliceId;
using model::TrackId;

/// Name rules (name_rules.h) and the kernel catalogue (kernel_catalogue.h) evaluated once
/// per distinct name.
enum NameClass : uint32_t {
    kNcDataLoader = 1u << 0,
    kNcInputPrep = 1u << 1,
    kNcOptimizer = 1u << 2,
    kNcIo = 1u << 3,
    kNcSync = 1u << 4,
    kNcSyncCopy = 1u << 5,
    kNcCopy = 1u << 6,
    kNcLaunch = 1u << 7,
    kNcComm = 1u << 8,        // catalogue family comm
    kNcGemm = 1u << 9,        // a matrix multiply: gemm, grouped_gemm, conv
    kNcTensorCore = 1u << 10, // on Tensor/Matrix Cores (named, or its precision says so)
    kNcProfilerStep = 1u << 11,
    kNcFp32Matmul = 1u << 12,     // a matrix multiply whose name says fp32, not on Tensor Cores
    kNcPrecisionNamed = 1u << 13, // the catalogue knows its precision from the name
    kNcCompile = 1u << 14,        // a torch.compile phase (call family "compile")
    kNcCompiledRegion = 1u << 16, // "Torch-Compiled Region ..."
    kNcCaptureBegin = 1u << 17,
    kNcCaptureEnd = 1u << 18,
    kNcGraphLaunch = 1u << 19, // cudaGraphLaunch / hipGraphLaunch / cuGraphLaunch
    // Call families (call_catalogue.h) beyond launch, copy and sync:
    kNcAlloc = 1u << 20,         // allocation / free
    kNcSetupCall = 1u << 21,     // resource creation, module loading, graph capture/instantiate
    kNcJit = 1u << 22,           // run-time code generation or tuning, torch.compile included
    kNcStream = 1u << 23,        // event record, stream wait: ordering, no host wait
    kNcQuery = 1u << 24,         // attribute / error / occupancy / event queries
    kNcLibraryKernel = 1u << 25, // a vendor library's kernel (kernel catalogue "library")
    kNcBackward = 1u << 26,      // a backward-pass event (autograd)
    kNcKnown = 1u << 15,
};

struct DeviceActivity {
    int32_t device = -1;
    std::vector<uint32_t> work;        // GPU work slices (kernels, copies, memsets), by start
    std::vector<SliceId> launch;       // the launch call of each work slice (same order)
    Intervals busy;                    // merged union of all work
    Intervals kernelBusy;              // merged union of kernels
    std::vector<TrackId> streams;
    TrackId mainLaunchThread;          // the thread that launched most of this device's work
};

/// Appends `iv` to merged intervals, for input in start order: what mergeIntervals() gives
/// for that input (empty intervals dropped, overlapping or touching ones joined), without
/// holding the input.
inline void appendMerged(Intervals& merged, const Interval& iv) {
    if (iv.end <= iv.start) return;
    if (!merged.empty() && iv.start <= merged.back().end)
        merged.back().end = std::max(merged.back().end, iv.end);
    else
        merged.push_back(iv);
}

/// A correlation index of the trace (launch side or GPU side) looked up by correlation in
/// a table when the correlations are dense (as Kineto numbers them), by binary search
/// otherwise: what Trace::launchOf() and Trace::gpuWorkOf() return, without the search.
class ByCorrelation {
public:
    void build(const std::vector<model::CorrelationEntry>& index);
    /// The entries with correlation `corr` (empty for none or kNoCorrelation).
    [[nodiscard]] std::span<const model::CorrelationEntry> find(uint32_t corr) const;

private:
    const std::vector<model::CorrelationEntry>* m_index = nullptr;
    std::vector<uint32_t> m_first; // by correlation: position of its first entry; empty when sparse
};

class Context {
public:
    Context(const model::Trace& trace, const AnalysisOptions& options);

    const model::Trace& trace;
    const AnalysisOptions& options;
    std::vector<Step> steps;
    std::vector<DeviceActivity> devices;
    Window window;
    /// Without ProfilerStep ranges: the user annotation whose instances are the iterations
    /// (digits as #, bracketed parts as ...), empty when the steps are ProfilerSteps or none.
    std::string iterationName;
    /// A step ran past Kineto's "Record Window End" mark and was cut there.
    bool clippedAtRecordEnd = false;
    /// Per slice: true when it is, or contains, a launch call that started GPU work.
    std::vector<bool> launchesGpu;
    /// Kineto's resolved stream waits (stream_waits.h), by waiting stream and time.
    std::vector<StreamWait> streamWaits;
    /// The CUDA/HIP graph replays (model/graph_replays.h), when the trace has graph launches.
    std::vector<model::GraphReplay> graphReplays;

    [[nodiscard]] std::string_view name(uint32_t slice) const {
        return trace.str(trace.slices().name[slice]);
    }
    /// Name classes of a slice's name (evaluated once per distinct name, when the context
    /// is built: a table lookup here, and the context stays read-only for threads).
    [[nodiscard]] uint32_t nameClass(uint32_t slice) const {
        return m_nameClass[trace.slices().name[slice].index()];
    }
    [[nodiscard]] bool is(uint32_t slice, NameClass c) const { return (nameClass(slice) & c) != 0; }
    /// The call family of a slice's name (call_catalogue.h).
    [[nodiscard]] CallFamily callFamily(uint32_t slice) const {
        return CallFamily(m_callFamily[trace.slices().name[slice].index()]);
    }
    /// A call that took kSlowFirstUseNs or more the first time (findSlowFirstUses()).
    [[nodiscard]] bool isSlowFirstUse(uint32_t slice) const {
        return std::binary_search(slowFirstUses.begin(), slowFirstUses.end(), slice);
    }
    static constexpr int64_t kSlowFirstUseNs = 1'000'000;
    /// Slices, by index: the first launch of a kernel (by name) or first call of a query or
    /// unknown runtime call that took kSlowFirstUseNs or more (module loading, context
    /// creation, library set-up on first use).
    std::vector<uint32_t> slowFirstUses;
    /// Whether any slice's name is of class `c` (the rare classes: compile phases, compiled
    /// regions, capture calls), so the detectors that need them skip their pass over the
    /// slices on the usual trace.
    [[nodiscard]] bool anyNamed(NameClass c) const;
    /// Trace::launchOf() and Trace::gpuWorkOf() of slice `s`, through the tables.
    [[nodiscard]] SliceId launchOf(uint32_t s) const {
        const auto e = m_launches.find(trace.slices().correlation[s]);
        return e.empty() ? SliceId() : e.front().slice;
    }
    [[nodiscard]] std::span<const model::CorrelationEntry> gpuWorkOf(uint32_t s) const {
        return m_gpuWork.find(trace.slices().correlation[s]);
    }
    /// The launch-side entries with correlation `corr`.
    [[nodiscard]] std::span<const model::CorrelationEntry> launchesWith(uint32_t corr) const {
        return m_launches.find(corr);
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
    std::vector<uint32_t> m_nameClass; // by StringId; 0 for names no slice has
    std::vector<uint8_t> m_callFamily; // by StringId: a CallFamily
    uint32_t m_namedClasses = 0;       // the classes of all slice names together
    ByCorrelation m_launches, m_gpuWork;
    [[nodiscard]] int64_t gpuEndOfLaunchesIn(int64_t lo, int64_t hi) const;
    void classifyNames();
    void findSlowFirstUses();
    void collectDevices();
    void findSteps();
    void findIterations();
    void resolveWindow();
    void markLaunchers();
};

} // namespace stallscope::analysis::detail
