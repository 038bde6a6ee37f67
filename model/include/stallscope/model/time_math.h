#pragma once
// Saturating arithmetic on int64 nanoseconds and the double <-> ns conversions of views.
// Timestamps may sit anywhere in int64 (a hostile trace can put one event at -9e18 and the
// next at +9e18), so a difference or a pixel's time is computed without overflow and
// without the undefined behaviour of casting an out-of-range double to an integer.
#include <cmath>
#include <cstdint>
#include <limits>

namespace stallscope::model {

inline constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();

/// Every time in a finalized Trace lies in [-kModelTimeLimitNs, kModelTimeLimitNs]
/// (2^62 - 1 ns: ±146 years around the epoch or the trace's time base), so the difference of
/// any two of them fits in int64 and analysis code may subtract times without overflow.
/// The finalizer clamps what lies beyond and counts it (DiagnosticKind::TimeClamped).
/// Sums of many durations are not covered: those saturate or use double.
inline constexpr int64_t kModelTimeLimitNs = (int64_t(1) << 62) - 1;

[[nodiscard]] inline int64_t satAdd(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMaxNs : kMinNs;
    return r;
}

[[nodiscard]] inline int64_t satSub(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kMaxNs : kMinNs;
    return r;
}

/// a * k, clamped to the int64 range: a share test such as "10 * traced < total" on sums of
/// durations, which reach 2^63 in a hostile trace.
[[nodiscard]] inline int64_t satMul(int64_t a, int64_t k) {
    int64_t r;
    if (__builtin_mul_overflow(a, k, &r)) return (a < 0) != (k < 0) ? kMinNs : kMaxNs;
    return r;
}

/// A double as int64 ns, truncated toward zero, clamped to the int64 range; NaN is 0.
[[nodiscard]] inline int64_t nsFromDouble(double v) {
    if (std::isnan(v)) return 0;
    // 2^63 is exactly representable; every double below it converts without overflow.
    if (v >= 9223372036854775808.0) return kMaxNs;
    if (v < -9223372036854775808.0) return kMinNs;
    return static_cast<int64_t>(v);
}

/// b - a as a double, exact for differences that fit in int64 (the usual case: absolute
/// epoch timestamps 1.7e18 apart from nothing but close to each other keep their ns).
[[nodiscard]] inline double nsDiff(int64_t b, int64_t a) {
    int64_t r;
    if (!__builtin_sub_overflow(b, a, &r)) return static_cast<double>(r);
    return static_cast<double>(b) - static_cast<double>(a);
}

} // namespace stallscope::model
