// MainWindow, second half: actions, menus, the toolbar, recent files and dialogs.
#include "main_window.h"

#include "attach_dialog.h"
#include "capture_picker.h"
#include "preferences.h"
#include "record_dialog.h"
#include "report_export.h"

#include "findings_panel.h"
#include "timeline/timeline_view.h"

#include <QActionGroup>
#include <QApplication>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTextBrowser>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>
#include <functional>

namespace stallscope::gui {

namespace {
/// File ▸ Compare With Baseline…: the open trace (AFTER) against a chosen BEFORE.
void addCompareAction(QMenu* file, MainWindow* w) {
    QAction* compare = file->addAction(MainWindow::tr("&Compare With Baseline…"), w, [w] {
        const QString path = QFileDialog::getOpenFileName(
            w, MainWindow::tr("Choose the baseline (BEFORE) to compare the open trace with"),
            settings::lastFolder(),
            MainWindow::tr("PyTorch profiler traces (*.json *.json.gz *.pt.trace.json "
                           "*.pt.trace.json.gz);;All files (*)"));
        if (!path.isEmpty()) w->compareWithBaseline(path);
    });
    compare->setObjectName("compareAction");
    compare->setToolTip(MainWindow::tr(
        "The open trace (AFTER) against a baseline (BEFORE): timelines aligned, findings, "
        "operators and kernels before and after, the differential flame graph. Or drop the "
        "baseline with Shift held."));
}
} // namespace

void MainWindow::createActions() {
    createMenus();
    createToolBar();
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(QIcon::fromTheme("document-open"), tr("&Open…"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open a trace"), settings::lastFolder(),
                                         tr("PyTorch profiler traces (*.json *.json.gz "
                                            "*.pt.trace.json *.pt.trace.json.gz);;All files (*)"));
        if (!path.isEmpty()) openPath(path);
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Open a TensorBoard log folder"), settings::lastFolder());
        if (!dir.isEmpty()) openPath(dir);
    });
    file->addAction(tr("&Record…"), QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
        RecordDialog dialog(this);
        while (dialog.exec() == QDialog::Accepted) {
            capture::RecordOptions options;
            QString error;
            if (dialog.options(options, error)) {
                startRecording(options);
                return;
            }
            QMessageBox::warning(this, tr("Record"), error);
        }
    });
    file->addAction(tr("&Attach to PyTorch Job…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                    this, [this] {
                        AttachDialog dialog(this);
                        if (dialog.exec() == QDialog::Accepted && !dialog.tracePath().isEmpty())
                            openPath(dialog.tracePath());
                    });
    addCompareAction(file, this);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export Report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
        if (!m_doc) return;
        QString filter;
        const QString suggested =
            QDir(settings::lastFolder())
                .filePath(QFileInfo(documentPath(*m_doc)).completeBaseName().section('.', 0, 0) +
                          "." + settings::exportFormat());
        const QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggested,
                                                          ReportExport::fileFilters(), &filter);
        if (!path.isEmpty()) exportReport(path, filter);
    });
    m_exportAction->setEnabled(false);
    m_openFolderAction = file->addAction(tr("Open &Containing Folder"), this, [this] {
        if (!m_lastExportFolder.isEmpty())
            QDesktopServices::openUrl(QUrl::fromLocalFile(m_lastExportFolder));
    });
    m_openFolderAction->setToolTip(tr("The folder of the last report written"));
    m_openFolderAction->setEnabled(false);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Preferences…"), QKeySequence(Qt::CTRL | Qt::Key_Comma), this,
                    &MainWindow::showPreferences);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Fit &all"), QKeySequence(Qt::Key_0), this, [this] { m_timeline->fitAll(); });
    view->addAction(tr("Fit &selection"), QKeySequence(Qt::Key_F), this, [this] { m_timeline->fitSelection(); });
    view->addAction(tr("Zoom &in"), QKeySequence(Qt::Key_W), this, [this] { m_timeline->zoomBy(0.8, m_timeline->anchorX()); });
    view->addAction(tr("Zoom &out"), QKeySequence(Qt::Key_S), this, [this] { m_timeline->zoomBy(1.25, m_timeline->anchorX()); });
    for (QAction* a : view->actions()) a->setShortcutContext(Qt::WidgetShortcut);  // the timeline handles its keys
    view->addSeparator();
    // CPU threads without their Python frames: the operators nested by themselves (a row's
    // context menu does it for one thread).
    QAction* ops = view->addAction(tr("CPU threads: &operators only (hide Python frames)"));
    ops->setCheckable(true);
    ops->setObjectName("operatorsOnly");
    ops->setChecked(settings::operatorsOnly());
    m_timeline->setOperatorsOnly(ops->isChecked());
    connect(ops, &QAction::toggled, this, [this](bool on) {
        m_timeline->setOperatorsOnly(on);
        settings::setOperatorsOnly(on);
    });
    QMenu* theme = view->addMenu(tr("&Theme"));
    auto* group = m_themeGroup = new QActionGroup(this);
    const std::pair<QString, ThemeMode> modes[] = {{tr("Follow the system"), ThemeMode::System},
                                                   {tr("Light"), ThemeMode::Light},
                                                   {tr("Dark"), ThemeMode::Dark}};
    for (const auto& [label, mode] : modes) {
        QAction* a = theme->addAction(label, this, [this, m = mode] { setThemeMode(m); });
        a->setCheckable(true);
        a->setChecked(mode == settings::theme());
        a->setData(int(mode));
        group->addAction(a);
    }

    QMenu* go = menuBar()->addMenu(tr("&Go"));
    go->addAction(tr("&Find…"), QKeySequence::Find, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    go->addAction(tr("Next match"), QKeySequence(Qt::Key_F3), this, [this] {
        m_timeline->nextMatch(true);
        updateSearchLabel();
    });
    go->addAction(tr("Previous match"), QKeySequence(Qt::SHIFT | Qt::Key_F3), this, [this] {
        m_timeline->nextMatch(false);
        updateSearchLabel();
    });
    go->addSeparator();
    go->addAction(tr("Next finding"), QKeySequence(Qt::Key_N), this, [this] {
        const int n = m_findings->model()->rowCount();
        if (n) selectFinding((m_findings->selectedFinding() + 1) % n);
    });
    go->addAction(tr("Previous finding"), QKeySequence(Qt::SHIFT | Qt::Key_N), this, [this] {
        const int n = m_findings->model()->rowCount();
        if (n) selectFinding((m_findings->selectedFinding() - 1 + n) % n);
    });

    go->addSeparator();
    go->addAction(tr("Add a bookmark"), QKeySequence(Qt::Key_M), this,
                  [this] { m_timeline->addBookmarkHere(); });
    QMenu* marks = go->addMenu(tr("Bookmarks"));
    marks->setObjectName("bookmarksMenu");
    connect(marks, &QMenu::aboutToShow, this, [this, marks] {
        marks->clear();
        const auto& b = m_timeline->bookmarks();
        if (b.empty()) marks->addAction(tr("No bookmarks (M adds one)"))->setEnabled(false);
        for (size_t i = 0; i < b.size(); ++i)
            marks->addAction(
                tr("%1  at %2")
                    .arg(b[i].label, TimelineRenderer::formatTime(
                                         b[i].ns - m_timeline->state().timeOrigin, 1000)),
                this, [this, i] { m_timeline->goToBookmark(int(i)); });
        if (!b.empty()) {
            marks->addSeparator();
            marks->addAction(tr("Remove all bookmarks"), this, [this] {
                m_timeline->setBookmarks({});
                saveBookmarks();
            });
        }
    });
    connect(m_timeline, &TimelineView::bookmarksChanged, this, &MainWindow::saveBookmarks);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("What do the &findings mean?"), QKeySequence::HelpContents, this,
                    &MainWindow::showFindingsHelp);
    help->addAction(tr("&Keyboard Shortcuts"), QKeySequence(Qt::Key_Question), this,
                    &MainWindow::showShortcuts);
    help->addAction(tr("&About Stallscope"), this, &MainWindow::showAbout);
}

