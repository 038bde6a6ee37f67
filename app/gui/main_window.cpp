#include "main_window.h"

#include "preferences.h"
#include "stallscope/base/text_format.h"

#include "capture_picker.h"
#include "compare_window.h"
#include "findings_panel.h"
#include "flame_panel.h"
#include "live_recording.h"
#include "load_worker.h"
#include "panel.h"
#include "panel_id.h"
#include "report_export.h"
#include "stats_panel.h"
#include "timeline/timeline_view.h"

#include <QAbstractItemView>
#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFile>
#include <QFileInfo>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <filesystem>

// The icons are compiled into this static library; register them before first use.
static void initStallscopeResources() { Q_INIT_RESOURCE(stallscope); }

namespace stallscope::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    initStallscopeResources();
    setWindowTitle("Stallscope");
    setWindowIcon(QIcon(":/icons/stallscope.svg"));
    setAcceptDrops(true);
    resize(1600, 1000);
    m_worker = new LoadWorker(this);
    m_export = new ReportExport(this);
    connect(m_export, &ReportExport::finished, this,
            [this](const QString& path, bool ok, const QString& error) {
                if (ok) {
                    m_lastExportFolder = QFileInfo(path).absolutePath();
                    if (m_openFolderAction) m_openFolderAction->setEnabled(true);
                    m_status->setText(
                        tr("Report written: %1 (File ▸ Open Containing Folder)").arg(path));
                } else {
                    showError(tr("Could not write %1: %2").arg(QFileInfo(path).fileName(), error));
                }
            });
    createWidgets();
    createActions();
    for (QAbstractItemView* v : findChildren<QAbstractItemView*>()) v->installEventFilter(this);
    connect(m_worker, &LoadWorker::progress, this, [this](double f, const QString& what) {
        m_progress->setValue(static_cast<int>(f * 1000));
        m_status->setText(what);
    });
    connect(m_worker, &LoadWorker::loaded, this, [this](std::shared_ptr<Document> doc) { onLoaded(std::move(doc)); });
    connect(m_worker, &LoadWorker::partial, this,
            [this](std::shared_ptr<Document> doc) { onPartial(std::move(doc)); });
    connect(m_worker, &LoadWorker::failed, this, [this](const QString& msg) {
        m_pendingStep = -1;
        m_acceptPartials = false;
        m_progress->hide();
        m_cancel->hide();
        showError(
            tr("Could not open %1: %2").arg(QFileInfo(m_loadingPath).fileName(), msg) +
            (m_doc && m_doc->partial ? tr(" The part read before is still shown.") : QString()));
        m_status->setText(tr("Open failed"));
    });
}

void MainWindow::restoreLayout() {
    QSettings s;
    if (s.contains("window/geometry")) restoreGeometry(s.value("window/geometry").toByteArray());
    if (s.contains("window/state")) restoreState(s.value("window/state").toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState());
    QMainWindow::closeEvent(e);
}

bool MainWindow::isSelection(const QString& path) const {
    for (const auto& d : m_selections)
        if (path.startsWith(d->path())) return true;
    return false;
}

void MainWindow::openPaths(const QStringList& paths) {
    if (paths.size() == 1) return openPath(paths.front());
    if (paths.isEmpty()) return;
    // Each selection's folder lives as long as the window: a rank loaded on demand later still
    // finds its link.
    auto dir =
        std::make_unique<QTemporaryDir>(QDir::temp().filePath("stallscope-selection-XXXXXX"));
    bool linked = dir->isValid();
    int n = 0;
    for (const QString& p : paths) {
        const QFileInfo fi(p);
        linked = linked &&
                 QFile::link(fi.absoluteFilePath(),
                             dir->filePath(
                                 QString("%1-%2").arg(n++, 3, 10, QChar('0')).arg(fi.fileName())));
    }
    if (!linked) {
        showError(tr("Cannot open %1 files as one session (no temporary folder of links); opened "
                     "the first")
                      .arg(paths.size()));
        return openPath(paths.front());
    }
    settings::setLastFolder(paths.front());
    const QString folder = dir->path();
    m_selections.push_back(std::move(dir));
    openPath(folder);
}

