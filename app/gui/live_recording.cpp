#include "live_recording.h"

#include <QElapsedTimer>
#include <QLocale>
#include <QMetaObject>
#include <QTimer>

namespace stallscope::gui {

LiveRecording::LiveRecording(QObject* parent) : QObject(parent), m_timer(new QTimer(this)) {
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &LiveRecording::tick);
}

LiveRecording::~LiveRecording() {
    m_timer->stop();
    if (m_recording) m_recording->stop();
    joinWorker();
}

void LiveRecording::joinWorker() {
    if (m_worker.joinable()) m_worker.join();
}

bool LiveRecording::start(const capture::RecordOptions& options, QString& error) {
    m_options = options;
    m_recording = std::make_unique<capture::Recording>();
    if (const base::Status started = m_recording->start(options); !started) {
        m_recording.reset();
        error = QString::fromStdString(started.error().message);
        return false;
    }
    m_active = true;
    m_timer->start(m_intervalMs);
    return true;
}

std::string LiveRecording::socketPath() const {
    return m_recording ? m_recording->socketPath().string() : std::string();
}

capture::RecordStatus LiveRecording::status() const {
    return m_recording ? m_recording->status() : capture::RecordStatus{};
}

void LiveRecording::tick() {
    if (!m_recording || m_finishing) return;
    const capture::RecordStatus st = m_recording->status();
    QString text = tr("Recording · %1 s · %2 events")
                       .arg(QString::number(st.elapsedSeconds, 'f', 1))
                       .arg(QLocale().toString(qulonglong(st.session.records)));
    if (st.session.droppedBySources) text += tr(" · %1 dropped").arg(QLocale().toString(qulonglong(st.session.droppedBySources)));
    if (st.session.badMessages) text += tr(" · %1 bad messages").arg(st.session.badMessages);
    if (!st.gpuNote.empty()) text += " · " + QString::fromStdString(st.gpuNote);
    Q_EMIT statusChanged(text);
    if (!st.running) {  // the program ended: collect and analyse
        finishOnWorker();
        return;
    }
    if (!m_snapshotBusy.exchange(true)) {
        joinWorker();
        m_worker = std::thread([this] {
            QElapsedTimer t;
            t.start();
            auto trace = m_recording->snapshot();
            auto index = trace ? TimelineIndex::build(*trace) : nullptr;
            const int cost = int(t.elapsed());
            QMetaObject::invokeMethod(this, [this, trace, index, cost] {
                // Snapshots cost O(events): keep them under a third of the time.
                m_intervalMs = std::clamp(cost * 3, 250, 5000);
                m_snapshotBusy = false;
                if (trace && !m_finishing) {
                    ++m_snapshots;
                    Q_EMIT snapshot(trace, index);
                }
            }, Qt::QueuedConnection);
        });
    }
    m_timer->start(m_intervalMs);
}

void LiveRecording::stop() {
    if (!m_recording || m_finishing) return;
    Q_EMIT statusChanged(tr("Stopping…"));
    m_recording->stop();
    finishOnWorker();
}

void LiveRecording::finishOnWorker() {
    if (m_finishing.exchange(true)) return;
    m_timer->stop();
    joinWorker();
    m_worker = std::thread([this] {
        auto result = m_recording->finish();
        const std::string error = result ? std::string() : result.error().message;
        auto trace = result ? result.value() : nullptr;
        const capture::RecordStatus st = m_recording->status();
        if (!trace) {
            QMetaObject::invokeMethod(this, [this, error] {
                m_active = false;
                Q_EMIT failed(QString::fromStdString(error));
            }, Qt::QueuedConnection);
            return;
        }
        auto doc = std::make_shared<Document>();
        doc->path = m_options.output.string();
        model::TraceEntry entry;
        entry.trace = trace;
        entry.path = m_options.output.string();
        entry.label = m_options.output.filename().string();
        doc->session.sourcePath = entry.path;
        doc->session.sourceKind = "recording";
        doc->session.traces.push_back(entry);
        LoadedTrace lt;
        lt.entry = entry;
        lt.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
        lt.timeline = TimelineIndex::build(*trace);
        doc->traces.push_back(std::move(lt));
        QString exit = QString::fromStdString(st.exitDescription);
        if (!st.gpuNote.empty()) exit += " · " + QString::fromStdString(st.gpuNote);
        QMetaObject::invokeMethod(this, [this, doc, exit] {
            m_active = false;
            Q_EMIT statusChanged(tr("Recorded: the program %1").arg(exit));
            Q_EMIT finished(doc);
        }, Qt::QueuedConnection);
    });
}

} // namespace stallscope::gui
