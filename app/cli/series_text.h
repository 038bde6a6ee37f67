#pragma once
// The captures of each rank as the CLI prints them (`analyze` of a folder with several
// captures of a worker): which are warm-up, which steady, and each one's figures.
#include "stallscope/workspace/capture_series.h"

#include <ostream>
#include <vector>

namespace stallscope::cli {

/// The "Captures" section: one block per rank captured more than once (nothing when none is).
void writeCaptureSeriesText(std::ostream& o, const std::vector<workspace::RankSeries>& series);

} // namespace stallscope::cli
