#pragma once
// Human-readable numbers for terminal output and reports.
#include <cstdint>
#include <string>

namespace stallscope::base {

/// How a duration is written: the unit follows the magnitude (s, ms, µs, ns); decimals per
/// unit (kSignificant: about four significant digits, "603.6 ms", "12.35 ms", "1.234 s").
/// Nanoseconds are always whole.
struct DurationStyle {
    static constexpr int kSignificant = -1;
    int secondsDecimals = 3, millisDecimals = 3, microsDecimals = 3;
    bool microSign = false;      // "µs" rather than "us"
    bool groupThousands = false; // "1,234.567 s"
};
/// Reports and the CLI: "1.234 ms", "12.300 us".
inline constexpr DurationStyle kDurationPrecise{};
/// Findings' text: "1.23 s", "12.3 ms", "850 us".
inline constexpr DurationStyle kDurationCompact{2, 1, 0, false, false};
/// GUI labels: "603.6 ms", "12.35 µs".
inline constexpr DurationStyle kDurationSignificant{DurationStyle::kSignificant,
                                                    DurationStyle::kSignificant,
                                                    DurationStyle::kSignificant, true, false};

/// The one duration formatter of every layer.
std::string formatDuration(int64_t ns, const DurationStyle& style = kDurationPrecise);
/// A share (0.331) as a percentage with `decimals`: "33.1%", or "33.1 %" with a space.
std::string formatPercent(double share, int decimals = 1, bool space = false);
std::string formatBytes(uint64_t bytes);      // "35.2 MB"
/// A memory size in messages (budgets, what an input needs): "2.5 GB", "640 MB", "12 kB".
std::string formatMemory(uint64_t bytes);
std::string formatCount(uint64_t n);          // "75,718"
std::string formatTimestamp(int64_t ns);      // "2021-06-08 08:57:03.460 UTC" (epoch) or "+1.234 s"

/// A time-axis label: the unit follows the value ("+65.2 ms", not "+65200 µs") and the
/// decimals resolve `step`; "0" for zero.
std::string formatOffset(int64_t ns, int64_t step);
/// The smallest 1-2-5 x 10^k ns step that puts ticks at least `minPx` apart.
int64_t tickStep(double nsPerPx, double minPx);

} // namespace stallscope::base
