#pragma once
// A small chart of the idle-cause breakdown of one device: a stacked bar and a legend with
// each cause's time and share of idle time. For a CPU-only trace, the step thread's time by
// cause (AnalysisResult::hostOnly) in the same form.
#include "stallscope/analysis/analysis.h"

#include <QWidget>

namespace stallscope::gui {

class IdleChart : public QWidget {
    Q_OBJECT
public:
    explicit IdleChart(QWidget* parent = nullptr);
    void setDevice(const analysis::DeviceMetrics* device);
    void setHostOnly(const analysis::HostOnlyBreakdown* host);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;

private:
    struct Segment {
        analysis::IdleCause cause;
        int64_t ns;
        QRectF rect;
    };
    std::vector<Segment> m_segments;
    int64_t m_idle = 0, m_window = 0;
    double m_utilization = 0;
    int32_t m_device = -1;
    bool m_hostOnly = false;

    void setBreakdown(const analysis::IdleBreakdown* b);
};

} // namespace stallscope::gui