void MainWindow::createToolBar() {
    QToolBar* tb = addToolBar(tr("Main"));
    tb->setObjectName("mainToolbar");
    tb->setMovable(false);
    tb->setIconSize(QSize(18, 18));
    tb->addAction(QIcon::fromTheme("document-open"), tr("Open"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a trace"));
        if (!path.isEmpty()) openPath(path);
    });
    tb->addSeparator();
    tb->addAction(tr("Fit all"), this, [this] { m_timeline->fitAll(); })->setToolTip(tr("Show the whole window (0 / Home)"));
    tb->addAction(tr("−"), this, [this] { m_timeline->zoomBy(1.25, m_timeline->anchorX()); })->setToolTip(tr("Zoom out (S)"));
    tb->addAction(tr("+"), this, [this] { m_timeline->zoomBy(0.8, m_timeline->anchorX()); })->setToolTip(tr("Zoom in (W)"));
    tb->addSeparator();
    tb->addWidget(new QLabel(tr(" Step "), this));
    m_steps = new QComboBox(this);
    m_steps->setObjectName("stepsCombo");
    m_steps->setMinimumWidth(200);
    m_steps->setEnabled(false);
    tb->addWidget(m_steps);
    m_scopeLabel = new QLabel(this);
    m_scopeLabel->setObjectName("scopeLabel");
    m_scopeLabel->setTextFormat(Qt::RichText);
    m_scopeAction = tb->addWidget(m_scopeLabel);
    m_scopeAction->setVisible(false);
    connect(m_scopeLabel, &QLabel::linkActivated, this, [this] {
        if (m_steps->currentIndex() > 0)
            m_steps->setCurrentIndex(0); // All steps: unscopes and fits
        else
            clearScope();
    });
    connect(m_steps, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size()) return;
        const auto& a = *m_doc->traces[static_cast<size_t>(m_rank)].analysis;
        scopeToStep(i - 1);
        if (i <= 0)
            m_timeline->fitAll();
        else if (static_cast<size_t>(i - 1) < a.steps.size()) {
            // The step is zoomed to and becomes the range: the Range tab and the flame graph
            // show that step (the findings stay on the analysed window, as their header says).
            const auto span = analysis::stepSpan(a.steps, size_t(i - 1), a.window.endNs);
            m_timeline->zoomTo(span.start, span.end, 0.01);
            QWidget* shown = m_tabs->currentWidget();
            m_timeline->setRange(span.start, span.end);
            m_tabs->setCurrentWidget(shown); // choosing a step does not switch tabs
        }
        m_timeline->setFocus();
    });
    tb->addSeparator();
    m_search = new QLineEdit(this);
    m_search->setPlaceholderText(tr("Search events (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(280);
    tb->addWidget(m_search);
    tb->addAction(tr("◀"), this, [this] {
        m_timeline->nextMatch(false);
        updateSearchLabel();
    })->setToolTip(tr("Previous match (Shift+F3)"));
    tb->addAction(tr("▶"), this, [this] {
        m_timeline->nextMatch(true);
        updateSearchLabel();
    })->setToolTip(tr("Next match (F3, Enter)"));
    m_searchCount = new QLabel(this);
    m_searchCount->setMinimumWidth(110);
    tb->addWidget(m_searchCount);
    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_timeline->setSearch(text);
        updateSearchLabel();
    });
    connect(m_timeline, &TimelineView::searchFinished, this, [this] { updateSearchLabel(); });
    connect(m_timeline, &TimelineView::searchRequested, this,
            [this](const QString& text) { searchFor(text); });
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        m_timeline->nextMatch(true);
        updateSearchLabel();
    });
    tb->addSeparator();
    m_rankCombo = new QComboBox(this);
    m_rankCombo->setObjectName("ranksCombo");
    m_rankCombo->setMinimumWidth(220);
    m_rankComboAction = tb->addWidget(m_rankCombo);
    m_rankComboAction->setVisible(false);
    connect(m_rankCombo, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) showRank(m_rankCombo->itemData(i).toInt());
    });
    // A rank captured several times: its captures, the latest steady one first shown.
    m_capturesLabelAction = tb->addWidget(new QLabel(tr(" Capture "), this));
    m_captures = new CapturePicker(this);
    m_capturesAction = tb->addWidget(m_captures);
    m_capturesLabelAction->setVisible(false);
    m_capturesAction->setVisible(false);
    connect(m_captures, &CapturePicker::traceChosen, this, [this](int trace) { showRank(trace); });
}

