#include "stallscope_cupti_clock.h"

#include <limits>

namespace stallscope::capture::cupti {

bool ClockMap::calibrate(std::span<const ClockSample> samples) {
    const ClockSample* best = nullptr;
    int64_t bestWidth = std::numeric_limits<int64_t>::max();
    for (const ClockSample& s : samples) {
        const int64_t width = s.realtimeAfter - s.realtimeBefore;
        if (width < 0 || s.cupti == 0) continue;
        if (width < bestWidth) {
            bestWidth = width;
            best = &s;
        }
    }
    if (best == nullptr) return false;
    const auto cupti = static_cast<int64_t>(best->cupti);
    m_calibrated = true;
    if (cupti >= best->realtimeBefore && cupti <= best->realtimeAfter) {
        m_identity = true;
        m_offset = 0;
        m_uncertainty = 0;
        return true;
    }
    // Midpoint without overflow: before + width / 2.
    const int64_t mid = best->realtimeBefore + bestWidth / 2;
    m_identity = false;
    m_offset = mid - cupti;
    m_uncertainty = (bestWidth + 1) / 2;
    return true;
}

std::string ClockMap::note() const {
    if (!m_calibrated)
        return "CUPTI timestamps used as CLOCK_REALTIME ns (not calibrated: cuptiGetTimestamp "
               "failed)";
    if (m_identity)
        return "CUPTI timestamps are CLOCK_REALTIME ns (checked: cuptiGetTimestamp fell between "
               "two CLOCK_REALTIME readings); no conversion";
    return "CUPTI timestamps mapped to CLOCK_REALTIME ns: offset " + std::to_string(m_offset) +
           " ns (+/- " + std::to_string(m_uncertainty) +
           " ns), measured against CLOCK_REALTIME at start and on every flush";
}

} // namespace stallscope::capture::cupti