MainWindow::~MainWindow() = default;

bool MainWindow::loading() const { return m_worker->busy(); }

bool MainWindow::eventFilter(QObject* watched, QEvent* e) {
    if (e->type() == QEvent::ShortcutOverride || e->type() == QEvent::KeyPress) {
        const auto* k = static_cast<QKeyEvent*>(e);
        if (k->modifiers() == Qt::NoModifier) {
            if (m_oneKeyShortcuts.isEmpty())
                for (QAction* a : findChildren<QAction*>())
                    for (const QKeySequence& ks : a->shortcuts())
                        if (ks.count() == 1 && ks[0].keyboardModifiers() == Qt::NoModifier)
                            m_oneKeyShortcuts.insert(ks[0].key(), a);
            if (QAction* a = m_oneKeyShortcuts.value(Qt::Key(k->key()))) {
                // Not the view's type-to-search: the window's action takes the key.
                if (e->type() == QEvent::KeyPress && a->isEnabled()) a->trigger();
                e->accept();
                return true;
            }
        }
    }
    return QMainWindow::eventFilter(watched, e);
}

void MainWindow::createWidgets() {
    m_timeline = new TimelineView(this);
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    for (const PanelInfo& info : panels()) {
        m_panels.push_back(info.create(*this));
        m_panelIds.push_back(info.id);
        m_tabs->addTab(m_panels.back()->widget(), tr(info.title));
    }

    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    m_banner->hide();
    connect(m_banner, &QLabel::linkActivated, this, [this] { showView(View::Notes); });

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_timeline);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({740, 260});
    auto* central = new QWidget(this);
    auto* cl = new QVBoxLayout(central);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->setSpacing(0);
    cl->addWidget(m_banner);
    cl->addWidget(split, 1);
    setCentralWidget(central);

    m_findings = new FindingsPanel(this);
    auto* dock = new QDockWidget(tr("Findings"), this);
    dock->setObjectName("findingsDock");
    dock->setWidget(m_findings);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    resizeDocks({dock}, {520}, Qt::Horizontal);

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(240);
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->hide();
    m_stop = new QPushButton(tr("Stop recording"), this);
    m_stop->hide();
    m_status = new QLabel(tr("Ready"), this);
    statusBar()->addWidget(m_status, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    statusBar()->addPermanentWidget(m_stop);
    connect(m_stop, &QPushButton::clicked, this, &MainWindow::stopRecording);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_worker->cancel();
        m_acceptPartials = false;
        m_progress->hide();
        m_cancel->hide();
        m_status->setText(tr("Cancelled"));
        if (m_doc && m_doc->partial)
            showNotice(tr("Cancelled with %1 % of %2 read: the %3 events read are shown and the "
                          "findings cover "
                          "only that part. Open the file again to read all of it.")
                           .arg(int(m_doc->readFraction * 100))
                           .arg(QFileInfo(documentPath(*m_doc)).fileName())
                           .arg(QLocale().toString(qulonglong(
                               m_doc->traces.front().entry.trace->importStats().entries))));
    });

    connect(m_findings, &FindingsPanel::findingSelected, this, [this](int row) {
        m_timeline->showFinding(m_findings->model()->finding(row));
    });
    connect(m_findings, &FindingsPanel::evidenceActivated, this,
            [this](model::SliceId s) { m_timeline->selectSlice(s, true); });
}

void MainWindow::openPath(const QString& path) {
    if (!isSelection(path)) {
        settings::setLastFolder(path);
        settings::setLastSession(path);
    }
    m_banner->hide();
    m_loadingPath = path;
    m_acceptPartials = true;
    m_progress->setValue(0);
    m_progress->show();
    m_cancel->show();
    m_status->setText(tr("Opening %1 …").arg(QFileInfo(path).fileName()));
    m_worker->start(path);
}

void MainWindow::onLoaded(std::shared_ptr<Document> doc) {
    m_progress->hide();
    m_cancel->hide();
    m_acceptPartials = false;
    if (!isSelection(documentPath(*doc))) addRecent(documentPath(*doc));
    // After a progressive open the whole trace replaces the part read in the user's view.
    m_keepView = m_doc && m_doc->partial && m_doc->path == doc->path;
    setDocument(std::move(doc));
    m_keepView = false;
    if (m_pendingStep >= 0) showStepColumn(m_pendingStep);
    m_pendingStep = -1;
}

