#pragma once
// Headless rendering of the main window to a PNG (docs, tests, bug reports):
//   stallscope --screenshot OUT.png [--size WxH] [--finding N] [--view timeline|flame|stats] PATH
#include "theme.h"

#include <QSize>
#include <QString>

namespace stallscope::gui {

struct ScreenshotOptions {
    QString input;
    QString output;
    QSize size{1600, 1000};
    int finding = 1;          // 1-based; 0 selects none
    QString view = "timeline";
    ThemeMode theme = ThemeMode::Light;
};

/// Loads, analyses, renders and saves; returns the process exit code.
int takeScreenshot(const ScreenshotOptions& options, QString* error);

} // namespace stallscope::gui
