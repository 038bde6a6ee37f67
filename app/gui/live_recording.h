#pragma once
// A recording in progress, for the GUI: runs capture::Recording, publishes snapshots of
// the growing trace a few times per second (taken and indexed on a worker thread, so the
// event loop never waits for them; the interval grows when snapshots get expensive), and
// when the program ends or Stop is pressed, analyses the result like an opened file.
#include "document.h"

#include "stallscope/capture/recorder.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <thread>

class QTimer;

namespace stallscope::gui {

class LiveRecording : public QObject {
    Q_OBJECT
public:
    explicit LiveRecording(QObject* parent = nullptr);
    ~LiveRecording() override;

    bool start(const capture::RecordOptions& options, QString& error);
    /// Stops recording and ends the program; finished() or failed() follows.
    void stop();
    /// From start() until finished() or failed().
    [[nodiscard]] bool active() const { return m_active; }
    [[nodiscard]] capture::RecordStatus status() const;
    /// The recorder's socket (what the program finds in STALLSCOPE_CAPTURE_SOCKET): other
    /// sources may join the recording through it.
    [[nodiscard]] std::string socketPath() const;
    /// Snapshots published so far.
    [[nodiscard]] int snapshots() const { return m_snapshots; }

Q_SIGNALS:
    void snapshot(std::shared_ptr<const stallscope::model::Trace> trace,
                  std::shared_ptr<const stallscope::gui::TimelineIndex> index);
    void statusChanged(const QString& text);
    void finished(std::shared_ptr<stallscope::gui::Document> document);
    void failed(const QString& message);

private:
    void tick();
    void finishOnWorker();
    void joinWorker();

    std::unique_ptr<capture::Recording> m_recording;
    capture::RecordOptions m_options;
    QTimer* m_timer;
    std::thread m_worker;
    std::atomic<bool> m_snapshotBusy{false};
    std::atomic<bool> m_finishing{false};
    int m_intervalMs = 300;
    bool m_active = false;
    int m_snapshots = 0;
};

} // namespace stallscope::gui
