#pragma once
// The mapping between time (int64 ns) and widget x of the timeline. Qt-free and total: any
// start, any positive scale and any x give an answer without overflow (saturating at the
// ends of int64), so panning past either end of a trace with timestamps anywhere in int64
// cannot wrap around.
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace stallscope::gui {

struct TimelineViewport {
    static constexpr int kHeaderWidth = 240;
    static constexpr int kRulerHeight = 24;
    static constexpr int kStepBandHeight = 16;
    static constexpr int kTopHeight = kRulerHeight + kStepBandHeight;
    static constexpr double kMinNsPerPx = 0.01;

    int64_t startNs = 0;
    double nsPerPx = 1000;
    int width = 1200, height = 800;  // whole widget
    int scrollY = 0;                 // content offset of the row area

    /// Widget x of time `ns` (exact for times within int64 of startNs).
    [[nodiscard]] double xOf(int64_t ns) const { return kHeaderWidth + model::nsDiff(ns, startNs) / scale(); }
    /// The time at widget x, truncated toward startNs.
    [[nodiscard]] int64_t nsAt(double x) const { return model::satAdd(startNs, model::nsFromDouble((x - kHeaderWidth) * scale())); }
    /// The first whole ns at or right of widget x: slices starting before it start left of x.
    [[nodiscard]] int64_t nsCeilAt(double x) const {
        return model::satAdd(startNs, model::nsFromDouble(std::ceil((x - kHeaderWidth) * scale())));
    }
    [[nodiscard]] int64_t endNs() const { return nsAt(width); }
    [[nodiscard]] int contentWidth() const { return std::max(1, width - kHeaderWidth); }
    /// Widget y of content y.
    [[nodiscard]] int yOf(int contentY) const { return kTopHeight + contentY - scrollY; }

private:
    /// nsPerPx as used: positive and finite whatever was stored.
    [[nodiscard]] double scale() const { return nsPerPx >= kMinNsPerPx && std::isfinite(nsPerPx) ? nsPerPx : kMinNsPerPx; }
};

} // namespace stallscope::gui
