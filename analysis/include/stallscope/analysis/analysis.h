#pragma once
// The analysis engine: where GPU time goes in a window, why the GPU is idle (every idle
// nanosecond charged to one cause) and what to change (findings). Definitions are in
// docs/analysis.md; the entry point is analyze().
#include "stallscope/analysis/efficiency.h"
#include "stallscope/model/intervals.h"
#include "stallscope/model/trace.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stallscope::analysis {

// The interval maths is the model's (scene and the GUI use it without the analysis).
using model::clip;
using model::complement;
using model::gpuBusyIntervals;
using model::intersect;
using model::Interval;
using model::Intervals;
using model::lengthWithin;
using model::mergeIntervals;
using model::subtract;
using model::totalLength;
using model::unite;

// ---------------------------------------------------------------- options

enum class WindowKind { Steps, All, Hta, Step, Range };

struct WindowSpec {
    WindowKind kind = WindowKind::Steps;
    int64_t step = -1;                 // WindowKind::Step: the N of ProfilerStep#N
    int64_t startNs = 0, endNs = 0;    // WindowKind::Range
    // WindowKind::Steps: the window starts no earlier than this (analyze() sets it past the
    // warm-up it found; INT64_MIN: from the first step, or the first GPU work).
    int64_t fromNs = INT64_MIN;
};

/// Detector thresholds (../shared/spec/analysis.md defaults). Shares are fractions of the window.
struct Thresholds {
    double dataLoadingMinShare = 0.05;
    double allocatorMinShare = 0.05;   // allocation/free idle that makes an allocator_churn finding
    double loggingMinShare = 0.03;     // below: logging every N steps, as the fix advises
    double cpuDispatchMinShare = 0.05; // launch/CPU/Python idle that makes a cpu_dispatch finding
    // Launch calls (launches, async copies, event records, stream waits) at most this far
    // apart make a launch-bound stretch: an operator's time between them is dispatch
    // (launch_overhead); between calls further apart it is the operator's CPU work.
    int64_t launchStretchMaxGapNs = 500'000;
    int64_t syncCopyMinBytes = 64 * 1024;
    int launchBoundMinKernels = 50;
    int64_t launchBoundMinRegionNs = 1'000'000;
    double launchBoundMaxBusy = 0.60;
    int64_t smallBatchMedianKernelNs = 20'000;
    double smallBatchMaxBlocksPerSm = 1.0;
    double noTensorCoresMinGemmShare = 0.10;
    double fusionMinShare = 0.05;    // chains of memory-bound kernels, of GPU busy time
    double paddingMinShare = 0.05;   // unaligned 16/8-bit GEMMs' kernels, of GPU busy time
    double attentionMinShare = 0.02; // unfused attention's kernels, of GPU busy time
    double lightModelMaxGflopPerStep =
        10.0; // matrix-multiply work per step below which the model is light
    double commExposedMinShare = 0.10;
    double memoryPressureMinReserved = 0.90;
    double lowUtilizationMax = 0.50;
    double compilationMinShare = 0.05;
    double longStepFactor = 1.5;
    double severityHigh = 0.10, severityMedium = 0.03, severityNote = 0.01;
};

struct AnalysisOptions {
    WindowSpec window;
    int32_t device = -1;               // analyse one device only; -1 = all
    Thresholds thresholds;
    int64_t utilizationBucketNs = 1'000'000;
    int64_t htaKernelWaitNs = 30'000;  // HTA's consecutive_kernel_delay
    /// The default (Steps) window leaves out leading warm-up (docs/analysis.md "Warm-up"):
    /// analyze() finds it, then analyses the steady part. False: the window as it is.
    bool excludeWarmup = true;
    /// Checked between the analysis's stages: when set, analyze() stops early and returns a
    /// result noted "cancelled" that the caller is expected to discard.
    const std::atomic<bool>* cancel = nullptr;
};

// ---------------------------------------------------------------- window and steps

struct Step {
    int64_t number = -1;
    model::SliceId slice;
    int64_t startNs = 0, endNs = 0;    // CPU range of ProfilerStep#N
    int64_t gpuEndNs = 0;              // end of the GPU work launched inside it
    // Without ProfilerStep ranges, a serving loop's iterations (user annotations such as
    // "step[DECODE bs=32]") are the steps: the annotation's own name; empty for ProfilerStep.
    std::string label;
    bool warmup = false; // a warm-up step, outside the steady window (Warmup)
};