void MainWindow::updateSearchLabel() {
    const size_t n = m_timeline->matchCount();
    if (m_search->text().trimmed().isEmpty()) m_searchCount->clear();
    else if (m_timeline->searching()) m_searchCount->setText(tr("searching …"));
    else if (n == 0) m_searchCount->setText(tr("no matches"));
    else if (m_timeline->currentMatch() >= 0)
        m_searchCount->setText(tr("%1 of %2").arg(m_timeline->currentMatch() + 1).arg(QLocale().toString(qulonglong(n))));
    else m_searchCount->setText(tr("%1 matches").arg(QLocale().toString(qulonglong(n))));
}

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList list = s.value("recent").toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > settings::recentCount()) list.removeLast();
    s.setValue("recent", list);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList list = QSettings().value("recent").toStringList();
    for (const QString& p : list) m_recentMenu->addAction(p, this, [this, p] { openPath(p); });
    m_recentMenu->setEnabled(!list.isEmpty());
}

void MainWindow::setThemeMode(ThemeMode mode) {
    settings::setTheme(mode);
    if (m_themeGroup)
        for (QAction* a : m_themeGroup->actions()) a->setChecked(a->data().toInt() == int(mode));
    Theme::apply(*qApp, mode);
    // Views paint with Theme::current(); models with coloured icons reset.
    if (m_doc) {
        const int rank = m_rank;
        m_rank = -1;
        showRank(rank);
    }
    update();
}

