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

struct Document {
    QString path;
    model::Session session;
    std::vector<LoadedTrace> traces;
    analysis::CrossRankResult ranks; // with two or more traces (built on the load worker too)
    double loadSeconds = 0;
};

} // namespace stallscope::gui
