#pragma once
// What the GUI shows: the traces of an opened file or folder, each with its analysis and
// the timeline's index, all built on the load worker so the first paint is only a paint.
#include "timeline/timeline_layout.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/model/session.h"

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
    analysis::CrossRankResult ranks; // with two or more traces (built on the load worker too)
    // Many ranks (rank summaries, or a folder of more than kDetailRanks traces): every rank is
    // held as its digest in `ranks` and `traces` holds the one rank whose detail is loaded.
    bool manyRanks = false;
    QString detailNote; // many ranks whose detail could not be loaded: why (traces stays empty)
    double loadSeconds = 0;
    // A progressive open's document so far: the events of the first `readFraction` of the
    // input, each trace analysed over the part whose GPU work is read. The whole one follows.
    bool partial = false;
    double readFraction = 1;
};

} // namespace stallscope::gui
