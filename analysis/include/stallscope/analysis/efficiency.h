#pragma once
// When the GPU is busy: busy doing what, and how close to what the GPU can do. The window's
// operators costed from their shapes (flop_model.h), their FLOPs and bytes carried to the
// kernels they launched (by correlation), and set against the GPU's peaks (gpu_peaks.h):
// model FLOPs utilisation (MFU) per step, and per kernel family the achieved TFLOP/s and
// TB/s, arithmetic intensity and roofline position. docs/analysis.md "Efficiency".
#include "stallscope/analysis/flop_model.h"
#include "stallscope/analysis/gpu_peaks.h"
#include "stallscope/analysis/kernel_catalogue.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stallscope::model {
class Trace;
}

namespace stallscope::analysis {

struct AnalysisResult;

/// Calls of one operator with one set of recorded inputs.
struct OperatorCostRow {
    std::string name;
    FlopFormula formula = FlopFormula::Count;
    std::string dims, types, concrete; // the recorded JSON arrays ("" when not recorded)
    uint64_t calls = 0;                // in the window
    uint64_t outermostCalls = 0;       // not inside another operator of the cost table
    OperatorCost cost;                 // per call
    int64_t kernelNs = 0;              // GPU time launched by the outermost calls
    int64_t tensorNs = 0;              // of kernelNs, their GEMM, convolution and attention kernels
    uint32_t firstCall = UINT32_MAX;   // the slice of the first outermost call (evidence)
    uint64_t kernels = 0;
    int32_t device = -1; // where their kernels ran (-1: none, or several)
};

/// Kernel time of one family on one GPU and the work carried to it.
struct FamilyEfficiency {
    std::string family; // "gemm", "attention", "norm", "elementwise", "comm", "copy", ...
    uint64_t kernels = 0;
    int64_t busyNs = 0; // summed kernel time (streams overlapping count twice)
    double flops = 0;   // carried from the operators that launched the kernels
    double bytes = 0;
    int64_t costedNs = 0; // of busyNs, launched by an operator with a sized cost
    // Achieved rates over the costed kernel time; < 0 when nothing of the family is costed.
    double tflops = -1, tbps = -1, intensity = -1; // FLOP per byte
    std::string bound; // "compute" | "memory" | "" (no peaks or no bytes)
};

struct StepEfficiency {
    int64_t number = -1;
    int64_t startNs = 0, durationNs = 0;
    double modelFlops = 0;
    double mfu = -1; // < 0: no peak for the GPU
};

struct DeviceEfficiency {
    int32_t device = -1;
    std::string gpu;                      // deviceProperties' name ("" when the trace has none)
    std::string gpuNote;                  // how the name was found when not by the device's id
    std::optional<GpuPeaks> peak;         // nullopt: a GPU the peak table does not know
    Precision dtype = Precision::Unknown; // of the tensor math, by kernel time
    std::string
        dtypeFrom; // "kernel names" (and their operators' input types) | "operator input types"
    double peakTflops = 0; // of dtype; 0 when unknown
    double modelFlops = 0; // the window's tensor math launched on this GPU
    // Of them, counted by an assumption (convolutions without their strides): MFU and the
    // rates are then upper bounds.
    double upperBoundFlops = 0;
    [[nodiscard]] bool upperBound() const { return upperBoundFlops > 0.01 * modelFlops; }
    int64_t windowNs = 0, busyNs = 0;
    double mfu = -1;                        // model FLOPs / window / peak; < 0 when unknown
    double achievedTflops = -1;             // model FLOPs over the time of the kernels doing them
    std::vector<FamilyEfficiency> families; // by busy time, descending
    std::vector<StepEfficiency> steps;
    std::string why; // why there is no MFU, when there is none
    // Families whose model FLOPs per second exceed the peak MFU is measured against, said.
    std::vector<std::string> notes;
};

struct Efficiency {
    bool shapes = false;           // the window's operators of the cost table carry input shapes
    uint64_t costedCalls = 0;      // calls of table operators whose shapes fit
    uint64_t unsizedCalls = 0;     // calls of table operators whose shapes did not
    uint64_t unshapedCalls = 0;    // calls of table operators without "Input Dims" (no row)
    double modelFlops = 0;         // the window's outermost tensor math
    double modelFlopsPerStep = -1; // < 0: no steps
    std::vector<OperatorCostRow> operators; // with shapes, by FLOPs (calls x per call), descending
    std::vector<DeviceEfficiency> devices;
    std::vector<std::string> notes; // what could not be costed and why
};

/// The window of `r` costed. `cancel` is polled between stages.
Efficiency computeEfficiency(const model::Trace& t, const AnalysisResult& r,
                             const std::atomic<bool>* cancel = nullptr);

/// A roofline chart's content, shared by the report's SVG and the GUI's panel: log-log axes
/// (arithmetic intensity in FLOP/byte, TFLOP/s) that hold the roof and every point, the roof
/// min(peak, bandwidth x intensity) when the GPU's peaks are known, and a point per kernel
/// family with costed work.
struct RooflinePoint {
    std::string family;
    double intensity = 0, tflops = 0;
    int64_t busyNs = 0;
    std::string bound;
};
struct Roofline {
    double logXMin = -2, logXMax = 4, logYMin = -3, logYMax = 3; // decades
    double peakTflops = 0, bandwidthTbps = 0;                    // 0: unknown (no roof)
    double ridge = -1;                                           // FLOP/byte where the roof bends
    std::vector<RooflinePoint> points;                           // by busy time, descending
    /// Position in [0, 1] along each axis (0: left / bottom).
    [[nodiscard]] double xAt(double intensity) const;
    [[nodiscard]] double yAt(double tflops) const;
};
Roofline rooflineOf(const DeviceEfficiency& d);

/// "1.23 TFLOP/s", "456 GFLOP/s"
std::string formatFlopRate(double flopsPerSecond);
/// "12.3 TFLOP", "4.56 GFLOP"
std::string formatFlops(double flops);

} // namespace stallscope::analysis
