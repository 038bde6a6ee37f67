#pragma once
// File ▸ Record…: what to run and how to record it (command line, working directory,
// environment, delay, duration, output file), or one of the built-in LibTorch demos.
#include "stallscope/capture/recorder.h"

#include <QDialog>

class QComboBox;
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
    /// The demo picker (filled from `stallscope-demo list` when that program was built).
    [[nodiscard]] QComboBox* demos() const { return m_demos; }

private:
    void listDemos();

    QLineEdit* m_command;
    QComboBox* m_demos;
    QLineEdit* m_directory;
    QPlainTextEdit* m_environment;
    QDoubleSpinBox* m_delay;
    QDoubleSpinBox* m_duration;
    QLineEdit* m_output;
    QLabel* m_capability;
};

} // namespace stallscope::gui