void MainWindow::onPartial(std::shared_ptr<Document> doc) {
    if (!m_acceptPartials || !doc || doc->traces.empty() || documentPath(*doc) != m_loadingPath)
        return;
    m_keepView = m_doc && m_doc->partial && m_doc->path == doc->path;
    setDocument(std::move(doc));
    m_keepView = false;
    m_exportAction->setEnabled(false); // a report of part of a trace would mislead
    showNotice(partialText(*m_doc));
}

QString MainWindow::partialText(const Document& doc) const {
    const LoadedTrace& lt = doc.traces.front();
    QString text = tr("Reading %1: %2 % read, the %3 events read so far are shown.")
                       .arg(QFileInfo(documentPath(doc)).fileName())
                       .arg(int(doc.readFraction * 100))
                       .arg(QLocale().toString(qulonglong(lt.entry.trace->importStats().entries)));
    if (lt.analysis && lt.analysis->window.endNs > lt.analysis->window.startNs &&
        lt.analysis->window.description != "no GPU work read yet")
        text +=
            tr(" The findings are preliminary: they cover the first %1 s of the trace, whose CPU "
               "and "
               "GPU work are both read, and are redone when all of it is.")
                .arg(QString::number(
                    double(lt.analysis->window.endNs - lt.analysis->window.startNs) / 1e9, 'f', 2));
    else
        text += tr(" No GPU work has been read yet: the findings come when it is.");
    return text;
}

void MainWindow::showNotice(const QString& message) {
    m_bannerWarns = false;
    m_banner->setStyleSheet(
        "QLabel { background: #e7f0fb; color: #0b3a66; border: 1px solid #b9d2f0; padding: 8px; }");
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setText(message);
    m_banner->show();
}

void MainWindow::showRankAt(int32_t rank, int column) {
    if (!m_doc) return;
    if (const int trace = m_doc->traceOfRank(rank); trace >= 0) {
        // The capture shown of that rank stays when it is that rank already.
        const workspace::RankSeries* shown = m_doc->seriesOf(size_t(std::max(m_rank, 0)));
        if (!(shown && shown->rank == rank && m_rank >= 0)) showRank(trace);
        showStepColumn(column);
        return;
    }
    if (!m_doc->manyRanks) return;
    m_pendingStep = column;
    m_progress->setValue(0);
    m_progress->show();
    m_cancel->show();
    m_status->setText(tr("Loading rank %1 …").arg(rank));
    m_worker->startRank(m_doc, rank);
}

void MainWindow::showStepColumn(int column) {
    // The steps combo lists the shown trace's steps after "All steps", in the order of the
    // heat map's columns.
    if (column >= 0 && column + 1 < m_steps->count()) m_steps->setCurrentIndex(column + 1);
}

void MainWindow::setDocument(std::shared_ptr<Document> doc) {
    m_doc = std::move(doc);
    m_banner->hide();
    if (m_doc && m_doc->traces.empty() && m_doc->manyRanks) {
        showRanksOnly();
        return;
    }
    if (!m_doc || m_doc->traces.empty()) return;
    for (int i = 0; i < m_tabs->count(); ++i) m_tabs->setTabEnabled(i, true);
    setWindowTitle(
        isSelection(documentPath(*m_doc))
            ? tr("%1 files — Stallscope").arg(m_doc->traces.size())
            : QString("%1 — Stallscope").arg(QFileInfo(documentPath(*m_doc)).fileName()));
    fillRanks();
    m_exportAction->setEnabled(true);
    m_rank = -1;
    // The first rank, by its latest steady capture when it was captured several times.
    showRank(m_doc->series.empty() ? 0
                                   : static_cast<int>(m_doc->series.front().summarisedBy().trace));
    // The Overview first when the trace has steps to show, as the TensorBoard plugin opened.
    const auto& shown = *m_doc->traces[static_cast<size_t>(std::max(0, m_rank))].analysis;
    // A file of memory alone (an allocator snapshot, a memory timeline) opens on its memory.
    const model::Trace& first =
        *m_doc->traces[static_cast<size_t>(std::max(0, m_rank))].entry.trace;
    const bool snapshot = first.slices().size() == 0 && !first.memorySamples().empty();
    showView(snapshot ? View::Memory
             : std::any_of(shown.devices.begin(), shown.devices.end(),
                           [](const analysis::DeviceMetrics& d) { return !d.steps.empty(); })
                 ? View::Overview
                 : View::Details);
    if (!m_doc->session.problems.empty()) {
        QString msg = tr("Some files of the folder could not be read:");
        for (const auto& p : m_doc->session.problems) msg += "\n• " + QString::fromStdString(p);
        showError(msg);
    }
}

