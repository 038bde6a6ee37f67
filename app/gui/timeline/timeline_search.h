#pragma once
// Searching event names for the timeline, off the GUI thread: which names match, the
// matching slices in time order (next / previous match), and per lane the positions of
// matches so that a merged block knows whether it hides one with a binary search instead
// of a walk over the slices it stands for.
#include "timeline_layout.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace stallscope::gui {

struct TimelineSearchResult {
    std::string needle;                                     // lower-case, trimmed
    std::vector<uint8_t> nameMatch;                         // by StringId: 1 when the name matches
    std::vector<uint32_t> slices;                           // matching slices, by start
    std::vector<std::vector<std::vector<uint32_t>>> lanes;  // per track, per depth: matching lane positions

    [[nodiscard]] bool matches(model::StringId name) const {
        return name.index() < nameMatch.size() && nameMatch[name.index()];
    }
    /// True when a match sits at lane positions [first, last) of (track, depth).
    [[nodiscard]] bool anyIn(model::TrackId track, int depth, size_t first, size_t last) const;
};

/// Case-insensitive substring search of every event name. Null when cancelled.
std::shared_ptr<const TimelineSearchResult> searchTimeline(const model::Trace& trace, const TimelineIndex& index,
                                                           const std::string& text,
                                                           const std::atomic<bool>* cancel = nullptr);

} // namespace stallscope::gui