/// Step i's time (docs/analysis.md "Step time"): from its start to the next step's start; the
/// last step to the later of its own end and `windowEndNs` (its GPU work's end in the steps
/// window). The one step length of the CLI, the GUI's Step box and Overview, the reports and
/// the ranks; the device metrics measure each step on this span clipped to the window.
Interval stepSpan(const std::vector<Step>& steps, size_t i, int64_t windowEndNs);

struct Window {
    WindowKind kind = WindowKind::Steps;
    int64_t startNs = 0, endNs = 0;
    std::string description;           // "ProfilerStep#10..#14 and their GPU work"
    [[nodiscard]] int64_t length() const { return endNs - startNs; }
};

// ---------------------------------------------------------------- idle causes

enum class IdleCause : uint8_t {
    DataLoading,
    BlockingCopy,
    HostSync,
    LaunchOverhead,
    OptimizerCpu,
    IoLoggingCheckpoint,
    CpuCompute,
    HostUntraced,
    GpuDependency,
    Allocator, // inside allocation/free calls (the caching allocator's misses, empty_cache)
    Setup,     // one-off set-up: streams/events/handles created, modules loaded, first use
    Jit,       // code generated or tuned at run time: torch.compile, TorchScript fusion, NVRTC
    Count
};
constexpr size_t kIdleCauseCount = static_cast<size_t>(IdleCause::Count);
std::string_view idleCauseName(IdleCause c);          // "data_loading"
std::string_view idleCauseDescription(IdleCause c);   // plain words

struct IdleGap {
    int64_t startNs = 0, endNs = 0;
    IdleCause dominant = IdleCause::HostUntraced;
    model::SliceId endingWork;         // GPU work that ends the gap (invalid at the window end)
    model::SliceId launch;             // its launch call
};

struct CausePortion {
    Interval gap;                      // the idle gap
    int64_t ns = 0;                    // the part of it charged to the cause
};

struct CauseTotals {
    int64_t ns = 0;
    uint64_t gaps = 0;                 // gaps with any time charged to this cause
    std::vector<CausePortion> largest; // up to 5, largest portion first
};

struct IdleBreakdown {
    int64_t idleNs = 0;
    std::array<CauseTotals, kIdleCauseCount> causes{};
    std::vector<IdleGap> gaps;
    /// What the launch threads ran while the GPU waited: name -> exclusive ns, by cause.
    std::array<std::map<model::StringId, int64_t>, kIdleCauseCount> waitedFor;
    /// Time charged to each cause, as intervals (for finding ranges), merged.
    std::array<Intervals, kIdleCauseCount> intervals;
    [[nodiscard]] int64_t explainedNs() const {
        return idleNs - causes[static_cast<size_t>(IdleCause::HostUntraced)].ns;
    }
};

// ---------------------------------------------------------------- warm-up

/// Leading warm-up (docs/analysis.md "Warm-up"): leading steps, or without steps a leading
/// stretch, whose GPU idle time is mostly one-off work — set-up (streams, events, handles,
/// modules, first use of a kernel or call), run-time code generation (torch.compile,
/// TorchScript fusion, NVRTC) and allocator growth (allocations that stop later). It is
/// context for the window, not a property of the step: analyze() reports it and analyses the
/// steady part after it.
struct Warmup {
    struct Calls {
        std::string name;
        IdleCause cause = IdleCause::Setup; // setup, jit or allocator
        uint64_t count = 0;                 // calls of this name starting inside the warm-up
        int64_t ns = 0;                     // their total duration
    };
    int32_t device = -1;                      // the device whose idle time shows it
    int64_t startNs = 0, endNs = 0;           // the warm-up part of the window
    int64_t wholeStartNs = 0, wholeEndNs = 0; // the window before warm-up was set apart
    std::string wholeDescription;             // and its description
    std::vector<int64_t> steps;               // the warm-up steps' numbers; empty without steps
    bool wholeWindow = false;                 // no steady part left: the findings are about warm-up
    std::array<int64_t, 3> oneOffNs{};        // GPU idle inside it charged to setup, jit, allocator
                                              // (the attribution over the whole window)
    std::vector<Calls> calls; // one-off calls inside it, longest total first (up to 8)
    [[nodiscard]] int64_t lengthNs() const { return endNs - startNs; }
};

// ---------------------------------------------------------------- metrics

struct RoleBreakdown {  // priority Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CpuExec > Other
    int64_t kernel = 0, memcpy = 0, memset = 0, communication = 0, runtime = 0, dataLoader = 0,
            cpuExec = 0, other = 0;
};