void MainWindow::showRanksOnly() {
    // Rank summaries whose traces are not here: the ranks from their digests, no timeline.
    setWindowTitle(QString("%1 — Stallscope").arg(QFileInfo(documentPath(*m_doc)).fileName()));
    m_rankComboAction->setVisible(false);
    m_captures->setSeries(nullptr, 0);
    m_capturesAction->setVisible(false);
    m_capturesLabelAction->setVisible(false);
    m_exportAction->setEnabled(false);
    m_rank = -1;
    m_timeline->setData(nullptr, nullptr, nullptr);
    m_findings->setData(nullptr, nullptr);
    fillSteps();
    const PanelContext context{m_doc.get(), -1};
    for (size_t i = 0; i < m_panels.size(); ++i) {
        const bool ranks = m_panelIds[i] == PanelId::Ranks;
        m_tabs->setTabEnabled(static_cast<int>(i), ranks);
        if (ranks) m_panels[i]->showTrace(context);
    }
    showView(View::Ranks);
    m_status->setText(tr("%1 ranks from their summaries").arg(m_doc->ranks.ranks.size()));
    if (!m_doc->detailNote.empty()) showWarning(QString::fromStdString(m_doc->detailNote));
}

bool MainWindow::startRecording(const capture::RecordOptions& options) {
    if (m_live && m_live->active()) {
        showError(tr("A recording is already running; stop it first."));
        return false;
    }
    delete m_live;
    m_live = new LiveRecording(this);
    connect(m_live, &LiveRecording::snapshot, this,
            [this](std::shared_ptr<const model::Trace> t, std::shared_ptr<const TimelineIndex> index) {
                m_timeline->setLiveData(std::move(t), std::move(index));
            });
    connect(m_live, &LiveRecording::statusChanged, this, [this](const QString& text) { m_status->setText(text); });
    connect(m_live, &LiveRecording::finished, this, [this](std::shared_ptr<Document> doc) {
        m_stop->hide();
        const QString status = m_status->text();
        addRecent(documentPath(*doc));
        setDocument(std::move(doc));
        m_status->setText(status + " · " + m_status->text());
    });
    connect(m_live, &LiveRecording::failed, this, [this](const QString& msg) {
        m_stop->hide();
        showError(tr("The recording could not be saved: %1").arg(msg));
    });
    QString error;
    if (!m_live->start(options, error)) {
        showError(tr("Could not start the recording: %1").arg(error));
        return false;
    }
    m_banner->hide();
    m_doc.reset();
    m_findings->setData(nullptr, nullptr);
    m_findings->detail()->setHtml(tr("<p style='color:gray'>Recording… The findings appear here when the program "
                                     "ends or you press <b>Stop recording</b>; the timeline grows meanwhile.</p>"));
    setWindowTitle(tr("Recording %1 — Stallscope").arg(QString::fromStdString(options.command.front())));
    m_stop->show();
    m_status->setText(tr("Starting %1 …").arg(QString::fromStdString(options.command.front())));
    return true;
}

void MainWindow::stopRecording() {
    if (m_live) m_live->stop();
}

