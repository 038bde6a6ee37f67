#include "stallscope/base/text_format.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace stallscope::base {

std::string formatDuration(int64_t ns) {
    const double a = std::fabs(static_cast<double>(ns));
    char buf[64];
    if (a < 1e3) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
    else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
    else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
    else std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
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
    if (ns < 1'000'000'000'000'000'000LL) return "+" + formatDuration(ns);
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
