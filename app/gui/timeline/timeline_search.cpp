#include "timeline_search.h"

#include <algorithm>
#include <cctype>

namespace stallscope::gui {

using namespace model;

bool TimelineSearchResult::anyIn(TrackId track, int depth, size_t first, size_t last) const {
    if (!track.valid() || track.index() >= lanes.size() || depth < 0) return false;
    const auto& perDepth = lanes[track.index()];
    if (static_cast<size_t>(depth) >= perDepth.size()) return false;
    const auto& pos = perDepth[static_cast<size_t>(depth)];
    const auto it = std::lower_bound(pos.begin(), pos.end(), first);
    return it != pos.end() && *it < last;
}

std::shared_ptr<const TimelineSearchResult> searchTimeline(const Trace& t, const TimelineIndex& index,
                                                           const std::string& text, const std::atomic<bool>* cancel) {
    auto r = std::make_shared<TimelineSearchResult>();
    auto isSpace = [](unsigned char c) { return std::isspace(c) != 0; };
    size_t b = 0, e = text.size();
    while (b < e && isSpace(static_cast<unsigned char>(text[b]))) ++b;
    while (e > b && isSpace(static_cast<unsigned char>(text[e - 1]))) --e;
    r->needle = text.substr(b, e - b);
    for (char& c : r->needle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (r->needle.empty()) return r;
    auto stop = [cancel] { return cancel && cancel->load(std::memory_order_relaxed); };

    const StringPool& pool = t.strings();
    r->nameMatch.assign(pool.size(), 0);
    bool any = false;
    const std::string& needle = r->needle;
    for (uint32_t i = 1; i < pool.size(); ++i) {
        if (i % 4096 == 0 && stop()) return nullptr;
        const std::string_view s = pool.view(StringId(i));
        auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(), [](char a, char c) {
            return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(c);
        });
        if (it != s.end()) r->nameMatch[i] = 1, any = true;
    }
    if (!any) return r;
    const SliceTable& sl = t.slices();
    for (uint32_t i = 0; i < sl.size(); ++i) {
        if (i % 65536 == 0 && stop()) return nullptr;
        if (r->matches(sl.name[i])) r->slices.push_back(i);
    }
    std::stable_sort(r->slices.begin(), r->slices.end(),
                     [&sl](uint32_t a, uint32_t c) { return sl.start[a] < sl.start[c]; });
    r->lanes.resize(index.lanes.size());
    for (size_t ti = 0; ti < index.lanes.size(); ++ti) {
        if (stop()) return nullptr;
        const auto& lanes = index.lanes[ti];
        r->lanes[ti].resize(lanes.size());
        for (size_t d = 0; d < lanes.size(); ++d)
            for (size_t p = 0; p < lanes[d].size(); ++p)
                if (r->matches(sl.name[lanes[d][p]])) r->lanes[ti][d].push_back(static_cast<uint32_t>(p));
    }
    return r;
}

} // namespace stallscope::gui