void MainWindow::exportReport(const QString& path, const QString& selectedFilter) {
    int format = 0;
    if (m_doc && m_doc->traces.empty()) {
        showError(tr("No rank's trace is loaded: write the ranks report with stallscope-cli merge "
                     "-o %1 SUMMARIES")
                      .arg(QFileInfo(path).fileName()));
        return;
    }
    if (!m_doc || !ReportExport::formatFor(path, selectedFilter, format)) {
        showError(tr("Cannot tell the report format of %1: use .html, .pdf, .md, .json or .trace.json.gz")
                      .arg(QFileInfo(path).fileName()));
        return;
    }
    m_banner->hide();
    m_status->setText(tr("Writing %1 …").arg(QFileInfo(path).fileName()));
    m_export->start(m_doc, m_rank, path, format);
}

void MainWindow::showRank(int index) {
    if (!m_doc || index < 0 || index >= static_cast<int>(m_doc->traces.size()) || index == m_rank) return;
    m_rank = index;
    m_scopeJob.cancel(); // another trace: no step or range scope
    m_scoped.reset();
    if (m_scopeAction) m_scopeAction->setVisible(false);
    const LoadedTrace& lt = m_doc->traces[static_cast<size_t>(index)];
    // A progressive open's next document keeps the view (or keeps following the whole trace).
    const bool keepView = m_keepView;
    if (keepView)
        m_timeline->setLiveData(lt.entry.trace, lt.timeline, lt.analysis);
    else
        m_timeline->setData(lt.entry.trace, lt.analysis, lt.timeline);
    if (!keepView) loadBookmarks(); // the trace's own, saved with it
    m_findings->setData(lt.entry.trace, lt.analysis);
    const PanelContext context{m_doc.get(), index};
    for (const auto& panel : m_panels) panel->showTrace(context);
    fillSteps();
    const auto& st = lt.entry.trace->importStats();
    // The text's kind: a pickle for allocator snapshots, JSON for the rest; another profiler's
    // file (read through its Kineto form) by its own size.
    const bool translated = lt.entry.trace->metadata().translated;
    const char* text = translated                            ? "input"
                       : lt.entry.trace->allocatorSnapshot() ? "pickle"
                                                             : "JSON";
    m_status->setText(
        tr("%1 · %2 events · %3 MB of %6 · loaded in %4 s · window %5")
            .arg(QString::fromStdString(lt.entry.trace->metadata().formatName))
            .arg(QLocale().toString(qulonglong(st.entries)))
            .arg(QString::number(double(translated ? st.inputBytes : st.textBytes) / 1e6, 'f', 1))
            .arg(QString::number(m_doc->seconds, 'f', 2))
            .arg(QString::fromStdString(lt.analysis->window.description))
            .arg(QString::fromLatin1(text)));
    syncRankPickers();
    const model::Diagnostics& diags = lt.entry.trace->diagnostics();
    if (!diags.empty()) {
        // By kind: one harmless kind counted 20,000 times is one note, not 20,000.
        QStringList kinds;
        for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
            const auto kind = static_cast<model::DiagnosticKind>(k);
            if (diags.count(kind))
                kinds << tr("%1 × %2")
                             .arg(QLocale().toString(qulonglong(diags.count(kind))))
                             .arg(QString::fromStdString(
                                 std::string(model::diagnosticInfo(kind).summary)));
        }
        m_status->setText(
            m_status->text() +
            (kinds.size() == 1
                 ? tr(" · import note: %1").arg(kinds.front())
                 : tr(" · import notes of %1 kinds (Import notes tab)").arg(kinds.size())));
        m_status->setToolTip(kinds.join("\n"));
    }
    m_banner->hide();
    if (const QString problems = importProblems(diags); !problems.isEmpty())
        showWarning(tr("%1 was read with problems: %2. Everything that could be read is shown.")
                        .arg(QString::fromStdString(std::filesystem::path(lt.entry.path).filename().string()), problems));
    if (!m_search->text().isEmpty()) {
        m_timeline->setSearch(m_search->text());
        updateSearchLabel();
    }
    if (m_doc->partial) {
        m_status->setText(tr("Reading: %1 % · %2 events so far · preliminary analysis of %3")
                              .arg(int(m_doc->readFraction * 100))
                              .arg(QLocale().toString(qulonglong(st.entries)))
                              .arg(QString::fromStdString(lt.analysis->window.description)));
        return; // the timeline shows all that is read: no finding zooms into it yet
    }
    // The largest finding, unless the user zoomed in while the trace was read.
    if (!lt.analysis->findings.empty() && (!keepView || m_timeline->showsAll())) selectFinding(0);
}