struct StepMetrics {
    int64_t number = -1;
    bool warmup = false; // a warm-up step: measured on the whole window, not the steady one
    int64_t startNs = 0, endNs = 0;
    int64_t busyNs = 0, kernelBusyNs = 0;
    double estSmEfficiency = -1, estAchievedOccupancy = -1;
    RoleBreakdown roles;
    std::array<int64_t, kIdleCauseCount> idleByCause{};
};

struct StreamQueue {
    int64_t stream = 0;
    double meanDepth = 0;              // time-weighted launched-but-not-started work
    uint64_t launched = 0;
};

/// A GPU's launches as Holistic Trace Analysis' get_cuda_kernel_launch_stats and its queue
/// counters see them (docs/analysis.md "Launch statistics"): each kernel, copy and memset
/// starting in the window, with the runtime call that launched it.
struct LaunchStats {
    uint64_t items = 0;             // with a launch call
    uint64_t shorterThanLaunch = 0; // ran shorter than the call that launched them
    uint64_t slowCalls = 0;         // launch calls longer than 50 us (HTA's runtime_cutoff)
    uint64_t delayOutliers = 0; // started > 100 us after their call returned (launch_delay_cutoff)
    int64_t callP50Ns = 0, callP95Ns = 0;   // launch call durations
    int64_t delayP50Ns = 0, delayP95Ns = 0; // GPU start - call end (0 when it started before)
    uint32_t maxQueue = 0;                  // the most items a stream held launched but not started
    int64_t fullQueueNs = 0;                // time a stream held >= 1024 (the launch queue's limit)
};
/// The statistics in words, two lines ("launches: ...", "launch delay ..."), shared by the
/// CLI, the reports and the GUI; none without launches.
std::vector<std::string> launchStatsLines(const LaunchStats& l);

struct DeviceMetrics {
    int32_t device = -1;
    std::string name;
    int64_t windowNs = 0, busyNs = 0, kernelBusyNs = 0, idleNs = 0;
    double utilization = 0, kernelUtilization = 0;
    double estSmEfficiency = -1;       // TensorBoard plugin definition; -1 when no data
    double estAchievedOccupancy = -1;  // duration-weighted, %; -1 when no data
    int64_t commNs = 0, commOverlapNs = 0;
    std::vector<StepMetrics> steps;
    std::vector<StreamQueue> queues;
    LaunchStats launches;
    int64_t utilizationBucketNs = 0;        // the option, widened to keep at most 100 000 buckets
    std::vector<double> utilizationSeries;  // per bucket from the window start
    IdleBreakdown idle;
    RoleBreakdown roles;               // over the window
};

struct StepTimeStats {
    size_t count = 0;
    int64_t meanNs = 0, minNs = 0, maxNs = 0;
    double cv = 0;                     // stddev / mean
};

// ---------------------------------------------------------------- statistics tables

struct KernelStat {
    model::StringId name;
    uint64_t count = 0;
    int64_t totalNs = 0, minNs = 0, maxNs = 0;
    double meanBlocksPerSm = -1, meanOccupancy = -1;  // duration-weighted; -1 when absent
    bool tensorCores = false, communication = false, gemmOrConv = false;
    model::SliceId example;
};

struct OperatorStat {
    model::StringId name;
    uint64_t count = 0;
    int64_t totalNs = 0, selfNs = 0;   // inclusive / exclusive CPU time
    int64_t gpuNs = 0;                 // GPU work launched from inside it (any depth): device total
    int64_t gpuSelfNs = 0; // GPU work it launched itself (no operator in between): device self
    model::SliceId example;
};

/// Kernels by the operator that launched them: the innermost CPU operator around the
/// launch call (the TensorBoard plugin's "Kernel by operator" view).
struct KernelOperatorStat {
    model::StringId op; // invalid: launched outside any operator
    model::StringId kernel;
    uint64_t count = 0;
    int64_t totalNs = 0, minNs = 0, maxNs = 0;
    model::SliceId example;
};

