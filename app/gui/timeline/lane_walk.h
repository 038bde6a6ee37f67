#pragma once
// The scene's level of detail of one lane (scene::walkLane) on a TimelineLayout and a
// widget viewport: the rule the painter and the report pictures share.
#include "timeline_layout.h"
#include "timeline_viewport.h"

#include "stallscope/scene/timeline_scene.h"

namespace stallscope::gui {

using scene::kMinSliceWidth;
using scene::LaneItem;

template <class Emit>
size_t walkLane(const TimelineLayout& layout, model::TrackId track, int depth, const TimelineViewport& vp, Emit&& emit) {
    if (!layout.trace() || !layout.index()) return 0;
    return scene::walkLane(*layout.index(), layout.trace()->slices(), track, depth, vp.scene(),
                           std::forward<Emit>(emit));
}

} // namespace stallscope::gui
