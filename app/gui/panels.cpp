// The rows of the bottom views that came before panels.def (see panel.h).
#include "panel.h"
#include "panel_id.h"

#include "details_panel.h"
#include "flame_panel.h"
#include "main_window.h"
#include "range_panel.h"
#include "ranks_panel.h"
#include "stats_panel.h"
#include "timeline/timeline_view.h"

#include "stallscope/model/diagnostics.h"

#include <QCoreApplication>
#include <QTextBrowser>

namespace stallscope::gui {

namespace {

QString tr(const char* s) {
    return QCoreApplication::translate("MainWindow", s);
}

/// The import's diagnostics and the analysis notes of a trace, as HTML.
QString notesHtml(const LoadedTrace& lt) {
    const auto& t = *lt.entry.trace;
    const auto& d = t.diagnostics();
    QString h = tr("<h3>%1</h3><p>%2</p>")
                    .arg(QString::fromStdString(lt.entry.path).toHtmlEscaped(),
                         QString::fromStdString(t.metadata().formatName).toHtmlEscaped());
    if (d.empty()) h += tr("<p>The import found no problems.</p>");
    for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<model::DiagnosticKind>(k);
        if (!d.count(kind)) continue;
        const auto& info = model::diagnosticInfo(kind);
        h += QString("<p><b>%1 × %2</b><br>")
                 .arg(d.count(kind))
                 .arg(QString::fromStdString(std::string(info.summary)).toHtmlEscaped());
        for (const auto& ex : d.examples(kind))
            h += QString("<span style='color:gray'>%1</span> %2<br>")
                     .arg(ex.byteOffset == model::Diagnostics::kNoOffset
                              ? QString()
                              : tr("byte %1:").arg(ex.byteOffset),
                          QString::fromStdString(ex.detail).toHtmlEscaped());
        h += "</p>";
    }
    for (const auto& n : lt.analysis->notes)
        h += "<p>" + QString::fromStdString(n).toHtmlEscaped() + "</p>";
    return h;
}

} // namespace

// One row per line of panels.def, each defined in its panel's file.
#define STALLSCOPE_PANEL(Name) extern const PanelInfo kPanel##Name;
#include "panels.def"
#undef STALLSCOPE_PANEL

// The rows of the panels that came before panels.def; a new panel defines its row in its
// own file.
const PanelInfo kPanelDetails{
    PanelId::Details, "details", QT_TRANSLATE_NOOP("MainWindow", "Details"), [](MainWindow& mw) {
        auto* w = new DetailsPanel(&mw);
        TimelineView* tl = mw.timeline();
        QObject::connect(w, &DetailsPanel::sliceActivated, tl,
                         [tl](model::SliceId s) { tl->selectSlice(s, true); });
        QObject::connect(tl, &TimelineView::sliceSelected, w, [w, &mw](model::SliceId s) {
            w->showSlice(s);
            if (s.valid()) mw.showView(PanelId::Details);
        });
        return makePanel<DetailsPanel>(w, [](DetailsPanel& p, const PanelContext& c) {
            p.setTrace(c.trace().entry.trace, c.trace().analysis->window.startNs);
        });
    }};

const PanelInfo kPanelFlame{
    PanelId::Flame, "flame", QT_TRANSLATE_NOOP("MainWindow", "Flame graph"),
    [](MainWindow& mw) {
        auto* w = new FlamePanel(&mw);
        // A double-clicked frame becomes the search: its events are outlined and the first
        // selected.
        QObject::connect(w, &FlamePanel::frameActivated, &mw, [&mw](model::StringId name) {
            const model::Trace* t = mw.timeline()->layout().trace();
            if (!name.valid() || !t) return;
            const std::string_view s = t->str(name);
            mw.searchFor(QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())));
        });
        QObject::connect(mw.timeline(), &TimelineView::rangeSelected, w,
                         [w](int64_t lo, int64_t hi) { w->setRange(lo, hi); });
        return makePanel<FlamePanel>(w, [](FlamePanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.analysis());
        });
    },
    /*followsScope=*/true};

const PanelInfo kPanelStats{
    PanelId::Stats, "stats", QT_TRANSLATE_NOOP("MainWindow", "Statistics"),
    [](MainWindow& mw) {
        auto* w = new StatsPanel(&mw);
        TimelineView* tl = mw.timeline();
        QObject::connect(w, &StatsPanel::eventRequested, tl,
                         [tl](model::SliceId s) { tl->selectSlice(s, true); });
        // The timeline's context menu: "Show in statistics" selects the event's row.
        QObject::connect(tl, &TimelineView::statisticsRequested, w, [w, &mw, tl](model::SliceId s) {
            if (const model::Trace* t = tl->layout().trace(); t && w->showRowOf(*t, s))
                mw.showView(PanelId::Stats);
        });
        return makePanel<StatsPanel>(w, [](StatsPanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.analysis());
        });
    },
    /*followsScope=*/true};

const PanelInfo kPanelRange{
    PanelId::Range, "range", QT_TRANSLATE_NOOP("MainWindow", "Range"), [](MainWindow& mw) {
        auto* w = new RangePanel(&mw);
        QObject::connect(mw.timeline(), &TimelineView::rangeSelected, w,
                         [w, &mw](int64_t lo, int64_t hi) {
                             w->showRange(lo, hi);
                             mw.showView(PanelId::Range);
                         });
        QObject::connect(w, &RangePanel::scopeRequested, &mw,
                         [&mw](int64_t lo, int64_t hi) { mw.scopeToRange(lo, hi); });
        return makePanel<RangePanel>(w, [](RangePanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.trace().analysis);
        });
    }};

const PanelInfo kPanelRanks{
    PanelId::Ranks, "ranks", QT_TRANSLATE_NOOP("MainWindow", "Ranks"), [](MainWindow& mw) {
        auto* w = new RanksPanel(&mw);
        QObject::connect(w, &RanksPanel::rankActivated, &mw,
                         [&mw](int32_t rank, int column) { mw.showRankAt(rank, column); });
        return makePanel<RanksPanel>(
            w, [](RanksPanel& p, const PanelContext& c) { p.setDocument(c.document, c.rank); });
    }};

const PanelInfo kPanelNotes{
    PanelId::Notes, "notes", QT_TRANSLATE_NOOP("MainWindow", "Import notes"), [](MainWindow& mw) {
        auto* w = new QTextBrowser(&mw);
        w->setObjectName("importNotes");
        return makePanel<QTextBrowser>(
            w, [](QTextBrowser& p, const PanelContext& c) { p.setHtml(notesHtml(c.trace())); });
    }};

const std::vector<PanelInfo>& panels() {
    static const std::vector<PanelInfo> list = {
#define STALLSCOPE_PANEL(Name) kPanel##Name,
#include "panels.def"
#undef STALLSCOPE_PANEL
    };
    return list;
}

const PanelInfo* findPanel(std::string_view key) {
    for (const PanelInfo& p : panels())
        if (key == p.key) return &p;
    return nullptr;
}

} // namespace stallscope::gui