/// Collective communication kernels by collective type (docs/analysis.md "Collectives").
/// Sizes and group sizes come from the kernel's NCCL arguments, else from the `nccl:*`
/// range or `record_param_comms` operator around its launch; bandwidths as nccl-tests
/// defines them (github.com/NVIDIA/nccl-tests doc/PERFORMANCE.md): algorithm bandwidth =
/// bytes / time, bus bandwidth = algorithm bandwidth x the type's factor for the group.
struct CollectiveStat {
    std::string type;       // "allreduce", "alltoall", ...; "unknown" when nothing says
    std::string algorithms; // from the kernel names: "RING LL, TREE LL128"; may be empty
    std::string dtype;      // "Float"; "mixed" when calls differ; empty when unknown
    uint64_t count = 0;
    int64_t totalNs = 0;     // kernel time
    uint64_t sizedCount = 0; // calls whose message size is known
    int64_t sizedNs = 0;     // kernel time of those calls
    int64_t bytes = 0;       // sum of their message sizes (nccl-tests' S)
    int64_t minBytes = 0, maxBytes = 0;
    int32_t groupSize = -1;      // ranks in the group; -1 unknown, 0 when calls differ
    bool groupFromWorld = false; // no call said: the trace's world size (distributedInfo)
    double algGbps = -1;         // bytes / sizedNs in 10^9 bytes/s; -1 when no size is known
    double busGbps = -1;         // -1 when the type or the group size is unknown
    model::SliceId example;
};

/// Bus-bandwidth factor of a collective type for a group of n ranks (nccl-tests): 2(n-1)/n
/// for allreduce, (n-1)/n for allgather, reducescatter and alltoall, 1 for broadcast,
/// reduce and point-to-point; -1 for a type or a group size it does not know.
double busBandwidthFactor(std::string_view type, int32_t n);

struct CopyStat {
    std::string kind;                  // "HtoD Pageable->Device"
    uint64_t count = 0;
    int64_t bytes = 0, totalNs = 0;
    double gbPerSecond = 0;
    model::SliceId example;
};

struct RuntimeStat {
    model::StringId name;
    uint64_t count = 0;
    int64_t totalNs = 0, maxNs = 0;
    model::SliceId example;
};

struct StatsTables {
    std::vector<KernelStat> kernels;      // by total time, descending
    std::vector<OperatorStat> operators;  // by self time, descending
    std::vector<CopyStat> copies;
    std::vector<RuntimeStat> runtime;
    std::vector<KernelOperatorStat> kernelsByOperator; // by total time, descending
    std::vector<CollectiveStat> collectives;           // by total time, descending
};

// ---------------------------------------------------------------- HTA-compatible

struct HtaStreamIdle {
    int64_t stream = 0;
    int64_t hostWaitNs = 0, kernelWaitNs = 0, otherNs = 0;
};

struct HtaBreakdown {
    bool valid = false;
    int64_t idleNs = 0, computeNs = 0, nonComputeNs = 0, spanNs = 0;
    std::vector<HtaStreamIdle> idleByStream;
};

// ---------------------------------------------------------------- findings

/// A finding's kind: its values are in finding_kind.h (one per line of detectors.def).
enum class FindingKind : uint8_t;
std::string_view findingKindName(FindingKind k);      // "data_loading"
bool findingKindFromName(std::string_view name, FindingKind& out);

enum class FindingSeverity : uint8_t { High, Medium, Low, Note };
std::string_view severityName(FindingSeverity s);

/// A fix the what-if replay can apply (docs/analysis.md "What-if replay"); each finding with
/// a fix names it, Count = none.
enum class Fix : uint8_t {
    InputPipeline,   // data loading moved to workers: DataLoader ranges leave the step thread
    PinnedCopies,    // pinned memory + non_blocking: blocking host-to-device copies stop waiting
    RemoveSyncs,     // no .item()/synchronize inside the step: the host stops waiting for the GPU
    CudaGraphs,      // CUDA Graphs: the operators that launch GPU work cost ~1 us per kernel
    MixedPrecision,  // FP32 matrix multiplies on Tensor Cores: those kernels take half the time
    OverlapComm,     // communication overlapped: only the part already hidden stays
    LogLessOften,    // logging/checkpointing every N steps: their time leaves the step
    KeepAllocations, // no allocation/free calls in the step: the allocator keeps its memory
    FuseKernels,     // chains of memory-bound kernels fused: each as long as its longest kernel
    Count
};
using FixSet = uint32_t;
constexpr FixSet fixBit(Fix f) {
    return FixSet(1) << static_cast<unsigned>(f);
}
std::string_view fixName(Fix f);        // "input_pipeline"
std::string_view fixDescription(Fix f); // "data loading in workers"

