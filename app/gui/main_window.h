#pragma once
// The main window: findings on the left, the timeline in the centre, and below it tabs for
// the selected event, flame graphs, statistics, a selected range, ranks and import notes.
// Files load on a worker thread with a progress bar and Cancel.
#include "background_job.h"
#include "document.h"
#include "panel.h"
#include "theme.h"

#include "stallscope/capture/recorder.h"

#include <QHash>
#include <QMainWindow>
#include <QTemporaryDir>

#include <memory>
#include <vector>

class QAction;
class QActionGroup;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTextBrowser;

namespace stallscope::gui {

class CapturePicker;
class FindingsPanel;
class LoadWorker;
class LiveRecording;
class ReportExport;
class TimelineView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    using View = PanelId; // the bottom views (panel.h)

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads a file or folder on the worker thread.
    void openPath(const QString& path);
    /// Opens the compare view (compare_window.h): `before` (a baseline file or folder)
    /// against the document shown; returns the window (it deletes itself when closed).
    class CompareWindow* compareWithBaseline(const QString& before);
    /// Several traces (a file manager's selection, a drop): one session, as a folder of ranks
    /// is (a folder of links, kept while the window lives); one path: openPath.
    void openPaths(const QStringList& paths);
    /// The window layout of the last run (geometry, dock, toolbar): the interactive start
    /// restores it; screenshots and tests keep theirs.
    void restoreLayout();
    /// The folder of the last report written (File ▸ Open Containing Folder), empty before.
    [[nodiscard]] QString lastExportFolder() const { return m_lastExportFolder; }
    [[nodiscard]] QAction* openFolderAction() const { return m_openFolderAction; }
    /// The keyboard shortcut sheet's text (HTML): every menu action with a shortcut, then the
    /// timeline's own keys.
    [[nodiscard]] QString shortcutSheetHtml() const;
    /// Help ▸ What do the findings mean?: the Markdown shown (from docs/analysis.md).
    [[nodiscard]] static QString findingsHelpMarkdown();
    void showShortcuts();
    void showFindingsHelp();
    void showPreferences();
    /// Shows an already loaded document (the headless screenshot path uses this directly).
    void setDocument(std::shared_ptr<Document> doc);
    /// Shows trace `index` of the document (a rank, or one capture of a rank).
    void showRank(int index);
    /// A rank by its number (its latest steady capture when it has several), at a step column
    /// of the ranks' heat map (-1: the whole window); in a many-ranks document a rank whose
    /// detail is not loaded is loaded first.
    void showRankAt(int32_t rank, int column = -1);
    /// Selects finding `row` (0-based): list, detail pane, timeline shading and zoom.
    void selectFinding(int row);
    void showView(View view);
    /// Selects step `number` of the shown trace in the Step box (the timeline zooms to it).
    void selectStep(int64_t number);
    /// The step the findings, statistics and flame graph are scoped to (the shown trace
    /// re-analysed with that step as the window), or null for the analysed window; the label
    /// names the scope while one is set.
    [[nodiscard]] const analysis::AnalysisResult* scopedAnalysis() const { return m_scoped.get(); }
    [[nodiscard]] QLabel* scopeLabel() const { return m_scopeLabel; }
    /// Whether the toolbar shows the scope (its action's visibility: a toolbar's widgets are
    /// shown and hidden through their actions).
    [[nodiscard]] bool scopeShown() const;
    /// Scopes the findings, statistics and flame graph to [lo, hi) of the shown trace (the
    /// Range tab's "Analyse this range").
    void scopeToRange(int64_t lo, int64_t hi);
    /// Back to the analysed window.
    void clearScope();
    /// Puts `text` in the search box and selects its first match on the timeline.
    void searchFor(const QString& text);
    void setThemeMode(ThemeMode mode);
    /// Records a program (File ▸ Record…): a live timeline while it runs, then the analysis.
    bool startRecording(const capture::RecordOptions& options);
    void stopRecording();
    [[nodiscard]] LiveRecording* liveRecording() const { return m_live; }
    /// Writes the document as a report (format by extension, else by the dialog's filter).
    void exportReport(const QString& path, const QString& selectedFilter = {});
    [[nodiscard]] ReportExport* reportExport() const { return m_export; }

