#pragma once
// Files that hold several ranks of one job (merged by TraceLens' TraceFuse, the sglang trace
// merger and similar tools): which process belongs to which rank, from what the file shows.
//  * A process whose name or labels say "rank N" ("RANK 3 - CPU", "rank3", "Rank: 3"), or
//    whose text pid starts with a bracketed tag with a number ("[TP03] 123"), is rank N.
//  * Numeric pids offset by rank * 10^k, k >= 4 (TraceFuse adds rank * 10^(digits of the
//    largest pid + 1)): when every GPU row's pid (a process with GPU streams) is a small
//    device index (< 1024) above a multiple of one power of ten, and those multiples differ,
//    the multiple is the rank; CPU processes join the rank of their multiple.
// Names win over pid ranges. Processes neither rule places are left out and counted.
#include "stallscope/importers/import_options.h"
#include "stallscope/model/trace.h"

#include <memory>
#include <string>
#include <vector>

namespace stallscope::importers {

struct RankGroup {
    int32_t rank = -1;
    std::shared_ptr<PidSelection> pids; // the rank's processes, for a filtered import
};

struct RanksInFile {
    std::vector<RankGroup> ranks; // by rank; fewer than two: the file is one rank
    std::string evidence;         // how they were told apart (for the session's notes)
    size_t unplaced = 0;          // processes of no rank, left out
};

RanksInFile ranksInOneTrace(const model::Trace& trace);

/// importPath splits a file into its ranks (each a filtered read of the whole file, within one
/// memory budget) only up to this many; a file claiming more is shown as one trace, with a note.
inline constexpr size_t kMaxRanksInOneFile = 512;

} // namespace stallscope::importers
