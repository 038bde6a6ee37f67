#pragma once
// Headless rendering of the main window to a PNG (docs, tests, bug reports):
//   stallscope --screenshot OUT.png [--size WxH] [--finding N] [--capture N]
//              [--view timeline|PANEL|collectives|captures] PATH   (PANEL: a key of panels.def)
//   stallscope --screenshot OUT.png --progressive PATH   (the first picture of a progressive open)
#include "theme.h"

#include <QSize>
#include <QString>

namespace stallscope::gui {

struct ScreenshotOptions {
    QString input;
    QString output;
    QSize size{1600, 1000};
    int finding = 1;          // 1-based; 0 selects none
    int capture = 0;          // 1-based: that capture of the shown rank; 0: its latest steady
    int64_t step = -1;        // >= 0: choose ProfilerStep#step in the Step box (the scope)
    QString view = "timeline";  // "captures": the timeline with the Capture list open
    bool operatorsOnly = false; // CPU threads as their operators alone (View menu)
    ThemeMode theme = ThemeMode::Light;
    /// Opens PATH as the GUI does (on the load worker, progressively) and takes the picture at
    /// the first partial document, then cancels; prints the time to that picture and how long
    /// the cancel took (a file too small for a partial is shown whole).
    bool progressive = false;
    /// The compare view of `baseline` (BEFORE) against `input` (AFTER); --view compare-TAB.
    QString baseline;
};

/// --view's help: the views and what the special ones show.
QString viewHelp();
/// What --view takes: "timeline, details, flame, ..., collectives, captures" (the panels from
/// panels.def).
QString viewNames();

/// Loads, analyses, renders and saves; returns the process exit code.
int takeScreenshot(const ScreenshotOptions& options, QString* error);

} // namespace stallscope::gui