/// A number or a name a finding's text states, and how an independent reader recomputes it
/// from the trace (docs/claims.md): the words as they appear in the title, explanation or fix,
/// the measure, its parameters (a JSON object) and the value Stallscope computed.
struct Claim {
    std::string text;    // "3.35 s", "65%", "`hipFree`"
    std::string measure; // "idle_ns", "calls", "ratio", ... (docs/claims.md)
    std::string params;  // JSON object text: {"device": 0, "causes": ["allocator"]}
    double value = 0;    // in the measure's unit (ns, count, fraction, bytes, FLOP)
};

struct Finding {
    std::string id;                    // stable: "<kind>/gpu<d>" or "<kind>/gpu<d>/<n>"
    FindingKind kind{};
    int32_t device = -1;
    std::string title;
    FindingSeverity severity = FindingSeverity::Low;
    // What the replay predicts this finding's fix saves, applied after the fixes of the
    // findings before it in the waterfall: the savings of a device's findings add up to
    // the replay's prediction for all of them, so they never exceed the window.
    int64_t savingNs = 0;
    double savingShare = 0;            // of the window (the step time for the steps window)
    // Idle time charged to this finding: a partition (each idle nanosecond of a device is
    // charged to at most one finding). 0 for findings about busy time (no_tensor_cores,
    // comm_exposed) and for context findings.
    int64_t idleNs = 0;
    Fix replayFix = Fix::Count;        // the fix the replay applies for it; Count = none
    std::vector<Interval> ranges;      // inside the window
    std::vector<model::SliceId> evidence;
    std::string explanation;
    std::string fix;
    std::string snippet;               // short PyTorch code
    double confidence = 0.5;           // 0..1
    std::vector<std::pair<std::string, int64_t>> waitedFor;  // top ops during the idle time
    // A context finding saying the window's timing is not the model's (a graph capture, a
    // window mostly compiling): analyze() then gives no timing findings.
    bool silencesTiming = false;
    std::vector<Claim> claims; // every number and name of title, explanation and fix
};

/// One line on what a finding saves, for every front end: "saves 353.9 ms (33.2 % of step
/// time) with data loading in workers, by the replay", or, with no fix to replay, the idle
/// time it is charged. `of`: what the share is of ("step time", "the window").
std::string savingText(const Finding& f, std::string_view of);

/// CPU-only traces (steps, but no GPU work): where the thread running the steps spent the
/// step time, by the idle causes' rules (docs/analysis.md "CPU-only traces"). Without a GPU
/// all of the window is "idle"; this names what the same training loop would make the GPU
/// wait for once it runs on one. Data loading counts only under DataLoader ranges here (no
/// GPU work marks where a step's input preparation ends).
struct HostOnlyBreakdown {
    model::TrackId thread;             // the thread running the ProfilerStep ranges
    int64_t windowNs = 0;              // == time.idleNs
    IdleBreakdown time;                // causes over the window; they sum to windowNs
    std::vector<StepMetrics> steps;    // number, start/end and idleByCause per step
};

/// The what-if waterfall of one device (-1: the step thread of a CPU-only trace): the
/// window as measured, then as the replay predicts it after each finding's fix, applied in
/// order (each bar includes the fixes before it).
struct WaterfallBar {
    std::string findingId;
    Fix fix = Fix::Count;
    int64_t windowNs = 0; // predicted window after this fix and the ones before
};
struct Waterfall {
    int32_t device = -1;
    int64_t measuredNs = 0; // the window as recorded
    int64_t replayedNs = 0; // the replay without any fix (equals measuredNs)
    std::vector<WaterfallBar> bars;
};

// ---------------------------------------------------------------- result

struct AnalysisResult {
    Window window;
    std::vector<Step> steps;
    StepTimeStats stepTimes;
    std::vector<DeviceMetrics> devices;
    std::optional<HostOnlyBreakdown> hostOnly;  // set when there are steps but no GPU work
    std::optional<Warmup> warmup;               // leading warm-up, left out of the window
    std::vector<Waterfall> waterfalls;          // one per device with fixable findings
    StatsTables stats;
    HtaBreakdown hta;                  // on HTA's window (see docs/analysis.md)
    Efficiency efficiency;             // FLOPs, MFU and the roofline (efficiency.h)
    std::vector<Finding> findings;     // by saving, descending
    std::vector<std::string> notes;    // what could not be analysed and why
};

AnalysisResult analyze(const model::Trace& trace, const AnalysisOptions& options = {});

/// What shares of a result are of: "step time" when its window is made of steps, else "the
/// window" (a trace without steps, a selected range, the whole trace).
std::string_view shareBase(const AnalysisResult& r);

} // namespace stallscope::analysis
