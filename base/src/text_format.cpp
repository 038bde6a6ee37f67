#include "stallscope/base/text_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace stallscope::base {

namespace {
/// "12345.678" -> "12,345.678"
std::string groupThousands(std::string fixed) {
    const size_t start = fixed[0] == '-' ? 1 : 0;
    size_t end = fixed.find('.');
    if (end == std::string::npos) end = fixed.size();
    for (size_t i = end; i > start + 3; i -= 3) fixed.insert(i - 3, 1, ',');
    return fixed;
}
} // namespace

std::string formatDuration(int64_t ns, const DurationStyle& style) {
    const double a = std::fabs(static_cast<double>(ns));
    if (a < 1e3) return std::to_string(ns) + " ns";
    double v;
    int decimals;
    const char* unit;
    if (a < 1e6)
        v = static_cast<double>(ns) / 1e3, decimals = style.microsDecimals,
        unit = style.microSign ? " µs" : " us";
    else if (a < 1e9)
        v = static_cast<double>(ns) / 1e6, decimals = style.millisDecimals, unit = " ms";
    else
        v = static_cast<double>(ns) / 1e9, decimals = style.secondsDecimals, unit = " s";
    if (decimals == DurationStyle::kSignificant) {
        const double m = std::fabs(v);
        decimals = m >= 100 ? 1 : m >= 10 ? 2 : 3;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 9), v);
    return (style.groupThousands ? groupThousands(buf) : std::string(buf)) + unit;
}

std::string formatPercent(double share, int decimals, bool space) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", std::clamp(decimals, 0, 9), share * 100,
                  space ? " %" : "%");
    return buf;
}

std::string formatBytes(uint64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (b < 1e3) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else if (b < 1e6) std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
    else if (b < 1e9) std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
    else std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
    return buf;
}

std::string formatMemory(uint64_t bytes) {
    char buf[32];
    const double b = double(bytes);
    if (b >= 1e9)
        std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    else if (b >= 1e6)
        std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
    else if (b >= 1e3)
        std::snprintf(buf, sizeof buf, "%.0f kB", b / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

std::string formatCount(uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    const size_t lead = digits.size() % 3;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (i + 3 - lead) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string formatTimestamp(int64_t ns) {
    // Absolute epoch times (after 2001) get a calendar date; relative ones an offset.
    if (ns < 1'000'000'000'000'000'000LL) {
        std::string s =
            "+"; // not "+" + std::string: GCC 12's -Wrestrict false positive (bug 105329)
        s += formatDuration(ns);
        return s;
    }
    const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[80];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03lld UTC", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>((ns / 1'000'000) % 1000));
    return buf;
}

std::string formatOffset(int64_t ns, int64_t step) {
    if (ns == 0) return "0";
    const double a = std::fabs(static_cast<double>(ns));
    const double unit = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
    const char* name = unit == 1e9 ? " s" : unit == 1e6 ? " ms" : unit == 1e3 ? " µs" : " ns";
    const int decimals =
        std::clamp(static_cast<int>(std::ceil(std::log10(unit / static_cast<double>(std::max<int64_t>(1, step))) - 1e-9)), 0, 9);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%c%.*f%s", ns < 0 ? '-' : '+', decimals, a / unit, name);
    return buf;
}

int64_t tickStep(double nsPerPx, double minPx) {
    const double target = nsPerPx * minPx;
    int64_t step = 1;
    while (true) {
        for (int64_t m : {1, 2, 5})
            if (static_cast<double>(step * m) >= target) return step * m;
        if (step > INT64_MAX / 100) return step;
        step *= 10;
    }
}

} // namespace stallscope::base
