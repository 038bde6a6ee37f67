#pragma once
// The detectors as a table (analysis/src/detector_registry.cpp): each finding kind's name,
// when it fires, what it counts as the saving and which thresholds it reads. analyze() runs
// the detectors from the same table, so what is listed is what runs; docs/analysis.md's
// findings table is checked against it (tests/unit/analysis/test_detectors.cpp).
#include "stallscope/analysis/analysis.h"

#include <string_view>
#include <vector>

namespace stallscope::analysis {

/// When a detector runs: with the others, or after them (it reads their findings).
enum class DetectorStage : uint8_t {
    Context,  // what kind of trace this is; runs first, its findings come first (graph capture)
    Cause,    // an idle cause or a GPU-side pattern; runs in table order
    Residual, // runs last: what the others leave unexplained (low_utilization)
};

struct DetectorEntry {
    FindingKind kind;
    std::string_view name; // the finding kind's name in ids and JSON: "data_loading"
    DetectorStage stage;
    std::string_view firesWhen;  // one line, the rule with its default thresholds
    std::string_view saving;     // what its saving counts
    std::string_view thresholds; // the Thresholds fields it reads, comma-separated
};

/// Every detector, in the order analyze() runs them; one per FindingKind.
const std::vector<DetectorEntry>& detectorCatalogue();
/// The entry of `kind`.
const DetectorEntry& detectorEntry(FindingKind kind);

} // namespace stallscope::analysis
