#include "theme.h"

#include "stallscope/reports/palette.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

#include <algorithm>

namespace stallscope::gui {

using model::EventKind;

namespace {
Theme g_current = Theme::light();

QColor hsl(int h, int s, int l) { return QColor::fromHsl(h, s, l); }
} // namespace

Theme Theme::light() {
    Theme t;
    t.dark = false;
    t.background = QColor(250, 250, 251);
    t.trackBackground = QColor(255, 255, 255);
    t.trackAlternate = QColor(246, 247, 249);
    t.headerBackground = QColor(236, 238, 242);
    t.grid = QColor(222, 225, 231);
    t.text = QColor(32, 34, 38);
    t.mutedText = QColor(104, 110, 120);
    t.ruler = QColor(242, 243, 246);
    t.selection = QColor(255, 140, 0);
    t.rangeSelection = QColor(40, 120, 220, 46);
    t.searchMatch = QColor(255, 214, 0);
    t.flowArrow = QColor(220, 40, 80);
    t.stepBand = QColor(228, 232, 240);
    return t;
}

Theme Theme::darkTheme() {
    Theme t;
    t.dark = true;
    t.background = QColor(30, 31, 34);
    t.trackBackground = QColor(36, 37, 41);
    t.trackAlternate = QColor(41, 43, 47);
    t.headerBackground = QColor(48, 50, 56);
    t.grid = QColor(62, 65, 72);
    t.text = QColor(222, 224, 228);
    t.mutedText = QColor(150, 155, 165);
    t.ruler = QColor(44, 46, 51);
    t.selection = QColor(255, 160, 40);
    t.rangeSelection = QColor(90, 160, 255, 56);
    t.searchMatch = QColor(255, 224, 60);
    t.flowArrow = QColor(255, 90, 120);
    t.stepBand = QColor(52, 55, 62);
    return t;
}

const Theme& Theme::current() { return g_current; }

bool Theme::systemPrefersDark() {
    const QPalette p = QApplication::style() ? QApplication::style()->standardPalette() : QPalette();
    return p.color(QPalette::Window).lightness() < 128;
}

void Theme::apply(QApplication& app, ThemeMode mode) {
    const bool dark = mode == ThemeMode::Dark || (mode == ThemeMode::System && systemPrefersDark());
    g_current = dark ? darkTheme() : light();
    app.setStyle(QStyleFactory::create("Fusion"));
    QPalette p;
    const Theme& t = g_current;
    p.setColor(QPalette::Window, t.dark ? QColor(40, 42, 46) : QColor(239, 240, 243));
    p.setColor(QPalette::WindowText, t.text);
    p.setColor(QPalette::Base, t.trackBackground);
    p.setColor(QPalette::AlternateBase, t.trackAlternate);
    p.setColor(QPalette::Text, t.text);
    p.setColor(QPalette::Button, t.dark ? QColor(52, 54, 60) : QColor(244, 245, 247));
    p.setColor(QPalette::ButtonText, t.text);
    p.setColor(QPalette::ToolTipBase, t.dark ? QColor(56, 58, 64) : QColor(255, 255, 240));
    p.setColor(QPalette::ToolTipText, t.text);
    p.setColor(QPalette::Highlight, t.dark ? QColor(52, 120, 210) : QColor(48, 116, 214));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, t.mutedText);
    p.setColor(QPalette::Link, t.dark ? QColor(110, 170, 255) : QColor(30, 100, 200));
    p.setColor(QPalette::Disabled, QPalette::Text, t.mutedText);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, t.mutedText);
    p.setColor(QPalette::Disabled, QPalette::WindowText, t.mutedText);
    app.setPalette(p);
}

QColor Theme::kindColor(EventKind kind) const {
    // Hues per kind: CPU work blue/teal, annotations violet, runtime orange, kernels green,
    // copies amber, memsets olive, syncs red.
    const int l = dark ? 108 : 150;
    switch (kind) {
    case EventKind::CpuOp: return hsl(210, 120, l);
    case EventKind::UserAnnotation: return hsl(265, 90, l + 8);
    case EventKind::PythonFunction: return hsl(185, 90, l);
    case EventKind::Runtime:
    case EventKind::Driver: return hsl(28, 170, l);
    case EventKind::Kernel: return hsl(135, 110, l - 10);
    case EventKind::Memcpy: return hsl(45, 200, l - 5);
    case EventKind::Memset: return hsl(75, 120, l - 10);
    case EventKind::GpuUserAnnotation: return hsl(290, 70, l + 10);
    case EventKind::CudaSync: return hsl(0, 150, l);
    case EventKind::Communication: return hsl(320, 120, l);
    case EventKind::TraceSpan:
    case EventKind::Overhead:
    case EventKind::ProfilerRange:
    case EventKind::CudaEvent:
    case EventKind::Instant:
    case EventKind::Other:
    case EventKind::Count: break;
    }
    return hsl(220, 10, l);
}

QColor Theme::eventColor(EventKind kind, uint32_t nameHash) const {
    QColor c = kindColor(kind);
    int h, s, l;
    c.getHsl(&h, &s, &l);
    const int dl = static_cast<int>(nameHash % 7) * 6 - 18;   // -18..+18 lightness
    const int dh = static_cast<int>((nameHash >> 8) % 5) * 4 - 8;
    return QColor::fromHsl((h + dh + 360) % 360, s, std::clamp(l + dl, 40, 225));
}

QColor Theme::severityColor(analysis::FindingSeverity s) const {
    return s == analysis::FindingSeverity::Note ? mutedText : QColor(QRgb(reports::severityRgb(s)));
}

QColor Theme::causeColor(analysis::IdleCause c) const { return QColor(QRgb(reports::causeRgb(c))); }

QColor Theme::findingShade() const { return dark ? QColor(255, 90, 70, 70) : QColor(230, 50, 40, 52); }

const std::vector<LegendEntry>& legendEntries() {
    static const std::vector<LegendEntry> kEntries{
        {"CPU op", EventKind::CpuOp},        {"annotation", EventKind::UserAnnotation},
        {"Python", EventKind::PythonFunction}, {"runtime", EventKind::Runtime},
        {"kernel", EventKind::Kernel},       {"memcpy", EventKind::Memcpy},
        {"memset", EventKind::Memset},       {"sync", EventKind::CudaSync},
        {"GPU range", EventKind::GpuUserAnnotation}, {"other", EventKind::Other}};
    return kEntries;
}

} // namespace stallscope::gui