QString MainWindow::shortcutSheetHtml() const {
    QString rows;
    auto row = [&rows](const QString& keys, const QString& what) {
        rows += "<tr><td style='padding-right:16px'><b>" + keys.toHtmlEscaped() + "</b></td><td>" +
                what.toHtmlEscaped() + "</td></tr>";
    };
    // Every menu action with a shortcut, as the menus show them.
    std::function<void(const QMenu*, const QString&)> walk = [&](const QMenu* menu,
                                                                 const QString& path) {
        for (const QAction* a : menu->actions()) {
            const QString name = QString(a->text()).remove('&').remove(QStringLiteral("…"));
            if (a->menu())
                walk(a->menu(), path + name + " ▸ ");
            else if (!a->shortcut().isEmpty())
                row(a->shortcut().toString(QKeySequence::NativeText), path + name);
        }
    };
    QString html = "<h3>" + tr("Menus") + "</h3><table>";
    for (const QAction* top : menuBar()->actions())
        if (top->menu()) walk(top->menu(), QString(top->text()).remove('&') + " ▸ ");
    html += rows + "</table>";
    rows.clear();
    row(tr("W / S"), tr("zoom in / out at the mouse"));
    row(tr("A / D"), tr("pan left / right"));
    row(tr("Ctrl + wheel"), tr("zoom at the mouse"));
    row(tr("Shift + wheel"), tr("pan"));
    row(tr("drag"), tr("pan the timeline"));
    row(tr("drag on the ruler, Shift + drag"),
        tr("select a time range (statistics in the Range tab)"));
    row(tr("click / double click"), tr("select an event / zoom to it"));
    row(tr("Home"), tr("fit the whole window"));
    row(tr("Esc"), tr("clear the selection"));
    row(tr("right click on an event"), tr("copy its name, zoom to it, select its time, find "
                                          "similar, show in statistics, bookmark it, "
                                          "go to its launch call or GPU work, follow its flows"));
    row(tr("right click on a row's name"),
        tr("hide the row, move its group to the top, up or down"));
    row(tr("hover a counter row"), tr("its value at that time"));
    html += "<h3>" + tr("Timeline") + "</h3><table>" + rows + "</table>";
    return html;
}

