// open(): what a user names, opened whole — the traces (loadAndAnalyse), the ranks compared,
// many ranks as digests plus one rank's detail (see workspace.h).
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

namespace stallscope::workspace {

const RankSeries* Workspace::seriesOf(size_t index, size_t* capture) const {
    for (const RankSeries& s : series)
        for (size_t i = 0; i < s.captures.size(); ++i)
            if (s.captures[i].trace == index) {
                if (capture) *capture = i;
                return &s;
            }
    return nullptr;
}

int Workspace::traceOfRank(int32_t rank) const {
    for (const RankSeries& s : series)
        if (s.rank == rank) return static_cast<int>(s.summarisedBy().trace);
    for (size_t i = 0; i < traces.size(); ++i)
        if (traces[i].entry.rank == rank) return static_cast<int>(i);
    return -1;
}

const AnalysedTrace* Workspace::representative(size_t k) const {
    if (k >= series.size() || series[k].summarisedBy().trace >= traces.size()) return nullptr;
    return &traces[series[k].summarisedBy().trace];
}

analysis::CrossRankResult crossRank(const std::vector<Workspace>& opened) {
    if (opened.size() == 1 && !opened.front().ranks.ranks.empty()) return opened.front().ranks;
    std::vector<analysis::RankInput> inputs;
    for (const Workspace& ws : opened)
        for (analysis::RankInput& r : rankInputs(ws)) inputs.push_back(std::move(r));
    return analysis::analyzeRanks(inputs);
}

std::string representativeLabel(const Workspace& ws, const RankSeries& s) {
    if (ws.series.size() <= 1) return {};
    const model::TraceEntry& e = ws.traces[s.summarisedBy().trace].entry;
    return (e.rank >= 0 ? "rank " + std::to_string(e.rank) + " · " : "") + e.label +
           (s.captures.size() > 1 ? " · capture " + std::to_string(s.representative + 1) + " of " +
                                        std::to_string(s.captures.size()) + " (" +
                                        std::string(capturePhaseName(s.summarisedBy().phase)) + ")"
                                  : std::string());
}

namespace {

base::Error withRank(int32_t rank, const std::string& path, const base::Error& e) {
    if (e.kind == base::ErrorKind::Cancelled) return e;
    return base::Error{e.kind, "Rank " + std::to_string(rank) + "'s trace " + path +
                                   " could not be loaded: " + e.message};
}

/// Many ranks: every rank digested (or its summary read) without holding the traces, then the
/// detail of one: the straggler's, else the first rank's.
base::Result<Workspace> openManyRanks(const std::string& path, const LoadOptions& options) {
    LoadOptions digestOptions = options;
    digestOptions.timelineIndex = false;
    digestOptions.partial = nullptr;
    if (options.progress)
        digestOptions.progress = [&](double f, const std::string& what) {
            options.progress(0.8 * f, what);
        };
    auto set = digestRanks(path, digestOptions);
    if (!set) return set.error();
    Workspace ranksOf;
    ranksOf.path = path;
    ranksOf.manyRanks = true;
    ranksOf.ranks = analysis::analyzeRanks(set.value().digests);
    const int32_t first =
        ranksOf.ranks.straggler >= 0 ? ranksOf.ranks.straggler : set.value().digests.front().rank;
    LoadOptions detailOptions = options;
    detailOptions.partial = nullptr;
    if (options.progress)
        detailOptions.progress = [&](double f, const std::string& what) {
            options.progress(0.8 + 0.2 * f, what);
        };
    auto detail = openRank(ranksOf, first, detailOptions);
    if (options.cancel && options.cancel->load())
        return base::Error{base::ErrorKind::Cancelled, "cancelled"};
    Workspace ws;
    if (detail) {
        ws = std::move(detail.value());
    } else {
        // Summaries from another machine: the ranks without any rank's timeline.
        ws = std::move(ranksOf);
        ws.detailNote = detail.error().message +
                        ". The ranks are shown from their summaries; a rank whose trace is "
                        "reachable opens when clicked.";
    }
    for (const std::string& p : set.value().problems) ws.session.problems.push_back(p);
    ws.seconds += set.value().seconds;
    return ws;
}

} // namespace

base::Result<Workspace> open(const std::string& path, const LoadOptions& options) {
    if (options.analyse && options.detailRanks != kEveryRank &&
        (!rankSummaryFiles(path).empty() || rankTraceFileCount(path) > options.detailRanks))
        return openManyRanks(path, options);
    auto loaded = loadAndAnalyse(path, options);
    if (!loaded || !options.analyse) return loaded;
    Workspace& ws = loaded.value();
    // Each rank once, by its latest steady capture (capture_series.h).
    const std::vector<analysis::RankInput> inputs = rankInputs(ws);
    if (inputs.size() >= 2) ws.ranks = analysis::analyzeRanks(inputs);
    return loaded;
}

base::Result<Workspace> openRank(const Workspace& ranksOf, int32_t rank,
                                 const LoadOptions& options) {
    const analysis::RankSummary* rs = nullptr;
    for (const analysis::RankSummary& x : ranksOf.ranks.ranks)
        if (x.rank == rank) rs = &x;
    if (!rs)
        return base::Error{base::ErrorKind::NotFound,
                           "There is no rank " + std::to_string(rank) + " in this document"};
    LoadOptions one = options;
    one.partial = nullptr;
    auto loaded = loadAndAnalyse(rs->path, one);
    if (!loaded) return withRank(rank, rs->path, loaded.error());
    Workspace ws = std::move(loaded.value());
    ws.path = ranksOf.path;
    ws.manyRanks = true;
    ws.ranks = ranksOf.ranks;
    // A file holding several ranks loads as all of them: keep the one asked for.
    if (ws.traces.size() > 1) {
        std::vector<AnalysedTrace> mine;
        for (AnalysedTrace& at : ws.traces)
            if (at.entry.rank == rank) mine.push_back(std::move(at));
        if (mine.empty())
            return base::Error{base::ErrorKind::NotFound, "Rank " + std::to_string(rank) +
                                                              " is not among the ranks of " +
                                                              rs->path};
        mine.resize(1);
        ws.traces = std::move(mine);
    }
    for (AnalysedTrace& at : ws.traces) {
        at.entry.rank = rank;
        at.entry.label = rs->label;
    }
    ws.series = rankSeries(ws.traces);
    return ws;
}

} // namespace stallscope::workspace
