#pragma once
// What the GUI shows: the traces of an opened file or folder, each with its analysis and
// the timeline's index, all built on the load worker so the first paint is only a paint.
#include "timeline/timeline_layout.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/model/session.h"
#include "stallscope/workspace/capture_series.h"

#include <QString>

#include <memory>
#include <vector>

namespace stallscope::gui {

struct LoadedTrace {
    model::TraceEntry entry;
    std::shared_ptr<const analysis::AnalysisResult> analysis;
    std::shared_ptr<const TimelineIndex> timeline;  // null: built when first shown
};

/// Folders with more per-rank traces than this open as digests plus one rank's detail.
constexpr size_t kDetailRanks = 16;

struct Document {
    QString path;
    model::Session session;
    std::vector<LoadedTrace> traces;
    analysis::CrossRankResult ranks; // with two or more ranks (built on the load worker too)
    // Per rank, its captures in time order (indices into `traces`), warm-up or steady, and the
    // one that represents it (workspace/capture_series.h); `ranks` uses those. Empty for a
    // live recording: each trace is then a rank of its own.
    std::vector<workspace::RankSeries> series;
    // Many ranks (rank summaries, or a folder of more than kDetailRanks traces): every rank is
    // held as its digest in `ranks` and `traces` holds the one rank whose detail is loaded.
    bool manyRanks = false;
    QString detailNote; // many ranks whose detail could not be loaded: why (traces stays empty)
    double loadSeconds = 0;
    // A progressive open's document so far: the events of the first `readFraction` of the
    // input, each trace analysed over the part whose GPU work is read. The whole one follows.
    bool partial = false;
    double readFraction = 1;

    /// The series holding trace `index` (its capture's position in `capture`), null when none.
    [[nodiscard]] const workspace::RankSeries* seriesOf(size_t index,
                                                        size_t* capture = nullptr) const {
        for (const workspace::RankSeries& s : series)
            for (size_t i = 0; i < s.captures.size(); ++i)
                if (s.captures[i].trace == index) {
                    if (capture) *capture = i;
                    return &s;
                }
        return nullptr;
    }
    /// The trace a rank is shown by first: its series' representative, else its first trace;
    /// -1 when the rank is not loaded.
    [[nodiscard]] int traceOfRank(int32_t rank) const {
        for (const workspace::RankSeries& s : series)
            if (s.rank == rank) return static_cast<int>(s.summarisedBy().trace);
        for (size_t i = 0; i < traces.size(); ++i)
            if (traces[i].entry.rank == rank) return static_cast<int>(i);
        return -1;
    }
};

} // namespace stallscope::gui
