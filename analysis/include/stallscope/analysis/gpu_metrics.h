#pragma once
// GPU activity series shared by the analysis, the GUI's counter tracks and the oracle
// tests (TensorBoard plugin definitions).
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/trace.h"

#include <vector>

namespace stallscope::analysis {

struct ValueRange {
    int64_t start = 0, end = 0;
    double value = 0;
};

/// Busy fraction per bucket of [lo, hi). With `lastAbsorbs`, the remainder joins the last
/// bucket (the TensorBoard plugin's rule); otherwise the last bucket is shorter.
std::vector<double> bucketize(const Intervals& busy, int64_t lo, int64_t hi, int64_t bucketNs, bool lastAbsorbs);

/// The TensorBoard plugin's estimated SM efficiency: ranges where the sum of "blocks per SM"
/// of running kernels is positive, valued min(sum, 1).
std::vector<ValueRange> smEfficiencyRanges(const model::Trace& trace, int32_t device);

/// Time-weighted mean of `ranges` over [lo, hi) (0 outside the ranges); `ranges` in start
/// order without overlaps, as smEfficiencyRanges() returns them.
double weightedMean(const std::vector<ValueRange>& ranges, int64_t lo, int64_t hi);

} // namespace stallscope::analysis
