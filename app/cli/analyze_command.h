#pragma once
#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"

#include <ostream>
#include <string>
#include <vector>

namespace stallscope::cli {

struct FailRule {
    analysis::FindingKind kind;
    double minPct = 0;  // of step time
};

struct AnalyzeOptions {
    bool json = false;
    bool ranksOnly = false; // --ranks: the cross-rank summary only
    bool summary = false;   // --summary: each trace's rank summary (for `merge`)
    std::string output;     // -o: the summary file (one trace) or folder (several)
    int rank = -1;          // --rank: the summary's rank when the trace does not say
    unsigned threads = 0;
    analysis::AnalysisOptions analysis;
    std::vector<FailRule> failOn;
    std::string baseline;         // --baseline: the regression gate compares PATH with it
    double maxRegressionPct = 5;  // step time %, idle share points
    bool allowTruncated = false;  // --allow-truncated: a cut input does not fail the gates
    std::vector<std::string> paths;
};

/// Parses "KIND[:MIN_PCT],...". Returns false and sets `error` on a bad rule.
bool parseFailOn(const std::string& text, std::vector<FailRule>& out, std::string& error);
/// Parses all|steps|hta|STEP.
bool parseWindow(const std::string& text, analysis::WindowSpec& out);

/// `stallscope-cli analyze`: 0 ok, 1 unreadable input, 3 a --fail-on rule matched.
int runAnalyze(const AnalyzeOptions& options, std::ostream& out, std::ostream& err);

/// `stallscope-cli merge`: the cross-rank analysis of rank summaries.
struct MergeOptions {
    bool json = false;
    std::string report;    // -o/--report: a ranks report (format from the extension)
    std::string summaries; // --summaries: every rank's summary in one file
    std::vector<std::string> paths;
};
int runMerge(const MergeOptions& options, std::ostream& out, std::ostream& err);

/// Terminal rendering of one analysis.
/// The cross-rank summary (two or more ranks), printed before the per-rank detail.
void writeCrossRankText(std::ostream& o, const analysis::CrossRankResult& r);
void writeAnalysisText(std::ostream& o, const model::Trace& t, const analysis::AnalysisResult& r,
                       const std::string& path);

} // namespace stallscope::cli