void MainWindow::selectFinding(int row) {
    m_findings->selectFinding(row);
    m_timeline->showFinding(m_findings->model()->finding(row));
}

void MainWindow::showView(View view) {
    for (size_t i = 0; i < m_panelIds.size(); ++i)
        if (m_panelIds[i] == view) m_tabs->setCurrentWidget(m_panels[i]->widget());
}

void MainWindow::searchFor(const QString& text) {
    if (!m_timeline->layout().trace()) return;
    m_search->setText(text);
    m_timeline->nextMatch(true);
    updateSearchLabel();
}

void MainWindow::fillRanks() {
    const QSignalBlocker block(m_rankCombo);
    m_rankCombo->clear();
    if (!m_doc->series.empty()) {
        // One item per rank: several captures of a worker are that rank's, picked beside it.
        for (const workspace::RankSeries& s : m_doc->series) {
            QString text = tr("rank %1 · %2").arg(s.rank).arg(QString::fromStdString(s.label));
            if (s.captures.size() > 1) text += tr(" · %1 captures").arg(s.captures.size());
            m_rankCombo->addItem(text, static_cast<int>(s.summarisedBy().trace));
        }
    } else {
        for (size_t i = 0; i < m_doc->traces.size(); ++i) {
            const LoadedTrace& lt = m_doc->traces[i];
            m_rankCombo->addItem(
                tr("rank %1 · %2").arg(lt.entry.rank).arg(QString::fromStdString(lt.entry.label)),
                static_cast<int>(i));
        }
    }
    m_rankComboAction->setVisible(m_rankCombo->count() > 1);
}

void MainWindow::syncRankPickers() {
    size_t capture = 0;
    const workspace::RankSeries* s = m_doc->seriesOf(static_cast<size_t>(m_rank), &capture);
    {
        const QSignalBlocker block(m_rankCombo);
        m_rankCombo->setCurrentIndex(m_doc->series.empty() ? m_rank
                                     : s ? static_cast<int>(s - m_doc->series.data())
                                         : -1);
    }
    m_captures->setSeries(s, capture);
    const bool several = s && s->captures.size() > 1;
    m_capturesAction->setVisible(several);
    m_capturesLabelAction->setVisible(several);
    if (several)
        m_status->setText(m_status->text() +
                          tr(" · capture %1 of %2 (%3)")
                              .arg(capture + 1)
                              .arg(s->captures.size())
                              .arg(QString::fromUtf8(
                                  workspace::capturePhaseName(s->captures[capture].phase).data())));
}

bool MainWindow::scopeShown() const {
    return m_scopeAction && m_scopeAction->isVisible();
}

QString MainWindow::bookmarkKey() const {
    if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size()) return {};
    const std::string& path = m_doc->traces[static_cast<size_t>(m_rank)].entry.path;
    if (path.empty()) return {};
    const QString abs = QFileInfo(QString::fromStdString(path)).absoluteFilePath();
    return QStringLiteral("bookmarks/") +
           QString::fromLatin1(
               QCryptographicHash::hash(abs.toUtf8(), QCryptographicHash::Sha1).toHex());
}

void MainWindow::saveBookmarks() {
    const QString key = bookmarkKey();
    if (key.isEmpty()) return;
    QStringList list;
    for (const auto& b : m_timeline->bookmarks())
        list << QString::number(b.ns) + QLatin1Char('\t') + b.label;
    QSettings s;
    if (list.isEmpty())
        s.remove(key);
    else
        s.setValue(key, list);
}

void MainWindow::loadBookmarks() {
    const QString key = bookmarkKey();
    std::vector<TimelineState::Bookmark> marks;
    if (!key.isEmpty())
        for (const QString& line : QSettings().value(key).toStringList()) {
            const qsizetype tab = line.indexOf(QLatin1Char('\t'));
            bool ok = false;
            const qlonglong ns = line.left(tab).toLongLong(&ok);
            if (ok && tab > 0) marks.push_back({ns, line.mid(tab + 1)});
        }
    m_timeline->setBookmarks(std::move(marks));
}

