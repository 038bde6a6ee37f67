#pragma once
// The detectors with their run functions (the public part is detector_catalogue.h).
#include "detectors.h"

#include "stallscope/analysis/detector_catalogue.h"

namespace stallscope::analysis::detail {

struct Detector {
    DetectorEntry entry;
    void (*run)(const DetectorInput& in, Findings& out);
};

/// In run order; analyze() runs the Cause ones, then the Fallback ones (kept where no
/// light_model/launch_bound finding of the device covers half their saving), then the
/// Residual ones.
const std::vector<Detector>& detectors();

} // namespace stallscope::analysis::detail
