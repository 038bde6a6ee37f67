#pragma once
// Colours and palettes: light and dark themes, event colours by kind (with a small
// per-name variation so neighbours stay distinguishable), severity and idle-cause colours.
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/event_kind.h"

#include <QColor>
#include <QPalette>
#include <QString>

#include <vector>

class QApplication;

namespace stallscope::gui {

enum class ThemeMode { System, Light, Dark };

struct Theme {
    bool dark = false;
    QColor background, trackBackground, trackAlternate, headerBackground, grid, text, mutedText, ruler,
        selection, rangeSelection, searchMatch, flowArrow, stepBand;

    static Theme light();
    static Theme darkTheme();
    /// The theme currently applied (see apply()).
    static const Theme& current();
    /// Applies Fusion with this theme's palette to the application.
    static void apply(QApplication& app, ThemeMode mode);
    /// True when the desktop prefers a dark colour scheme (palette lightness).
    static bool systemPrefersDark();

    [[nodiscard]] QColor eventColor(model::EventKind kind, uint32_t nameHash) const;
    [[nodiscard]] QColor kindColor(model::EventKind kind) const;
    [[nodiscard]] QColor severityColor(analysis::FindingSeverity s) const;
    [[nodiscard]] QColor causeColor(analysis::IdleCause c) const;
    [[nodiscard]] QColor findingShade() const;
};

struct LegendEntry {
    QString label;
    model::EventKind kind;
};
/// The kinds shown in the legend, in order.
const std::vector<LegendEntry>& legendEntries();

} // namespace stallscope::gui