void MainWindow::clearScope() {
    m_scopeJob.cancel();
    if (m_scoped && m_doc && m_rank >= 0 && static_cast<size_t>(m_rank) < m_doc->traces.size()) {
        const LoadedTrace& lt = m_doc->traces[static_cast<size_t>(m_rank)];
        showScoped(lt.analysis); // back to the analysed window
    }
    m_scoped.reset();
    if (m_scopeAction) m_scopeAction->setVisible(false);
}

void MainWindow::showScoped(const std::shared_ptr<const analysis::AnalysisResult>& a) {
    const auto trace = m_doc->traces[static_cast<size_t>(m_rank)].entry.trace;
    m_findings->setData(trace, a);
    m_timeline->showFinding(nullptr); // a finding of the other scope is not shaded
    // The panels that follow a scope (PanelInfo::followsScope) show the scope's analysis; the
    // trace's own when `a` is the trace's.
    const auto& own = m_doc->traces[static_cast<size_t>(m_rank)].analysis;
    const PanelContext context{m_doc.get(), m_rank, a == own ? nullptr : a};
    for (size_t i = 0; i < m_panels.size(); ++i)
        if (panels()[i].followsScope) m_panels[i]->showTrace(context);
}

void MainWindow::scopeTo(model::Interval span, const QString& what,
                         const std::string& description) {
    m_scopeJob.cancel();
    if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size() ||
        span.end <= span.start)
        return;
    const LoadedTrace& lt = m_doc->traces[static_cast<size_t>(m_rank)];
    // Several ranks: the scope names the rank it is of.
    const QString scopeName =
        m_doc->traces.size() > 1 ? tr("rank %1 · %2").arg(lt.entry.rank).arg(what) : what;
    m_scopeLabel->setText(tr("  Scope: %1 (analysing…)").arg(scopeName));
    m_scopeAction->setVisible(true);
    // The span as the window: findings, idle causes and tables of that span alone, on the pool.
    const std::shared_ptr<const model::Trace> trace = lt.entry.trace;
    m_scopeJob.start(
        [trace, span, description](const std::atomic<bool>& cancel) {
            analysis::AnalysisOptions o;
            o.window.kind = analysis::WindowKind::Range;
            o.window.startNs = span.start;
            o.window.endNs = span.end;
            o.cancel = &cancel;
            analysis::AnalysisResult r = analysis::analyze(*trace, o);
            r.window.description = description;
            return std::make_shared<const analysis::AnalysisResult>(std::move(r));
        },
        [this, scopeName](std::shared_ptr<const analysis::AnalysisResult> a) {
            m_scoped = a;
            showScoped(a);
            m_scopeLabel->setText(
                tr("  Scope: %1 · findings, overview, statistics, modules and flame graph of it "
                   "(%2) · <a href=\"window\">back to the window</a>")
                    .arg(scopeName.toHtmlEscaped(),
                         QString::fromStdString(a->window.description).toHtmlEscaped()));
        });
}

void MainWindow::scopeToStep(int index) {
    if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size()) return;
    const LoadedTrace& lt = m_doc->traces[static_cast<size_t>(m_rank)];
    if (index < 0 || static_cast<size_t>(index) >= lt.analysis->steps.size()) {
        clearScope();
        return;
    }
    const int64_t number = lt.analysis->steps[static_cast<size_t>(index)].number;
    // The step's span (analysis::stepSpan, the one step length).
    scopeTo(analysis::stepSpan(lt.analysis->steps, size_t(index), lt.analysis->window.endNs),
            tr("step #%1").arg(number),
            "ProfilerStep#" + std::to_string(number) + " (to the next step's start)");
}

void MainWindow::scopeToRange(int64_t lo, int64_t hi) {
    if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size() || hi <= lo)
        return;
    const LoadedTrace& lt = m_doc->traces[static_cast<size_t>(m_rank)];
    const int64_t origin = lt.analysis->window.startNs;
    const std::string from = base::formatDuration(lo - origin),
                      to = base::formatDuration(hi - origin);
    const QString what =
        tr("range %1 … %2").arg(QString::fromStdString(from), QString::fromStdString(to));
    scopeTo({lo, hi}, what, "the range " + from + " to " + to + " from the window's start");
}

