#pragma once
// CUPTI timestamps -> the recorder's timeline (CLOCK_REALTIME nanoseconds).
//
// CUPTI stamps every record (GPU work included: CUPTI converts GPU timestamps to its CPU
// clock) with its own clock, which on Linux x86_64/aarch64 is CLOCK_REALTIME already and on
// WSL CLOCK_MONOTONIC_RAW. We never assume: a calibration reads CLOCK_REALTIME, then
// cuptiGetTimestamp(), then CLOCK_REALTIME again, a few times, and keeps the narrowest
// bracket. When the CUPTI reading lies inside its bracket the clocks are the same and the
// mapping is the identity (exact, no rounding); otherwise the offset is the bracket's
// midpoint minus the CUPTI reading, good to half the bracket's width, and the injection
// re-measures it on every flush so a slewing CLOCK_REALTIME is followed.
#include <cstdint>
#include <span>
#include <string>

namespace stallscope::capture::cupti {

/// One calibration reading: CLOCK_REALTIME before and after one cuptiGetTimestamp().
struct ClockSample {
    int64_t realtimeBefore = 0;
    uint64_t cupti = 0;
    int64_t realtimeAfter = 0;
};

class ClockMap {
public:
    /// Uses the sample with the narrowest bracket; samples whose bracket is negative (the
    /// realtime clock stepped back between the two readings) are ignored. False when no
    /// sample is usable (the previous mapping stays).
    bool calibrate(std::span<const ClockSample> samples);

    /// CUPTI ns -> CLOCK_REALTIME ns.
    [[nodiscard]] int64_t toRealtime(uint64_t cuptiNs) const {
        return static_cast<int64_t>(cuptiNs) + m_offset;
    }
    [[nodiscard]] bool identity() const { return m_identity; }
    [[nodiscard]] bool calibrated() const { return m_calibrated; }
    [[nodiscard]] int64_t offset() const { return m_offset; }
    /// Half the width of the bracket the offset came from (0 for the identity).
    [[nodiscard]] int64_t uncertainty() const { return m_uncertainty; }
    /// For Hello.clock_note: how CUPTI's clock was mapped.
    [[nodiscard]] std::string note() const;

private:
    int64_t m_offset = 0;
    int64_t m_uncertainty = 0;
    bool m_identity = true;
    bool m_calibrated = false;
};

} // namespace stallscope::capture::cupti
