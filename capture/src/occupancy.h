#pragma once
// Kineto's kernel figures from the launch configuration and the device: blocks and warps
// per SM, and the estimated achieved occupancy (a simplified CUDA occupancy calculator:
// resident blocks limited by threads, registers, shared memory and the architecture's
// block limit; the grid's blocks per SM cap it, as in Kineto).
#include "stallscope_capture.pb.h"

namespace stallscope::capture::detail {

struct KernelFigures {
    double blocksPerSm = -1;  // < 0: unknown (no device properties)
    double warpsPerSm = -1;
    int occupancyPct = -1;    // < 0: not computable
};

KernelFigures kernelFigures(const pb::Activity& kernel, const pb::Device* device);

} // namespace stallscope::capture::detail
