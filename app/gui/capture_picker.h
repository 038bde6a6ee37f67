#pragma once
// The captures of the shown rank (a worker captured several times by tensorboard_trace_handler)
// in the toolbar: in time order, each marked warm-up or steady (workspace::capturePhase) with its
// window and GPU utilisation; choosing one shows that capture's timeline and findings. A rank's
// latest steady capture is the one its summaries use, and the one shown first.
#include "stallscope/workspace/capture_series.h"

#include <QComboBox>

namespace stallscope::gui {

class CapturePicker : public QComboBox {
    Q_OBJECT
public:
    explicit CapturePicker(QWidget* parent = nullptr);
    /// Lists the captures of `series` with capture `current` selected, without a signal; null or
    /// a series of one capture empties the list (nothing to pick).
    void setSeries(const workspace::RankSeries* series, size_t current);
    void showPopup() override;
    /// A capture's line: "#4  steady · 12.00 ms · GPU 90.0 % busy".
    [[nodiscard]] static QString captureText(const workspace::Capture& c, size_t index);
    /// What the line leaves out: its file, when it started, steps, warm-up, which one the
    /// rank's summaries use.
    [[nodiscard]] static QString captureToolTip(const workspace::RankSeries& s, size_t index);

Q_SIGNALS:
    /// The user chose a capture: the index of its trace in the document.
    void traceChosen(int trace);
};

} // namespace stallscope::gui
