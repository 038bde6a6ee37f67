#include "stallscope_cupti_config.h"

#include "stallscope/capture/protocol.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace stallscope::capture::cupti {

namespace {

std::string_view trimmed(const char* v) {
    std::string_view s(v);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Seconds (decimal, >= 0, at most a year) -> ns; false when not such a number.
bool parseSeconds(std::string_view s, int64_t& ns) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v < 0 ||
        v > 366.0 * 86400.0)
        return false;
    ns = std::llround(v * 1e9);
    return true;
}

bool parseInt(std::string_view s, long long lo, long long hi, long long& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi;
}

void readSeconds(const EnvLookup& env, const char* name, int64_t& ns, CaptureConfig& c) {
    const char* v = env(name);
    if (v == nullptr || trimmed(v).empty()) return;
    if (!parseSeconds(trimmed(v), ns))
        c.problems.push_back(std::string(name) + "='" + v +
                             "' is not a number of seconds (0 to one year); using 0");
}

void readInt(const EnvLookup& env, const char* name, long long lo, long long hi, long long& value,
             CaptureConfig& c) {
    const char* v = env(name);
    if (v == nullptr || trimmed(v).empty()) return;
    long long parsed = 0;
    if (parseInt(trimmed(v), lo, hi, parsed)) {
        value = parsed;
        return;
    }
    c.problems.push_back(std::string(name) + "='" + v + "' is not a whole number from " +
                         std::to_string(lo) + " to " + std::to_string(hi) + "; using " +
                         std::to_string(value));
}

bool readFlag(const EnvLookup& env, const char* name, CaptureConfig& c) {
    const char* v = env(name);
    if (v == nullptr) return false;
    const std::string_view s = trimmed(v);
    if (s.empty() || s == "0" || s == "false" || s == "no") return false;
    if (s == "1" || s == "true" || s == "yes") return true;
    c.problems.push_back(std::string(name) + "='" + v + "' is not 0 or 1; using 0");
    return false;
}

} // namespace

CaptureConfig parseCaptureConfig(const EnvLookup& env) {
    CaptureConfig c;
    if (const char* s = env(kSocketEnv)) c.socketPath = trimmed(s);
    readSeconds(env, kDelayEnv, c.delayNs, c);
    readSeconds(env, kDurationEnv, c.durationNs, c);
    c.profilerRange = readFlag(env, kProfilerRangeEnv, c);
    c.allApi = readFlag(env, kAllApiEnv, c);
    long long mb = static_cast<long long>(c.bufferMb);
    readInt(env, kBufferMbEnv, 8, 8192, mb, c);
    c.bufferMb = static_cast<size_t>(mb);
    long long flush = c.flushMs;
    readInt(env, kFlushMsEnv, 10, 10000, flush, c);
    c.flushMs = static_cast<int>(flush);
    return c;
}

} // namespace stallscope::capture::cupti
