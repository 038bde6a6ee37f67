#include "record_dialog.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QVBoxLayout>

#include <functional>

namespace stallscope::gui {

namespace {

QWidget* withBrowse(QLineEdit* edit, QWidget* parent, std::function<QString()> browse) {
    auto* row = new QWidget(parent);
    auto* l = new QHBoxLayout(row);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(edit, 1);
    auto* b = new QPushButton(QObject::tr("Browse…"), row);
    QObject::connect(b, &QPushButton::clicked, row, [edit, browse] {
        const QString v = browse();
        if (!v.isEmpty()) edit->setText(v);
    });
    l->addWidget(b);
    return row;
}

} // namespace

RecordDialog::RecordDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Record a program"));
    setMinimumWidth(640);
    m_command = new QLineEdit(this);
    m_command->setPlaceholderText(tr("python train.py --epochs 1"));
    m_demos = new QComboBox(this);
    m_demos->addItem(tr("None: record the command above"));
    m_demos->setEnabled(false);
    connect(m_demos, &QComboBox::activated, this, [this](int i) {
        const QString exe = QString::fromStdString(capture::demoExecutablePath().string());
        if (i <= 0 || exe.isEmpty()) return;
        // Quoted as QProcess::splitCommand reads it back.
        const QString quoted = exe.contains(' ') ? '"' + QString(exe).replace('"', "\"\"\"") + '"' : exe;
        m_command->setText(quoted + ' ' + m_demos->itemData(i).toString());
    });
    m_directory = new QLineEdit(QDir::currentPath(), this);
    m_environment = new QPlainTextEdit(this);
    m_environment->setPlaceholderText(tr("KEY=VALUE, one per line (added to this environment)"));
    m_environment->setFixedHeight(70);
    m_delay = new QDoubleSpinBox(this);
    m_delay->setRange(0, 3600);
    m_delay->setSuffix(tr(" s"));
    m_duration = new QDoubleSpinBox(this);
    m_duration->setRange(0, 24 * 3600);
    m_duration->setSuffix(tr(" s"));
    m_duration->setSpecialValueText(tr("until the program ends"));
    m_output = new QLineEdit(QDir::current().filePath(
                                 QString("stallscope-%1.pt.trace.json.gz")
                                     .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"))),
                             this);
    m_capability = new QLabel(QString::fromStdString(capture::captureFeatureLine()), this);
    m_capability->setWordWrap(true);
    m_capability->setStyleSheet("color: gray");

    auto* form = new QFormLayout;
    form->addRow(tr("Command:"), m_command);
    form->addRow(tr("Or a demo:"), m_demos);
    form->addRow(tr("Working folder:"), withBrowse(m_directory, this, [this] {
                     return QFileDialog::getExistingDirectory(this, tr("Working folder"), m_directory->text());
                 }));
    form->addRow(tr("Environment:"), m_environment);
    form->addRow(tr("Start after:"), m_delay);
    form->addRow(tr("Record for:"), m_duration);
    form->addRow(tr("Save as:"), withBrowse(m_output, this, [this] {
                     return QFileDialog::getSaveFileName(this, tr("Save the recording as"), m_output->text(),
                                                         tr("Traces (*.pt.trace.json.gz *.json.gz *.json)"));
                 }));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    buttons->addButton(tr("Record"), QDialogButtonBox::AcceptRole)->setDefault(true);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* l = new QVBoxLayout(this);
    l->addLayout(form);
    l->addWidget(m_capability);
    l->addWidget(buttons);
    listDemos();
}

void RecordDialog::listDemos() {
    const QString exe = QString::fromStdString(capture::demoExecutablePath().string());
    if (exe.isEmpty()) {
        m_demos->setItemText(0, tr("None (the LibTorch demos were not built)"));
        return;
    }
    // The demo program loads LibTorch (a fraction of a second): list without blocking.
    auto* p = new QProcess(this);
    connect(p, &QProcess::finished, this, [this, p](int code) {
        p->deleteLater();
        if (code != 0) return;
        // "  dataloader        each batch is read ..."
        for (const QString& line : QString::fromUtf8(p->readAllStandardOutput()).split('\n')) {
            if (!line.startsWith("  ")) continue;
            const QString t = line.trimmed();
            const int sp = int(t.indexOf(' '));
            if (sp <= 0) continue;
            const QString name = t.left(sp), text = t.mid(sp).trimmed();
            m_demos->addItem(name + " — " + text, name);
            m_demos->setItemData(m_demos->count() - 1, text, Qt::ToolTipRole);
        }
        m_demos->setEnabled(m_demos->count() > 1);
    });
    p->start(exe, {"list"});
}

void RecordDialog::setCommand(const QString& commandLine) { m_command->setText(commandLine); }
void RecordDialog::setOutput(const QString& path) { m_output->setText(path); }

bool RecordDialog::options(capture::RecordOptions& out, QString& error) const {
    const QStringList argv = QProcess::splitCommand(m_command->text());
    if (argv.isEmpty()) {
        error = tr("Enter the command to record, e.g. python train.py");
        return false;
    }
    out = {};
    for (const QString& a : argv) out.command.push_back(a.toStdString());
    out.workingDirectory = m_directory->text().toStdString();
    if (!m_directory->text().isEmpty() && !QDir(m_directory->text()).exists()) {
        error = tr("The working folder %1 does not exist").arg(m_directory->text());
        return false;
    }
    for (const QString& line : m_environment->toPlainText().split('\n', Qt::SkipEmptyParts)) {
        const int eq = int(line.indexOf('='));
        if (eq <= 0) {
            error = tr("Environment lines are KEY=VALUE: %1").arg(line);
            return false;
        }
        out.environment.emplace_back(line.left(eq).trimmed().toStdString(), line.mid(eq + 1).toStdString());
    }
    out.delaySeconds = m_delay->value();
    out.durationSeconds = m_duration->value();
    out.output = m_output->text().toStdString();
    if (m_output->text().isEmpty()) {
        error = tr("Choose where to save the recording");
        return false;
    }
    return true;
}

} // namespace stallscope::gui
