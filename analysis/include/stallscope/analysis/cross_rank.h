#pragma once
// Several ranks of one job analysed together (docs/analysis.md "Ranks"): each rank's step time,
// utilisation and main idle cause, the collectives matched across ranks, the time inside them
// split into waiting for the last rank to arrive and transfer, the clock offsets that align
// the ranks, the straggler and the load imbalance, per rank and per step.
//
// The analysis works on one RankDigest per rank: the few figures of a rank's own analysis it
// needs (its steps, its collectives with what its GPU did before each, its findings). A digest
// is made from a loaded trace (digestRank) or read from a summary file written on another
// machine (workspace/rank_summary.h), so `merge` of per-rank summaries gives exactly what the
// analysis of all ranks in one process gives.
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
    std::string path; // the trace file, for loading the detail on demand
};

using CauseArray = std::array<int64_t, kIdleCauseCount>;

/// One step of a rank on its busiest device: [start, end) is the step's tile of the window.
struct DigestStep {
    int64_t number = -1;
    std::string label; // serving iterations; empty for ProfilerStep
    int64_t startNs = 0, endNs = 0;
    int64_t busyNs = 0;
    CauseArray idle{};
};

/// A communication kernel on the rank's busiest device, with what that device did between
/// the previous one's end (or the window's start) and its start: busy, then idle by cause.
struct DigestCollective {
    std::string name;
    int64_t startNs = 0, endNs = 0;
    int32_t step = -1; // index into RankDigest::steps, -1: outside them
    // The phase that launched it: the outermost user annotation or operator around the
    // launch call under the step ("## backward ##", "Optimizer.step"; autograd's
    // "evaluate_function: XBackward0" as "backward (autograd: XBackward0)"); empty: unknown.
    std::string phase;
    int64_t beforeBusyNs = 0;
    CauseArray beforeIdle{};
    // Kineto's NCCL arguments on the kernel (PyTorch >= 2.4): its process group ("Process
    // Group Name", else "Process Group Description") and the group's sequence number "Seq";
    // -1: not recorded. Ranks match collectives by them before falling back to order.
    std::string group;
    int64_t seq = -1;
};

struct DigestFinding {
    FindingKind kind{};
    double savingShare = 0;
    std::string title;
};

struct RankDigest {
    int32_t rank = -1;
    std::string label;
    std::string path;
    int32_t device = -1; // the busiest device
    std::string deviceName;
    int64_t windowStartNs = 0, windowEndNs = 0;
    double utilization = 0;
    CauseArray idle{};
    std::vector<DigestStep> steps;
    std::vector<DigestCollective> collectives; // by start
    std::vector<DigestFinding> findings;       // timing findings, by saving (the rank's order)
};

/// The digest of one rank's loaded trace and analysis.
RankDigest digestRank(const RankInput& in);

struct RankSummary {
    int32_t rank = -1;
    std::string label;
    std::string path;
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
    CauseArray lateIdle{};
    // The phase of the collectives it arrived at last most often, and how often.
    std::string latePhase;
    size_t latePhaseCount = 0;
    std::string topFinding; // its largest timing finding's title, empty: none
};

/// One rank at one step (a heat-map cell).
struct RankStepCell {
    bool present = false;
    int64_t startNs = 0; // on the common clock (the rank's offset applied)
    int64_t stepNs = 0, busyNs = 0;
    CauseArray idle{};
    int64_t collectiveNs = 0, waitNs = 0;
    size_t lastArrivals = 0;
};

/// One finding kind across the ranks: "cpu_dispatch on 8 of 8 ranks, 29-42 % of step time".
struct RankFinding {
    FindingKind kind{};
    size_t ranks = 0;                  // ranks with this finding
    double minShare = 0, maxShare = 0; // its saving's share of each rank's window
    int32_t worstRank = -1;            // where it saves the most
};

struct CrossRankResult {
    std::vector<RankSummary> ranks; // by rank
    size_t collectives = 0;         // matched across all ranks
    std::string matching;           // how they were matched
    bool clocksAligned = false;     // offsets were applied (the hosts' clocks disagreed)
    int32_t straggler = -1;         // the rank that arrives last most often, -1: none clear
    double stragglerShare = 0;      // of the matched collectives
    double stepImbalance = 0;       // slowest / fastest window - 1
    // Per step: the columns ("#12"), matched by step number when every rank has the same
    // numbers, else by position over the common count; cells[rank index][column].
    std::vector<std::string> stepLabels;
    std::vector<std::vector<RankStepCell>> cells;
    std::vector<int32_t> stepStraggler; // per column: the rank last most often there, -1: none
    // The matched collectives on the common clock, for drawing the ranks side by side (not
    // in the JSON): collectiveSpans[rank index][k] for k < collectives, with each one's name
    // and step column (rank order's first rank's; -1 outside the steps).
    struct Span {
        int64_t startNs = 0, endNs = 0;
    };
    std::vector<std::vector<Span>> collectiveSpans;
    std::vector<std::string> collectiveNames;
    std::vector<int32_t> collectiveColumn;
    std::vector<int64_t> collectiveLastNs; // each one's last arrival (common clock)
    std::vector<RankFinding> findings;     // timing findings by how many ranks have them
    std::vector<std::string> notes;
};

/// Needs at least two ranks; collectives are matched by their order on each rank (the n-th
/// communication kernel of every rank is the same collective) when every rank has the same
/// number and the same kernel names in that order, else over the common prefix (noted).
CrossRankResult analyzeRanks(std::vector<RankDigest> ranks);
CrossRankResult analyzeRanks(const std::vector<RankInput>& ranks);

/// The sentences the CLI, the reports and the GUI say about the ranks: the matching line,
/// the straggler (or why there is none) and what it did before its late arrivals.
std::vector<std::string> crossRankSentences(const CrossRankResult& r);

} // namespace stallscope::analysis
