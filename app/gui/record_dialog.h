#pragma once
// File ▸ Record…: what to run and how to record it (command line, working directory,
// environment, delay, duration, output file).
#include "stallscope/capture/recorder.h"

#include <QDialog>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace stallscope::gui {

class RecordDialog : public QDialog {
    Q_OBJECT
public:
    explicit RecordDialog(QWidget* parent = nullptr);
    /// The options to record with; false with `error` set when the input is not usable.
    bool options(capture::RecordOptions& out, QString& error) const;
    void setCommand(const QString& commandLine);
    void setOutput(const QString& path);

private:
    QLineEdit* m_command;
    QLineEdit* m_directory;
    QPlainTextEdit* m_environment;
    QDoubleSpinBox* m_delay;
    QDoubleSpinBox* m_duration;
    QLineEdit* m_output;
    QLabel* m_capability;
};

} // namespace stallscope::gui