namespace {

/// A modal page of text with a Close button (the shortcut sheet, the findings help).
void showTextPage(QWidget* parent, const QString& objectName, const QString& title, QSize size,
                  const std::function<void(QTextBrowser*)>& fill) {
    QDialog d(parent);
    d.setObjectName(objectName);
    d.setWindowTitle(title);
    auto* l = new QVBoxLayout(&d);
    auto* b = new QTextBrowser(&d);
    fill(b);
    l->addWidget(b);
    auto* bb = new QDialogButtonBox(QDialogButtonBox::Close, &d);
    QObject::connect(bb, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    l->addWidget(bb);
    d.resize(size);
    d.exec();
}

} // namespace

void MainWindow::showShortcuts() {
    showTextPage(this, "shortcutSheet", tr("Keyboard Shortcuts"), QSize(620, 640),
                 [this](QTextBrowser* b) { b->setHtml(shortcutSheetHtml()); });
}

QString MainWindow::findingsHelpMarkdown() {
    // The user-facing sections of docs/analysis.md (compiled in): how idle time is attributed,
    // what each finding means, how savings are estimated.
    QFile f(QStringLiteral(":/docs/analysis.md"));
    if (!f.open(QIODevice::ReadOnly)) return tr("The findings reference was not built in.");
    const QString all = QString::fromUtf8(f.readAll());
    QString out = "# " + tr("What do the findings mean?") + "\n\n" +
                  tr("From Stallscope's analysis reference (docs/analysis.md).") + "\n\n";
    for (const char* heading : {"## Idle-cause attribution", "## Findings", "## What-if replay"}) {
        const qsizetype at = all.indexOf(QLatin1String(heading));
        if (at < 0) continue;
        const qsizetype next = all.indexOf(QLatin1String("\n## "), at + 3);
        // The developers' notes (how the rules depart from the product spec) are not for users.
        for (const QString& para : all.mid(at, next < 0 ? -1 : next - at).split("\n\n"))
            if (!para.startsWith(QLatin1String("Departures from")) &&
                !para.contains(QLatin1String("../shared/spec")))
                out += para + "\n\n";
    }
    return out;
}

void MainWindow::showFindingsHelp() {
    showTextPage(this, "findingsHelp", tr("What do the findings mean?"), QSize(900, 760),
                 [](QTextBrowser* b) {
                     b->setOpenExternalLinks(true);
                     b->setMarkdown(findingsHelpMarkdown());
                 });
}

void MainWindow::showPreferences() {
    PreferencesDialog d(this);
    connect(&d, &PreferencesDialog::clearRecentRequested, this, [this] {
        QSettings().remove("recent");
        updateRecentMenu();
    });
    if (d.exec() != QDialog::Accepted) return;
    setThemeMode(settings::theme());
    QStringList list = QSettings().value("recent").toStringList();
    while (list.size() > settings::recentCount()) list.removeLast();
    QSettings().setValue("recent", list);
    updateRecentMenu();
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Stallscope"),
                       tr("<h3>Stallscope %1</h3><p>Why is my GPU idle, and what do I change?</p>"
                          "<p>Stallscope reads PyTorch profiler traces, charges every idle nanosecond of the GPU to a "
                          "cause, and explains each finding with its cost and the PyTorch fix.</p>"
                          "<p>Qt %2 · simdjson · zlib · protobuf</p><p>%3<br>LibTorch demos: %4</p>")
                           .arg(STALLSCOPE_VERSION, qVersion(),
                                QString::fromStdString(capture::captureFeatureLine()).toHtmlEscaped(),
                                capture::demoExecutablePath().empty() ? tr("not built (LibTorch not found)")
                                                                      : tr("built")));
}

} // namespace stallscope::gui
