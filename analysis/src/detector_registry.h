#pragma once
// The detectors with their run functions (the public part is detector_catalogue.h).
#include "detectors.h"

#include "stallscope/analysis/detector_catalogue.h"
#include "stallscope/analysis/finding_kind.h"

namespace stallscope::analysis::detail {

/// A detector's row: defined in its file as `extern const Detector kDetector<Name>{...}`
/// (extern: the registry finds it by name) and registered by one line in detectors.def.
struct Detector {
    DetectorEntry entry;
    void (*run)(const DetectorInput& in, Findings& out);
};

/// In run order; analyze() runs the Context ones, then the Cause ones, then the Residual
/// ones, then replays the fixes (replay.h) for the savings.
const std::vector<Detector>& detectors();

} // namespace stallscope::analysis::detail
