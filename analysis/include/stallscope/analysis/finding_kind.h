#pragma once
// The finding kinds: one value per line of detectors.def (the detectors in run order).
// analysis.h declares the enum opaque, so adding a detector recompiles only the files that
// name a kind (this header's includers), not every file that reads an analysis.
#include <cstdint>

namespace stallscope::analysis {

enum class FindingKind : uint8_t {
#define STALLSCOPE_DETECTOR(Name) Name,
#include "stallscope/analysis/detectors.def"
#undef STALLSCOPE_DETECTOR
    Count
};

} // namespace stallscope::analysis