void MainWindow::selectStep(int64_t number) {
    if (!m_doc || m_rank < 0 || static_cast<size_t>(m_rank) >= m_doc->traces.size()) return;
    const auto& steps = m_doc->traces[static_cast<size_t>(m_rank)].analysis->steps;
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].number == number && int(i) + 1 < m_steps->count()) {
            m_steps->setCurrentIndex(int(i) + 1);
            return;
        }
}

void MainWindow::fillSteps() {
    m_steps->blockSignals(true);
    m_steps->clear();
    m_steps->addItem(tr("All steps"));
    if (m_doc && m_rank >= 0 && static_cast<size_t>(m_rank) < m_doc->traces.size()) {
        const auto& a = *m_doc->traces[static_cast<size_t>(m_rank)].analysis;
        // Warm-up steps (left out of the findings' window) are marked.
        // The step's time as everywhere else (analysis::stepSpan: to the next step's start).
        for (size_t i = 0; i < a.steps.size(); ++i) {
            const auto& st = a.steps[i];
            const auto span = analysis::stepSpan(a.steps, i, a.window.endNs);
            m_steps->addItem(QString("ProfilerStep#%1  (%2 ms)%3")
                                 .arg(st.number)
                                 .arg(QString::number(double(span.end - span.start) / 1e6, 'f', 1))
                                 .arg(st.warmup ? tr("  warm-up") : QString()));
        }
    }
    m_steps->setEnabled(m_steps->count() > 1);
    m_steps->blockSignals(false);
}

void MainWindow::showError(const QString& message) {
    m_bannerWarns = false;
    m_banner->setStyleSheet("QLabel { background: #fdecea; color: #8a1c14; border: 1px solid #f5c2bd; padding: 8px; }");
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setText(message);
    m_banner->show();
}

void MainWindow::showWarning(const QString& message) {
    m_bannerWarns = true;
    m_banner->setStyleSheet("QLabel { background: #fff4d6; color: #6b4a00; border: 1px solid #f0d48a; padding: 8px; }");
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setText(message.toHtmlEscaped() + QStringLiteral(" <a href='#notes'>%1</a>").arg(tr("Import notes")));
    m_banner->show();
}

QString MainWindow::importProblems(const model::Diagnostics& d) {
    // What was lost or changed (Error severity): the user must know before trusting a number.
    QStringList parts;
    for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<model::DiagnosticKind>(k);
        const auto& info = model::diagnosticInfo(kind);
        if (!d.count(kind) || info.severity != model::Severity::Error) continue;
        QString part = QString("%1 × %2").arg(QLocale().toString(qulonglong(d.count(kind))),
                                               QString::fromStdString(std::string(info.summary)));
        if (!d.examples(kind).empty()) {
            const auto& ex = d.examples(kind).front();
            part += " (" + (ex.byteOffset == model::Diagnostics::kNoOffset ? QString() : tr("byte %1: ").arg(ex.byteOffset)) +
                    QString::fromStdString(ex.detail).left(160) + ")";
        }
        parts << part;
    }
    return parts.join("; ");
}

CompareWindow* MainWindow::compareWithBaseline(const QString& before) {
    if (!m_doc) {
        showError(tr("Open a trace first: the compare view sets a baseline against it."));
        return nullptr;
    }
    auto* w = new CompareWindow;
    w->setAttribute(Qt::WA_DeleteOnClose);
    w->resize(size());
    w->openBaseline(before, m_doc);
    w->show();
    return w;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    QStringList paths;
    for (const QUrl& u : e->mimeData()->urls())
        if (u.isLocalFile()) paths << u.toLocalFile();
    // With Shift, one trace dropped on an open one is its baseline: the compare view.
    if ((e->modifiers() & Qt::ShiftModifier) && paths.size() == 1 && m_doc) {
        compareWithBaseline(paths.front());
        return;
    }
    openPaths(paths);
}

} // namespace stallscope::gui
