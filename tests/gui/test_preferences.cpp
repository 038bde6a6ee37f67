// The GUI's habits between runs: the window layout, theme, recent files and last folder
// persist (QSettings, in a folder of this test's own); Preferences edits them; the shortcut
// sheet lists every menu shortcut; Help shows what the findings mean from docs/analysis.md;
// File ▸ Open Containing Folder follows an export; several files open as one session. With
// STALLSCOPE_SCREENSHOT_DIR set, Preferences and the shortcut sheet are saved
// (docs/screenshots/preferences.png, shortcut-sheet.png).
#include "main_window.h"
#include "preferences.h"
#include "report_export.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>

using namespace stallscope;
using namespace stallscope::gui;

namespace {

QString samplePath() {
    return qEnvironmentVariable("STALLSCOPE_SOURCE_DIR") +
           "/resources/samples/synthetic_training.pt.trace.json.gz";
}

/// Runs `f` on the next modal dialog that opens, then closes it.
void onNextDialog(std::function<void(QDialog*)> f) {
    QTimer::singleShot(200, [f] {
        auto* d = qobject_cast<QDialog*>(QApplication::activeModalWidget());
        if (!d) return;
        f(d);
        d->reject();
    });
}

void save(QWidget* w, const char* name) {
    const QByteArray dir = qgetenv("STALLSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) QVERIFY(w->grab().save(QString::fromUtf8(dir) + "/" + name));
}

} // namespace

class TestPreferences : public QObject {
    Q_OBJECT
    QTemporaryDir m_config;

private Q_SLOTS:
    void initTestCase() {
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_config.path());
        QCoreApplication::setOrganizationName("StallscopeTest");
        QCoreApplication::setApplicationName("StallscopeTest");
        QSettings().clear();
        Theme::apply(*qApp, ThemeMode::Light);
    }

    void layoutThemeRecentAndFolderPersist() {
        {
            MainWindow w;
            w.resize(1111, 777);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.setThemeMode(ThemeMode::Dark);
            w.openPath(samplePath());
            QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 20000);
            w.close();
        }
        QCOMPARE(settings::theme(), ThemeMode::Dark);
        QCOMPARE(QSettings().value("recent").toStringList().value(0),
                 QFileInfo(samplePath()).absoluteFilePath());
        QCOMPARE(settings::lastFolder(), QFileInfo(samplePath()).absolutePath());
        QCOMPARE(settings::lastSession(), QFileInfo(samplePath()).absoluteFilePath());
        MainWindow again;
        QVERIFY(again.size() != QSize(1111, 777)); // screenshots and tests keep their own layout
        again.restoreLayout();
        QCOMPARE(again.size(), QSize(1111, 777)); // the interactive start restores the last run's
        // The theme menu shows the remembered choice.
        bool darkChecked = false;
        for (QAction* top : again.menuBar()->actions())
            if (top->menu())
                for (QAction* a : top->menu()->actions())
                    if (a->menu())
                        for (QAction* t : a->menu()->actions())
                            darkChecked |= t->text() == "Dark" && t->isChecked();
        QVERIFY(darkChecked);
        again.setThemeMode(ThemeMode::Light);
        QCOMPARE(settings::theme(), ThemeMode::Light);
    }

    void preferencesApply() {
        settings::setReopenLast(false);
        PreferencesDialog d;
        d.findChild<QCheckBox*>()->setChecked(true);
        const auto combos = d.findChildren<QComboBox*>();
        QCOMPARE(combos.size(), 2);
        combos[0]->setCurrentIndex(combos[0]->findData(int(ThemeMode::Dark)));
        combos[1]->setCurrentIndex(combos[1]->findData("md"));
        d.findChild<QSpinBox*>()->setValue(3);
        d.resize(560, 260);
        d.show();
        QVERIFY(QTest::qWaitForWindowExposed(&d));
        save(&d, "preferences.png");
        d.apply();
        QVERIFY(settings::reopenLast());
        QCOMPARE(settings::theme(), ThemeMode::Dark);
        QCOMPARE(settings::exportFormat(), QString("md"));
        QCOMPARE(settings::recentCount(), 3);
        settings::setTheme(ThemeMode::Light);
    }

    void shortcutSheetListsTheMenus() {
        MainWindow w;
        const QString html = w.shortcutSheetHtml();
        int checked = 0;
        for (QAction* top : w.menuBar()->actions())
            for (QAction* a : top->menu()->actions())
                if (!a->shortcut().isEmpty()) {
                    QVERIFY2(html.contains(
                                 a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped()),
                             qPrintable(a->text()));
                    ++checked;
                }
        QVERIFY(checked >= 12);
        QVERIFY(html.contains("Attach to PyTorch Job"));
        QVERIFY(html.contains("Preferences"));
        QVERIFY(html.contains("zoom in / out at the mouse"));
        w.resize(1200, 800);
        w.show();
        onNextDialog([](QDialog* d) {
            QCOMPARE(d->objectName(), QString("shortcutSheet"));
            save(d, "shortcut-sheet.png");
        });
        w.showShortcuts();
    }

    void findingsHelpComesFromTheReference() {
        const QString md = MainWindow::findingsHelpMarkdown();
        QVERIFY(md.startsWith("# What do the findings mean?"));
        QVERIFY(md.contains("## Idle-cause attribution"));
        QVERIFY(md.contains("## Findings"));
        QVERIFY(md.contains("## What-if replay"));
        QVERIFY(!md.contains("## Oracles"));      // developer sections stay out
        QVERIFY(!md.contains("Departures from")); // and the developers' notes on the spec
        QVERIFY(!md.contains("../shared/spec"));
        QVERIFY(md.contains("data_loading"));
    }

    void openContainingFolderFollowsAnExport() {
        QTemporaryDir dir;
        MainWindow w;
        QVERIFY(!w.openFolderAction()->isEnabled());
        w.openPath(samplePath());
        QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 20000);
        QSignalSpy done(w.reportExport(), &ReportExport::finished);
        w.exportReport(dir.filePath("r.md"));
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
        QVERIFY(w.openFolderAction()->isEnabled());
        QCOMPARE(w.lastExportFolder(), QFileInfo(dir.path()).absoluteFilePath());
    }

    void severalFilesAreOneSession() {
        // Two ranks of the corpus, as a file manager passes a selection.
        const QString hta = qEnvironmentVariable("STALLSCOPE_SHARED_TRACES") + "/hta/trace_filter";
        const QStringList files = QDir(hta).entryList({"*.json.gz"}, QDir::Files, QDir::Name);
        if (files.size() < 2) QSKIP("the two-rank HTA sample is not here");
        settings::setLastSession("/before");
        QSettings().remove("recent");
        MainWindow w;
        w.openPaths({QDir(hta).filePath(files[0]), QDir(hta).filePath(files[1])});
        QTRY_VERIFY_WITH_TIMEOUT(w.document() != nullptr, 30000);
        QCOMPARE(w.document()->traces.size(), size_t(2));
        QCOMPARE(w.windowTitle(), QString("2 files — Stallscope"));
        // The temporary folder of links is neither the last session, a recent file, nor the
        // last folder: the first file's folder is.
        QCOMPARE(settings::lastSession(), QString("/before"));
        QVERIFY(QSettings().value("recent").toStringList().isEmpty());
        QCOMPARE(settings::lastFolder(), QFileInfo(hta).absoluteFilePath());
    }
};

QTEST_MAIN(TestPreferences)
#include "test_preferences.moc"
