#pragma once
// File ▸ Attach…: trace a running PyTorch job (started with KINETO_USE_DAEMON=1) with no
// change to its code. While the dialog is open it answers Kineto's daemon polls
// (capture/kineto_daemon.h) and lists the processes that poll; Trace asks the selected ones (or
// all) for Kineto's own trace, waits for the files on a worker thread and leaves the path to
// open in tracePath() (a file, or a folder of ranks).
#include "stallscope/capture/kineto_daemon.h"

#include <QDialog>

#include <atomic>
#include <memory>
#include <thread>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace stallscope::gui {

class AttachDialog : public QDialog {
    Q_OBJECT
public:
    /// `daemonOptions`: where to serve (the tests use a socket folder of their own).
    explicit AttachDialog(QWidget* parent = nullptr,
                          const capture::kineto::DaemonOptions& daemonOptions = {});
    ~AttachDialog() override;

    /// What to open once the trace came (empty before).
    [[nodiscard]] QString tracePath() const { return m_tracePath; }
    /// False with a message in the banner when the daemon could not start.
    [[nodiscard]] bool serving() const { return m_serving; }
    [[nodiscard]] QTableWidget* processTable() const { return m_table; }
    [[nodiscard]] QPushButton* traceButton() const { return m_trace; }
    [[nodiscard]] QString log() const;
    void setDurationSeconds(double seconds);
    void setOutput(const QString& path);

Q_SIGNALS:
    void traceFinished(bool ok);

protected:
    void reject() override;

private:
    void refresh();
    void startTrace();
    void finishTrace(const capture::kineto::AttachResult& result);
    void appendLog(const QString& line);

    capture::kineto::KinetoDaemon m_daemon;
    bool m_serving = false;
    QLabel* m_banner;
    QTableWidget* m_table;
    QRadioButton* m_byDuration;
    QRadioButton* m_byIterations;
    QDoubleSpinBox* m_duration;
    QSpinBox* m_iterations;
    QCheckBox* m_withStack;
    QCheckBox* m_shapes;
    QLineEdit* m_output;
    QPlainTextEdit* m_log;
    QPushButton* m_trace;
    QPushButton* m_close;
    QTimer* m_timer;
    std::thread m_worker;
    std::atomic<bool> m_cancel{false};
    bool m_running = false;
    QString m_tracePath;
};

} // namespace stallscope::gui