    [[nodiscard]] TimelineView* timeline() const { return m_timeline; }
    [[nodiscard]] FindingsPanel* findings() const { return m_findings; }
    [[nodiscard]] QTabWidget* bottomTabs() const { return m_tabs; }
    [[nodiscard]] const Document* document() const { return m_doc.get(); }
    /// The index of the shown trace in the document (a rank, or a capture of one).
    [[nodiscard]] int currentRank() const { return m_rank; }
    /// The shown rank's captures (empty unless it was captured more than once).
    [[nodiscard]] CapturePicker* capturePicker() const { return m_captures; }
    [[nodiscard]] QComboBox* rankCombo() const { return m_rankCombo; }
    [[nodiscard]] QLabel* errorBanner() const { return m_banner; }
    /// True when the banner shows a warning (amber: read with problems), not an error.
    [[nodiscard]] bool bannerIsWarning() const { return m_bannerWarns; }
    [[nodiscard]] QLabel* statusLabel() const { return m_status; }
    [[nodiscard]] QPushButton* stopButton() const { return m_stop; }
    [[nodiscard]] bool loading() const;
    /// The load worker (tests and benchmarks lower its progressive-open delay).
    [[nodiscard]] LoadWorker* loadWorker() const { return m_worker; }

protected:
    /// The window's one-key shortcuts (0, W, A, S, D, ...) reach the window from its tables
    /// too: an item view's type-to-search would otherwise take them.
    bool eventFilter(QObject* watched, QEvent* e) override;
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void createWidgets();
    void createActions();  // main_window_actions.cpp
    void createMenus();
    void createToolBar();
    void updateRecentMenu();
    void addRecent(const QString& path);
    void showError(const QString& message);
    /// The amber banner, with a link to the import notes.
    void showWarning(const QString& message);
    static QString importProblems(const model::Diagnostics& diagnostics);
    void onLoaded(std::shared_ptr<Document> doc);
    /// Progressive open: the document so far replaces the last one, keeping the user's view.
    void onPartial(std::shared_ptr<Document> doc);
    /// The blue banner of a progressive open (plain text).
    void showNotice(const QString& message);
    [[nodiscard]] QString partialText(const Document& doc) const;
    void fillSteps();
    void fillRanks();
    /// The rank combo and the capture picker on the shown trace; the status line's capture.
    void syncRankPickers();
    void showRanksOnly();
    void showStepColumn(int column);
    void showAbout();
    void updateSearchLabel();

    std::shared_ptr<Document> m_doc;
    int m_rank = 0;
    int m_pendingStep = -1; // the step column to show once a rank's detail has loaded
    LoadWorker* m_worker = nullptr;
    ReportExport* m_export = nullptr;
    LiveRecording* m_live = nullptr;
    QPushButton* m_stop = nullptr;
    QAction* m_exportAction = nullptr;
    TimelineView* m_timeline = nullptr;
    FindingsPanel* m_findings = nullptr;
    std::vector<std::unique_ptr<Panel>> m_panels; // the bottom tabs, from panels() (panel.h)
    std::vector<PanelId> m_panelIds;
    QTabWidget* m_tabs = nullptr;
    QLabel* m_banner = nullptr;
    bool m_bannerWarns = false;
    bool m_acceptPartials = false; // a load of one path is running: its partial documents show
    QHash<Qt::Key, QAction*> m_oneKeyShortcuts; // eventFilter: menu shortcuts without a modifier
    bool m_keepView = false; // showRank keeps the timeline's view (a newer partial)
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_status = nullptr;
    QComboBox* m_steps = nullptr;
    QLabel* m_scopeLabel = nullptr;   // "Scope: ProfilerStep#9 ..." while a step is chosen
    QAction* m_scopeAction = nullptr; // the label's place in the toolbar (shown with it)
    std::shared_ptr<const analysis::AnalysisResult> m_scoped;
    LatestJob<std::shared_ptr<const analysis::AnalysisResult>> m_scopeJob{this};
    /// Scopes the findings, statistics and flame graph to step `index` of the shown trace
    /// (re-analysed on the pool), or back to the analysed window (index < 0).
    void scopeToStep(int index);
    void scopeTo(model::Interval span, const QString& what, const std::string& description);
    /// Bookmarks are kept per trace file (QSettings "bookmarks/<sha1 of its path>").
    void saveBookmarks();
    void loadBookmarks();
    [[nodiscard]] QString bookmarkKey() const;
    void showScoped(const std::shared_ptr<const analysis::AnalysisResult>& a);
    QComboBox* m_rankCombo = nullptr; // one item per rank; its data: the trace shown first
    CapturePicker* m_captures = nullptr;
    QAction* m_capturesAction = nullptr; // the picker and its label in the toolbar
    QAction* m_capturesLabelAction = nullptr;
    QLineEdit* m_search = nullptr;
    QLabel* m_searchCount = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_rankComboAction = nullptr;
    QString m_loadingPath;
    QString m_lastExportFolder;
    QAction* m_openFolderAction = nullptr;
    QActionGroup* m_themeGroup = nullptr;
    std::vector<std::unique_ptr<QTemporaryDir>> m_selections; // openPaths' folders of links
    bool isSelection(const QString& path) const;
};

} // namespace stallscope::gui
