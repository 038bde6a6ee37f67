#pragma once
// The timeline widget's viewport: the scene's time <-> x mapping (scene::SceneViewport,
// total for any start and scale) placed in the widget, right of the row headers and below
// the ruler, plus the vertical scroll of the rows.
#include "stallscope/scene/timeline_scene.h"

#include <algorithm>
#include <cstdint>

namespace stallscope::gui {

struct TimelineViewport {
    static constexpr int kHeaderWidth = 240;
    static constexpr int kRulerHeight = 24;
    static constexpr int kStepBandHeight = 16;
    static constexpr int kTopHeight = kRulerHeight + kStepBandHeight;
    static constexpr double kMinNsPerPx = scene::SceneViewport::kMinNsPerPx;

    int64_t startNs = 0;
    double nsPerPx = 1000;
    int width = 1200, height = 800;  // whole widget
    int scrollY = 0;                 // content offset of the row area

    /// The scene's mapping: x in widget coordinates, content from kHeaderWidth to width.
    [[nodiscard]] scene::SceneViewport scene() const {
        return {startNs, nsPerPx, double(kHeaderWidth), double(std::max(width, kHeaderWidth + 1))};
    }
    /// Widget x of time `ns` (exact for times within int64 of startNs).
    [[nodiscard]] double xOf(int64_t ns) const { return scene().xOf(ns); }
    /// The time at widget x, truncated toward startNs.
    [[nodiscard]] int64_t nsAt(double x) const { return scene().nsAt(x); }
    /// The first whole ns at or right of widget x: slices starting before it start left of x.
    [[nodiscard]] int64_t nsCeilAt(double x) const { return scene().nsCeilAt(x); }
    [[nodiscard]] int64_t endNs() const { return nsAt(width); }
    [[nodiscard]] int contentWidth() const { return std::max(1, width - kHeaderWidth); }
    /// Widget y of content y.
    [[nodiscard]] int yOf(int contentY) const { return kTopHeight + contentY - scrollY; }
};

} // namespace stallscope::gui
