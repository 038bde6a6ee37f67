#pragma once
// What the GUI remembers between runs (QSettings: ~/.config/Stallscope/Stallscope.conf) and
// Edit ▸ Preferences…, which edits it: the theme, reopening the last trace at start, the
// number of recent files, the report format suggested by Export.
#include "theme.h"

#include <QDialog>
#include <QString>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace stallscope::gui {

namespace settings {
ThemeMode theme();
void setTheme(ThemeMode mode);
bool reopenLast();
void setReopenLast(bool on);
/// The trace or folder opened last (for reopening at start).
QString lastSession();
void setLastSession(const QString& path);
/// The folder of the last file dialog.
QString lastFolder();
void setLastFolder(const QString& fileOrFolder);
/// View ▸ CPU threads: operators only (kept between sessions).
bool operatorsOnly();
void setOperatorsOnly(bool on);
int recentCount(); // 1..30
void setRecentCount(int n);
/// "html", "pdf", "md", "json" or "trace.json.gz": what Export suggests.
QString exportFormat();
void setExportFormat(const QString& extension);
} // namespace settings

class PreferencesDialog : public QDialog {
    Q_OBJECT
public:
    explicit PreferencesDialog(QWidget* parent = nullptr);
    /// Writes the settings (OK).
    void apply();

Q_SIGNALS:
    void clearRecentRequested();

private:
    QComboBox* m_theme;
    QCheckBox* m_reopen;
    QSpinBox* m_recent;
    QComboBox* m_format;
};

} // namespace stallscope::gui
