#pragma once
// Statistics of a selected time range: per device busy/idle and utilisation, the idle
// causes inside it, and the top kernels and CPU operators by time inside it.
#include "stallscope/analysis/analysis.h"

#include <QWidget>

#include <memory>

class QPushButton;
class QTextBrowser;

namespace stallscope::gui {

struct RangeStats {
    struct Device {
        int32_t device = -1;
        int64_t busyNs = 0;
        std::array<int64_t, analysis::kIdleCauseCount> idleByCause{};
    };
    int64_t startNs = 0, endNs = 0;
    std::vector<Device> devices;
    std::vector<std::pair<std::string, int64_t>> kernels;    // by time inside the range
    std::vector<std::pair<std::string, int64_t>> operators;  // CPU ops (inclusive, clipped)
};

/// Computes the range statistics (binary searches per track; clips durations to the range).
RangeStats computeRangeStats(const model::Trace& t, const analysis::AnalysisResult* a, int64_t lo, int64_t hi);

class RangePanel : public QWidget {
    Q_OBJECT
public:
    explicit RangePanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis);
    void showRange(int64_t lo, int64_t hi);
    [[nodiscard]] const RangeStats& stats() const { return m_stats; }
    [[nodiscard]] QTextBrowser* browser() const { return m_browser; }
    [[nodiscard]] QPushButton* analyseButton() const { return m_analyse; }

Q_SIGNALS:
    /// "Analyse this range": scope the findings, statistics and flame graph to [lo, hi).
    void scopeRequested(int64_t lo, int64_t hi);

private:
    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    RangeStats m_stats;
    QTextBrowser* m_browser;
    QPushButton* m_analyse = nullptr;
    int64_t m_lo = 0, m_hi = 0;
};

} // namespace stallscope::gui
