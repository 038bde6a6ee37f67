#include "screenshot.h"

#include "capture_picker.h"
#include "compare_window.h"
#include "flame_panel.h"
#include "load_worker.h"
#include "main_window.h"
#include "panel.h"
#include "timeline/timeline_view.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QTableWidget>
#include <QThread>

#include <QSplitter>
#include <QTabWidget>
#include <algorithm>
#include <cstdio>

namespace stallscope::gui {

namespace {

/// `combo`: its list is open; painted below it (offscreen windows have no placement of their
/// own to read back).
int saveShot(QWidget& w, const QString& output, QString* error, QComboBox* combo = nullptr) {
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    QPixmap shot = w.grab();
    if (combo && combo->view()->window()->isVisible()) {
        QPainter p(&shot);
        p.drawPixmap(combo->mapTo(&w, QPoint(0, combo->height())), combo->view()->window()->grab());
    }
    if (!shot.save(output, "PNG")) {
        if (error) *error = "cannot write " + output;
        return 1;
    }
    return 0;
}

int progressiveScreenshot(const ScreenshotOptions& o, QString* error) {
    MainWindow w;
    w.resize(o.size);
    w.show();
    QElapsedTimer t;
    t.start();
    w.openPath(o.input);
    while ((!w.document() || !w.document()->partial) && w.loading() && t.elapsed() < 600000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
    // The loaded() or failed() signal of a load that ended before any partial.
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    if (!w.document()) {
        if (error) *error = "no picture: " + w.errorBanner()->text();
        return 1;
    }
    const Document& doc = *w.document();
    const double shownS = double(t.nsecsElapsed()) / 1e9;
    w.repaint();
    const double paintedS = double(t.nsecsElapsed()) / 1e9;
    std::printf(
        "{\"first_partial_s\": %.3f, \"first_picture_s\": %.3f, \"partial\": %s, "
        "\"read_fraction\": %.4f, "
        "\"events_shown\": %llu, \"findings\": %zu",
        shownS, paintedS, doc.partial ? "true" : "false", doc.readFraction,
        static_cast<unsigned long long>(doc.traces.front().entry.trace->importStats().entries),
        doc.traces.front().analysis ? doc.traces.front().analysis->findings.size() : size_t(0));
    const int rc = saveShot(w, o.output, error);
    if (w.loading()) {
        // Cancel as the button does; the worker's thread must stop reading promptly.
        QElapsedTimer c;
        c.start();
        for (QPushButton* b : w.findChildren<QPushButton*>())
            if (b->text() == QObject::tr("Cancel")) b->click();
        const double clickedMs = double(c.nsecsElapsed()) / 1e6;
        while (w.loadWorker()->busy() && c.elapsed() < 60000) QThread::msleep(1);
        std::printf(", \"cancel_click_ms\": %.1f, \"cancel_thread_end_ms\": %.1f", clickedMs,
                    double(c.nsecsElapsed()) / 1e6);
    }
    std::printf("}\n");
    std::fflush(stdout);
    return rc;
}

} // namespace

QString viewHelp() {
    return "bottom view for --screenshot: " + viewNames() +
           " (collectives: the ranks side by side; captures: the timeline with the Capture list "
           "open; memory-live, memory-operators, memory-events, memory-active, "
           "memory-allocator: the Memory view on that tab); with --baseline: compare-overview, "
           "compare-findings, compare-operators, compare-kernels or compare-flame";
}

QString viewNames() {
    QString s = "timeline";
    for (const PanelInfo& p : panels()) s += QString(", ") + p.key;
    return s + ", collectives, captures";
}

/// The compare view of o.baseline against o.input, on the tab --view names
/// (compare-overview, compare-findings, compare-operators, compare-kernels, compare-flame).
int compareScreenshot(const ScreenshotOptions& o, QString* error) {
    static const QStringList kTabs{"compare-overview", "compare-findings", "compare-operators",
                                   "compare-kernels", "compare-flame"};
    const int tab = o.view == "timeline" ? 0 : int(kTabs.indexOf(o.view));
    if (tab < 0) {
        if (error) *error = "--view with --baseline: one of " + kTabs.join(", ");
        return 2;
    }
    auto before = LoadWorker::loadNow(o.baseline, {}, error);
    if (!before) return 1;
    auto after = LoadWorker::loadNow(o.input, {}, error);
    if (!after) return 1;
    CompareWindow w;
    w.resize(o.size);
    w.setDocuments(before, after);
    w.tabs()->setCurrentIndex(tab);
    // A table's first row selected: its events in both timelines, aligned at them.
    if (tab == CompareWindow::Operators || tab == CompareWindow::Kernels)
        w.table(tab == CompareWindow::Kernels)->selectRow(0);
    w.show();
    return saveShot(w, o.output, error);
}

int takeScreenshot(const ScreenshotOptions& o, QString* error) {
    if (o.progressive) return progressiveScreenshot(o, error);
    if (!o.baseline.isEmpty()) return compareScreenshot(o, error);
    auto doc = LoadWorker::loadNow(o.input, {}, error);
    if (!doc) return 1;
    MainWindow w;
    w.resize(o.size);
    if (o.operatorsOnly) w.timeline()->setOperatorsOnly(true);
    w.setDocument(doc);
    if (o.capture > 0) {
        if (o.capture > w.capturePicker()->count()) {
            if (error)
                *error = QString("--capture %1: the shown rank has %2 captures")
                             .arg(o.capture)
                             .arg(std::max(1, w.capturePicker()->count()));
            return 2;
        }
        w.capturePicker()->setCurrentIndex(o.capture - 1);
    }
    // 1-based; 0 is none: the window selected the largest on open, so unselect it and show all.
    if (o.step >= 0) { // the Step box: zoom, range and the step's own analysis (waited for)
        w.selectStep(o.step);
        QElapsedTimer scoped;
        scoped.start();
        while (!w.scopedAnalysis() && scoped.elapsed() < 60000)
            QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
        if (!w.scopedAnalysis()) {
            if (error) *error = QString("--step %1: no such step in the shown trace").arg(o.step);
            return 2;
        }
    }
    if (o.finding > 0) w.selectFinding(o.finding - 1);
    else if (o.finding == 0) {
        w.selectFinding(-1);
        w.timeline()->fitAll();
    }
    // --view: a panel's key (panels.def), or timeline, collectives (the Ranks panel's second
    // view) or captures.
    // memory-<tab>: the Memory panel on one of its tabs (live, operators, events, active,
    // allocator).
    const QStringList memoryTabs = {"live", "operators", "events", "active", "allocator"};
    const bool memoryTab = o.view.startsWith("memory-");
    const int memoryTabIndex = memoryTab ? int(memoryTabs.indexOf(o.view.mid(7))) : -1;
    if (memoryTab && memoryTabIndex < 0) {
        if (error)
            *error = "--view " + o.view + ": unknown (memory-" + memoryTabs.join(", memory-") + ")";
        return 2;
    }
    const std::string viewKey = o.view == "collectives" ? "ranks"
                                : memoryTab             ? "memory"
                                                        : o.view.toStdString();
    const PanelInfo* shown = findPanel(viewKey);
    if (!shown && o.view != "timeline" && o.view != "captures") {
        if (error) *error = "--view " + o.view + ": unknown (" + viewNames() + ")";
        return 2;
    }
    if (shown) {
        w.showView(shown->id);
        if (auto* split = w.centralWidget()->findChild<QSplitter*>()) split->setSizes({o.size.height() * 2 / 5, o.size.height() * 3 / 5});
        // The Ranks panel's second view: the ranks side by side with their collectives linked.
        if (o.view == "collectives")
            if (auto* tabs = w.findChild<QTabWidget*>("ranksViews")) tabs->setCurrentIndex(1);
        if (memoryTab)
            if (auto* tabs = w.findChild<QTabWidget*>("memoryTabs"))
                tabs->setCurrentIndex(memoryTabIndex);
    }
    w.show();
    // The flame graph is built on the thread pool: wait for it (bounded) before the picture.
    QElapsedTimer waited;
    waited.start();
    const auto* flame = w.findChild<FlamePanel*>();
    while (flame && flame->building() && waited.elapsed() < 60000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    if (o.view == "captures") {
        // The Capture list open, as a user sees it when choosing (only with several captures).
        CapturePicker* picker = w.capturePicker();
        if (picker->count() < 2) {
            if (error) *error = "--view captures: the shown rank has one capture";
            return 2;
        }
        picker->showPopup();
        return saveShot(w, o.output, error, picker);
    }
    return saveShot(w, o.output, error);
}

} // namespace stallscope::gui
