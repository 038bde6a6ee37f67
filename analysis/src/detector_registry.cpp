// The detector table, from detectors.def: adding a detector is its file (its function and
// its row, kDetector<Name>) and one line in detectors.def.
#include "detector_registry.h"

#include <array>
#include <cstdlib>

namespace stallscope::analysis {

namespace detail {

// One row per line of detectors.def, each defined beside its detector.
#define STALLSCOPE_DETECTOR(Name) extern const Detector kDetector##Name;
#include "stallscope/analysis/detectors.def"
#undef STALLSCOPE_DETECTOR

using S = DetectorStage;
using K = FindingKind;

// The rows of the detectors that came before detectors.def; a new detector defines its row
// in its own file.
const Detector kDetectorGraphCapture{
    {K::GraphCapture, "graph_capture", S::Context,
     "most kernel launches lie between a stream's Begin/EndCapture calls: a CUDA/HIP graph "
     "capture, not execution",
     "none (no timing findings are given for such a trace)", ""},
    detectGraphCapture};
const Detector kDetectorCompilation{
    {K::Compilation, "compilation", S::Context,
     "torch.compile compiles inside the window (dynamo_timed, compile_fx, autotune events) >= "
     "5 % of it, or "
     "recompiles (a Torch-Compiled Region N/M with M >= 1)",
     "none (one-off time; at >= 50 % of the window no timing findings are given)",
     "compilationMinShare"},
    detectCompilation};
const Detector kDetectorGraphBreaks{
    {K::GraphBreaks, "graph_breaks", S::Context,
     "steps run >= 2 distinct compiled frames (Torch-Compiled Region N/.)",
     "none (what the breaks cost is not measured)", ""},
    detectGraphBreaks};
const Detector kDetectorGpuNotUsed{
    {K::GpuNotUsed, "gpu_not_used", S::Context,
     "no GPU work at all (and no CUPTI range-profiler records of kernels)",
     "none (about the trace; CPU-only findings follow)", ""},
    detectGpuNotUsed};
const Detector kDetectorGpuNotRecorded{
    {K::GpuNotRecorded, "gpu_not_recorded", S::Context,
     "launch calls but no kernel, copy or memset at all (and no CUPTI range-profiler "
     "records): the GPU side of the capture is missing",
     "none (about the capture; host-only findings follow)", ""},
    detectGpuNotRecorded};
const Detector kDetectorWarmup{
    {K::Warmup, "warmup", S::Context,
     "leading steps whose GPU idle is >= 25 % one-off work (set-up, first use, code "
     "generation, allocator growth), or without steps a leading stretch >= 5 % of the "
     "window that such work covers by half; the findings then use the steady part",
     "none (context; at the whole window no timing findings are given)", ""},
    detectWarmup};
const Detector kDetectorDataLoading{
    {K::DataLoading, "data_loading", S::Cause, "data_loading idle >= 5 % of the window",
     "the replay with data loading in workers", "dataLoadingMinShare"},
    detectDataLoading};
const Detector kDetectorBlockingH2dCopy{
    {K::BlockingH2dCopy, "blocking_h2d_copy", S::Cause,
     "a host-to-device copy from pageable memory, or a synchronous cudaMemcpy HtoD > 64 KB",
     "the replay with pinned, non-blocking copies", "syncCopyMinBytes"},
    detectBlockingH2dCopy};
const Detector kDetectorHostSync{{K::HostSync, "host_sync", S::Cause,
                                  "outermost synchronising calls inside steps, saving >= 1 %",
                                  "the replay without the waits", "severityNote"},
                                 detectHostSync};
const Detector kDetectorAllocatorChurn{
    {K::AllocatorChurn, "allocator_churn", S::Cause,
     "allocator idle (inside allocation/free calls) >= 5 % of the steady window",
     "the replay without the allocation and free calls", "allocatorMinShare"},
    detectAllocatorChurn};
const Detector kDetectorCpuDispatch{
    {K::CpuDispatch, "cpu_dispatch", S::Cause,
     "launch_overhead + cpu_compute + optimizer_cpu + host_untraced idle >= 5 % of the "
     "window; "
     "evidence: launch-bound steps, small kernels, matrix-multiply FLOPs per step",
     "the replay with CUDA Graphs (dispatching operators at ~1 us per kernel)",
     "cpuDispatchMinShare, launchBoundMinKernels, launchBoundMinRegionNs, launchBoundMaxBusy, "
     "smallBatchMedianKernelNs, smallBatchMaxBlocksPerSm, lightModelMaxGflopPerStep"},
    detectCpuDispatch};
const Detector kDetectorNoTensorCores{
    {K::NoTensorCores, "no_tensor_cores", S::Cause,
     "compute capability >= 7, GEMM/conv >= 10 % of busy time, < 5 % of it on Tensor Cores",
     "the replay with those kernels 2x faster", "noTensorCoresMinGemmShare"},
    detectNoTensorCores};
const Detector kDetectorLoggingCheckpoint{
    {K::LoggingCheckpoint, "logging_checkpoint", S::Cause, "io_logging_checkpoint idle >= 3 %",
     "the replay without that time", "loggingMinShare, longStepFactor"},
    detectLoggingCheckpoint};
const Detector kDetectorCommExposed{
    {K::CommExposed, "comm_exposed", S::Cause, "communication not overlapped by compute >= 10 %",
     "the replay with only the overlapped part", "commExposedMinShare"},
    detectCommExposed};
const Detector kDetectorMemoryPressure{{K::MemoryPressure, "memory_pressure", S::Cause,
                                        "peak Total Reserved > 90 % of totalGlobalMem",
                                        "0 (a risk)", "memoryPressureMinReserved"},
                                       detectMemoryPressure};
const Detector kDetectorLowUtilization{
    {K::LowUtilization, "low_utilization", S::Residual,
     "utilisation < 50 % and the other findings explain less than half of the idle time",
     "0 (no fix to replay); charged the idle the others leave", "lowUtilizationMax"},
    detectLowUtilization};

const std::vector<Detector>& detectors() {
    static const std::vector<Detector> table = {
#define STALLSCOPE_DETECTOR(Name) kDetector##Name,
#include "stallscope/analysis/detectors.def"
#undef STALLSCOPE_DETECTOR
    };
    return table;
}

} // namespace detail
const std::vector<DetectorEntry>& detectorCatalogue() {
    static const std::vector<DetectorEntry> entries = [] {
        std::vector<DetectorEntry> out;
        for (const auto& d : detail::detectors()) out.push_back(d.entry);
        return out;
    }();
    return entries;
}

const DetectorEntry& detectorEntry(FindingKind kind) {
    // One row per kind, checked once: a kind without its row is a build that must not run.
    static const std::array<const DetectorEntry*, static_cast<size_t>(FindingKind::Count)> byKind =
        [] {
            std::array<const DetectorEntry*, static_cast<size_t>(FindingKind::Count)> a{};
            for (const DetectorEntry& e : detectorCatalogue()) a[static_cast<size_t>(e.kind)] = &e;
            for (const DetectorEntry* e : a)
                if (!e) std::abort();
            return a;
        }();
    return *byKind[static_cast<size_t>(kind)];
}

} // namespace stallscope::analysis
