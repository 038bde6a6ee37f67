#include "attach_dialog.h"

#include <QCheckBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <set>

namespace stallscope::gui {

namespace k = capture::kineto;

AttachDialog::AttachDialog(QWidget* parent, const k::DaemonOptions& daemonOptions)
    : QDialog(parent) {
    setWindowTitle(tr("Attach to a running PyTorch job"));
    setMinimumSize(760, 560);
    m_banner = new QLabel(this);
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);

    m_table = new QTableWidget(0, 5, this);
    m_table->setHorizontalHeaderLabels(
        {tr("PID"), tr("Job"), tr("Last poll"), tr("State"), tr("Command")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setToolTip(tr(
        "Select the processes to trace; none selected traces all of them (every rank of a job)"));

    m_byDuration = new QRadioButton(tr("For"), this);
    m_byDuration->setChecked(true);
    m_duration = new QDoubleSpinBox(this);
    m_duration->setRange(0.1, 600);
    m_duration->setValue(2);
    m_duration->setSuffix(tr(" s after Kineto's warm-up (~7 s)"));
    m_byIterations = new QRadioButton(tr("For the next"), this);
    m_iterations = new QSpinBox(this);
    m_iterations->setRange(1, 100000);
    m_iterations->setValue(5);
    m_iterations->setSuffix(tr(" optimizer steps"));
    m_iterations->setEnabled(false);
    connect(m_byIterations, &QRadioButton::toggled, this, [this](bool on) {
        m_iterations->setEnabled(on);
        m_duration->setEnabled(!on);
    });
    m_withStack = new QCheckBox(tr("Python stacks"), this);
    m_shapes = new QCheckBox(tr("Input shapes"), this);
    m_output =
        new QLineEdit(QDir::current().filePath(
                          QString("stallscope-attach-%1.pt.trace.json.gz")
                              .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"))),
                      this);
    m_output->setToolTip(
        tr("One process: this file. Several: a folder of that name with one trace per process"));

    auto* mode = new QWidget(this);
    auto* ml = new QHBoxLayout(mode);
    ml->setContentsMargins(0, 0, 0, 0);
    ml->addWidget(m_byDuration);
    ml->addWidget(m_duration);
    ml->addSpacing(12);
    ml->addWidget(m_byIterations);
    ml->addWidget(m_iterations);
    ml->addStretch();
    auto* extras = new QWidget(this);
    auto* el = new QHBoxLayout(extras);
    el->setContentsMargins(0, 0, 0, 0);
    el->addWidget(m_withStack);
    el->addWidget(m_shapes);
    el->addStretch();
    auto* form = new QFormLayout;
    form->addRow(tr("Trace:"), mode);
    form->addRow(tr("Also record:"), extras);
    form->addRow(tr("Save as:"), m_output);

    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(500);
    m_log->setFixedHeight(110);
    m_log->setPlaceholderText(tr("Progress of the trace request appears here."));

    auto* buttons = new QDialogButtonBox(this);
    m_trace = buttons->addButton(tr("Trace"), QDialogButtonBox::AcceptRole);
    m_trace->setDefault(true);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    connect(m_trace, &QPushButton::clicked, this, &AttachDialog::startTrace);
    connect(buttons, &QDialogButtonBox::rejected, this, &AttachDialog::reject);

    auto* l = new QVBoxLayout(this);
    l->addWidget(m_banner);
    l->addWidget(m_table, 1);
    l->addLayout(form);
    l->addWidget(m_log);
    l->addWidget(buttons);

    const base::Status started = m_daemon.start(daemonOptions);
    m_serving = started.ok();
    if (m_serving) {
        m_banner->setText(tr("Listening on <b>%1</b> for PyTorch processes started with "
                             "<code>KINETO_USE_DAEMON=1</code> "
                             "(set before <code>import torch</code>); they poll every 5 s. Kineto "
                             "writes the trace itself, "
                             "operators and kernels, with no change to the training script.")
                              .arg(QString::fromStdString(m_daemon.address()).toHtmlEscaped()));
    } else {
        m_banner->setText(
            tr("<b>Cannot attach:</b> %1")
                .arg(QString::fromStdString(started.error().message).toHtmlEscaped()));
        m_banner->setStyleSheet("color: #b3261e");
    }
    m_trace->setEnabled(false);
    m_timer = new QTimer(this);
    m_timer->setInterval(500);
    connect(m_timer, &QTimer::timeout, this, &AttachDialog::refresh);
    if (m_serving) m_timer->start();
    refresh();
}

AttachDialog::~AttachDialog() {
    m_cancel = true;
    if (m_worker.joinable()) m_worker.join();
    m_daemon.stop();
}

QString AttachDialog::log() const {
    return m_log->toPlainText();
}
void AttachDialog::setDurationSeconds(double seconds) {
    m_duration->setValue(seconds);
}
void AttachDialog::setOutput(const QString& path) {
    m_output->setText(path);
}

void AttachDialog::appendLog(const QString& line) {
    m_log->appendPlainText(line);
}

void AttachDialog::refresh() {
    std::set<int> selected;
    for (const QModelIndex& i : m_table->selectionModel()->selectedRows())
        selected.insert(m_table->item(i.row(), 0)->text().toInt());
    const auto ps = m_daemon.processes();
    const auto now = std::chrono::steady_clock::now();
    m_table->setRowCount(int(ps.size()));
    for (int r = 0; r < int(ps.size()); ++r) {
        const k::KinetoProcess& p = ps[size_t(r)];
        const double ago = std::chrono::duration<double>(now - p.lastSeen).count();
        const QString state = p.pending     ? tr("trace requested")
                              : p.busy      ? tr("tracing")
                              : p.delivered ? tr("traced")
                                            : tr("ready");
        const QStringList cells = {QString::number(p.pid), QString::number(p.jobId),
                                   tr("%1 s ago").arg(ago, 0, 'f', 1), state,
                                   p.command.empty() ? tr("(not visible: another pid namespace?)")
                                                     : QString::fromStdString(p.command)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = m_table->item(r, c);
            if (!item) m_table->setItem(r, c, item = new QTableWidgetItem);
            item->setText(cells[c]);
            if (c == 4) item->setToolTip(cells[c]);
        }
    }
    for (int c = 0; c < 4; ++c) m_table->resizeColumnToContents(c);
    m_table->clearSelection();
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (selected.count(m_table->item(r, 0)->text().toInt())) m_table->selectRow(r);
    m_trace->setEnabled(m_serving && !m_running && !ps.empty());
    if (m_running) m_trace->setText(tr("Tracing…"));
}

void AttachDialog::startTrace() {
    if (m_running || !m_serving) return;
    k::AttachOptions o;
    for (const QModelIndex& i : m_table->selectionModel()->selectedRows())
        o.pids.push_back(m_table->item(i.row(), 0)->text().toInt());
    if (o.pids.empty())
        for (const k::KinetoProcess& p : m_daemon.processes()) o.pids.push_back(p.pid);
    o.waitForProcesses = std::chrono::milliseconds(8000);
    o.settle = std::chrono::milliseconds(0);
    if (m_byIterations->isChecked())
        o.trace.iterations = m_iterations->value();
    else
        o.trace.duration = std::chrono::milliseconds(qint64(m_duration->value() * 1000));
    o.trace.withStack = m_withStack->isChecked();
    o.trace.recordShapes = m_shapes->isChecked();
    const std::filesystem::path output = m_output->text().toStdString();
    m_running = true;
    m_cancel = false;
    m_trace->setEnabled(false);
    m_close->setText(tr("Cancel"));
    if (m_worker.joinable()) m_worker.join();
    m_worker = std::thread([this, o, output] {
        auto say = [this](const std::string& line) {
            QMetaObject::invokeMethod(
                this, [this, l = QString::fromStdString(line)] { appendLog(l); },
                Qt::QueuedConnection);
        };
        k::AttachResult r = k::attachAndTrace(m_daemon, o, say, &m_cancel);
        QString opened;
        if (!r.traces.empty() && !r.cancelled) {
            const base::Result<k::CollectedTraces> collected = k::collectTraces(r, output);
            if (!collected)
                r.problems.push_back(collected.error().message);
            else
                opened = QString::fromStdString(collected.value().open.string());
        }
        QMetaObject::invokeMethod(
            this,
            [this, r, opened] {
                m_tracePath = opened;
                finishTrace(r);
            },
            Qt::QueuedConnection);
    });
}

void AttachDialog::finishTrace(const k::AttachResult& r) {
    m_running = false;
    m_close->setText(tr("Close"));
    m_trace->setText(tr("Trace"));
    for (const std::string& p : r.problems) appendLog(QString::fromStdString(p));
    if (r.cancelled) appendLog(tr("cancelled"));
    refresh();
    const bool ok = !m_tracePath.isEmpty();
    Q_EMIT traceFinished(ok);
    if (ok) {
        appendLog(tr("saved %1").arg(m_tracePath));
        accept();
    }
}

void AttachDialog::reject() {
    if (m_running) {
        // Cancel first; the worker reports back and the dialog stays for the user to close.
        m_cancel = true;
        return;
    }
    QDialog::reject();
}

} // namespace stallscope::gui
