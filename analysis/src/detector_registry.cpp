// The detector table: adding a detector is its function (a detectors_*.cpp file), its
// FindingKind value and one row here.
#include "detector_registry.h"

#include <array>
#include <cstdlib>

namespace stallscope::analysis {

namespace detail {

const std::vector<Detector>& detectors() {
    using S = DetectorStage;
    using K = FindingKind;
    static const std::vector<Detector> table = {
        {{K::GraphCapture, "graph_capture", S::Context,
          "most kernel launches lie between a stream's Begin/EndCapture calls: a CUDA/HIP graph "
          "capture, not execution",
          "none (no timing findings are given for such a trace)", ""},
         detectGraphCapture},
        {{K::Compilation, "compilation", S::Context,
          "torch.compile compiles inside the window (dynamo_timed, compile_fx, autotune events) >= "
          "5 % of it, or "
          "recompiles (a Torch-Compiled Region N/M with M >= 1)",
          "none (one-off time; at >= 50 % of the window no timing findings are given)",
          "compilationMinShare"},
         detectCompilation},
        {{K::GraphBreaks, "graph_breaks", S::Context,
          "steps run >= 2 distinct compiled frames (Torch-Compiled Region N/.)",
          "none (what the breaks cost is not measured)", ""},
         detectGraphBreaks},
        {{K::GpuNotUsed, "gpu_not_used", S::Cause, "no GPU work at all", "the window", ""},
         detectGpuNotUsed},
        {{K::DataLoading, "data_loading", S::Cause, "data_loading idle >= 5 % of the window",
          "that idle", "dataLoadingMinShare"},
         detectDataLoading},
        {{K::BlockingH2dCopy, "blocking_h2d_copy", S::Cause,
          "a host-to-device copy from pageable memory, or a synchronous cudaMemcpy HtoD > 64 KB",
          "blocking_copy idle + those copies' GPU time", "syncCopyMinBytes"},
         detectBlockingH2dCopy},
        {{K::HostSync, "host_sync", S::Cause,
          "outermost synchronising calls inside steps, saving >= 1 %",
          "max(host_sync idle, the host work the waits delayed)", "severityNote"},
         detectHostSync},
        {{K::LaunchBound, "launch_bound", S::Cause,
          "a step with >= 50 kernels or >= 1 ms, busy < 60 %, most kernels shorter than their "
          "launch",
          "launch_overhead idle of those steps",
          "launchBoundMinKernels, launchBoundMinRegionNs, launchBoundMaxBusy"},
         detectLaunchBound},
        {{K::SmallBatch, "small_batch", S::Cause,
          "median kernel < 20 us and GEMM/conv kernels with < 1 block per SM or < 25 % occupancy",
          "launch_overhead idle + GEMM time x (1 - blocks per SM)",
          "smallBatchMedianKernelNs, smallBatchMaxBlocksPerSm"},
         detectSmallBatch},
        {{K::NoTensorCores, "no_tensor_cores", S::Cause,
          "compute capability >= 7, GEMM/conv >= 10 % of busy time, < 5 % of it on Tensor Cores",
          "half the non-Tensor-Core GEMM/conv time", "noTensorCoresMinGemmShare"},
         detectNoTensorCores},
        {{K::LightModel, "light_model", S::Cause,
          "kernels < 20 % of the window, launch/CPU idle >= half of idle, data loading/I-O < a "
          "third",
          "launch_overhead + cpu_compute idle", "lightModelMaxKernelShare"},
         detectLightModel},
        {{K::LoggingCheckpoint, "logging_checkpoint", S::Cause, "io_logging_checkpoint idle >= 3 %",
          "that idle", "loggingMinShare, longStepFactor"},
         detectLoggingCheckpoint},
        {{K::CommExposed, "comm_exposed", S::Cause,
          "communication not overlapped by compute >= 10 %", "the exposed time",
          "commExposedMinShare"},
         detectCommExposed},
        {{K::MemoryPressure, "memory_pressure", S::Cause,
          "peak Total Reserved > 90 % of totalGlobalMem", "0 (a risk)",
          "memoryPressureMinReserved"},
         detectMemoryPressure},
        {{K::HostBound, "host_bound", S::Fallback,
          "cpu_compute + optimizer_cpu + host_untraced idle >= 10 %, unless "
          "light_model/launch_bound cover half",
          "that idle", "hostBoundMinShare"},
         detectHostBound},
        {{K::LowUtilization, "low_utilization", S::Residual,
          "utilisation < 50 % and the other findings explain less than half of the idle time",
          "idle - their savings", "lowUtilizationMax"},
         detectLowUtilization},
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
