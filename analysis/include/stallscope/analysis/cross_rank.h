#pragma once
// Several ranks of one job analysed together (docs/analysis.md "Ranks"): each rank's step time,
// utilisation and main idle cause, the collectives matched across ranks, the time inside them
// split into waiting for the last rank to arrive and transfer, the clock offsets that align
// the ranks, the straggler and the load imbalance.
#include "stallscope/analysis/analysis.h"

#include <array>
#include <string>
#include <vector>

namespace stallscope::analysis {

struct RankInput {
    int32_t rank = -1; // distributedInfo rank, else the position
    std::string label; // file or worker name
    const model::Trace* trace = nullptr;
    const AnalysisResult* analysis = nullptr;
};

struct RankSummary {
    int32_t rank = -1;
    std::string label;
    int64_t windowNs = 0;   // the rank's analysed window (its step time for one step)
    double utilization = 0; // of its busiest device
    IdleCause topCause = IdleCause::HostUntraced;
    int64_t topCauseNs = 0;    // idle charged to it
    int64_t collectiveNs = 0;  // time inside the matched collective kernels
    int64_t waitNs = 0;        // of which waiting for the last rank to arrive
    int64_t transferNs = 0;    // the rest
    size_t lastArrivals = 0;   // collectives this rank arrived at last
    int64_t lateNs = 0;        // summed lateness behind the second-to-last arrival when last
    int64_t clockOffsetNs = 0; // subtracted from this rank's times to align it
    // What this rank's GPU did in the stretches before the collectives it arrived at last
    // (from its previous collective's end to its arrival): busy time, then idle by cause.
    int64_t lateStretchNs = 0, lateBusyNs = 0;
    std::array<int64_t, kIdleCauseCount> lateIdle{};
};

/// One finding kind across the ranks: "cpu_dispatch on 8 of 8 ranks, 29-42 % of step time".
struct RankFinding {
    FindingKind kind = FindingKind::LowUtilization;
    size_t ranks = 0;                  // ranks with this finding
    double minShare = 0, maxShare = 0; // its saving's share of each rank's window
    int32_t worstRank = -1;            // where it saves the most
};

struct CrossRankResult {
    std::vector<RankSummary> ranks;    // by rank
    size_t collectives = 0;            // matched across all ranks
    std::string matching;              // how they were matched
    bool clocksAligned = false;        // offsets were applied (the hosts' clocks disagreed)
    int32_t straggler = -1;            // the rank that arrives last most often, -1: none clear
    double stragglerShare = 0;         // of the matched collectives
    double stepImbalance = 0;          // slowest / fastest window - 1
    std::vector<RankFinding> findings; // timing findings by how many ranks have them
    std::vector<std::string> notes;
};

/// Needs at least two ranks; collectives are matched by their order on each rank (the n-th
/// communication kernel of every rank is the same collective) when every rank has the same
/// number and the same kernel names in that order, else over the common prefix (noted).
CrossRankResult analyzeRanks(const std::vector<RankInput>& ranks);

} // namespace stallscope::analysis
