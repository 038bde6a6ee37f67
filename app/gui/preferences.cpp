#include "preferences.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace stallscope::gui {

namespace settings {

ThemeMode theme() {
    const QString t = QSettings().value("appearance/theme", "system").toString();
    return t == "dark" ? ThemeMode::Dark : t == "light" ? ThemeMode::Light : ThemeMode::System;
}
void setTheme(ThemeMode mode) {
    QSettings().setValue("appearance/theme", mode == ThemeMode::Dark    ? "dark"
                                             : mode == ThemeMode::Light ? "light"
                                                                        : "system");
}
bool operatorsOnly() {
    return QSettings().value("timeline/operatorsOnly", false).toBool();
}
void setOperatorsOnly(bool on) {
    QSettings().setValue("timeline/operatorsOnly", on);
}
bool reopenLast() {
    return QSettings().value("session/reopenLast", false).toBool();
}
void setReopenLast(bool on) {
    QSettings().setValue("session/reopenLast", on);
}
QString lastSession() {
    return QSettings().value("session/last").toString();
}
void setLastSession(const QString& path) {
    QSettings().setValue("session/last", QFileInfo(path).absoluteFilePath());
}
QString lastFolder() {
    return QSettings().value("files/lastFolder").toString();
}
void setLastFolder(const QString& fileOrFolder) {
    const QFileInfo fi(fileOrFolder);
    QSettings().setValue("files/lastFolder",
                         fi.isDir() ? fi.absoluteFilePath() : fi.absolutePath());
}
int recentCount() {
    return std::clamp(QSettings().value("files/recentCount", 10).toInt(), 1, 30);
}
void setRecentCount(int n) {
    QSettings().setValue("files/recentCount", std::clamp(n, 1, 30));
}
QString exportFormat() {
    return QSettings().value("export/format", "html").toString();
}
void setExportFormat(const QString& extension) {
    QSettings().setValue("export/format", extension);
}

} // namespace settings

PreferencesDialog::PreferencesDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Preferences"));
    setMinimumWidth(480);
    m_theme = new QComboBox(this);
    m_theme->addItem(tr("Follow the system"), int(ThemeMode::System));
    m_theme->addItem(tr("Light"), int(ThemeMode::Light));
    m_theme->addItem(tr("Dark"), int(ThemeMode::Dark));
    m_theme->setCurrentIndex(m_theme->findData(int(settings::theme())));
    m_reopen = new QCheckBox(tr("Reopen the last trace when Stallscope starts"), this);
    m_reopen->setChecked(settings::reopenLast());
    m_recent = new QSpinBox(this);
    m_recent->setRange(1, 30);
    m_recent->setValue(settings::recentCount());
    auto* clear = new QPushButton(tr("Clear the list"), this);
    connect(clear, &QPushButton::clicked, this, [this, clear] {
        Q_EMIT clearRecentRequested();
        clear->setEnabled(false);
    });
    m_format = new QComboBox(this);
    const std::pair<QString, QString> formats[] = {{tr("HTML (self-contained)"), "html"},
                                                   {tr("PDF"), "pdf"},
                                                   {tr("Markdown"), "md"},
                                                   {tr("JSON (the analysis)"), "json"},
                                                   {tr("Annotated trace"), "trace.json.gz"}};
    for (const auto& [label, ext] : formats) m_format->addItem(label, ext);
    m_format->setCurrentIndex(std::max(0, m_format->findData(settings::exportFormat())));

    auto* recentRow = new QWidget(this);
    auto* rl = new QHBoxLayout(recentRow);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(m_recent);
    rl->addWidget(clear);
    rl->addStretch();
    auto* form = new QFormLayout;
    form->addRow(tr("Theme:"), m_theme);
    form->addRow(tr("At start:"), m_reopen);
    form->addRow(tr("Recent files:"), recentRow);
    form->addRow(tr("Export as:"), m_format);
    auto* where = new QLabel(tr("Stored in %1").arg(QSettings().fileName().toHtmlEscaped()), this);
    where->setStyleSheet("color: gray");
    where->setWordWrap(true);
    where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        apply();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* l = new QVBoxLayout(this);
    l->addLayout(form);
    l->addWidget(where);
    l->addStretch();
    l->addWidget(buttons);
}

void PreferencesDialog::apply() {
    settings::setTheme(static_cast<ThemeMode>(m_theme->currentData().toInt()));
    settings::setReopenLast(m_reopen->isChecked());
    settings::setRecentCount(m_recent->value());
    settings::setExportFormat(m_format->currentData().toString());
}

} // namespace stallscope::gui
