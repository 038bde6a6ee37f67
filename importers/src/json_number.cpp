#include "json_number.h"

#include <charconv>
#include <cmath>

namespace stallscope::importers {

namespace {
inline bool isDigit(char c) { return c >= '0' && c <= '9'; }

NsResult fromDouble(std::string_view text) {
    double v = 0;
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) return {NumberStatus::OutOfRange, 0};
    if (ec != std::errc() || ptr != text.data() + text.size()) return {NumberStatus::NotANumber, 0};
    const double ns = std::round(v * 1000.0);
    if (!std::isfinite(ns) || ns >= 9.2e18 || ns <= -9.2e18) return {NumberStatus::OutOfRange, 0};
    return {NumberStatus::Ok, static_cast<int64_t>(ns)};
}
} // namespace

NsResult parseMicrosToNs(std::string_view t) {
    size_t i = 0;
    const size_t n = t.size();
    bool neg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
    if (i >= n || !(isDigit(t[i]) || t[i] == '.')) return {NumberStatus::NotANumber, 0};
    uint64_t whole = 0;
    size_t digits = 0;
    for (; i < n && isDigit(t[i]); ++i, ++digits) {
        if (whole > (UINT64_MAX - 9) / 10) return {NumberStatus::OutOfRange, 0};
        whole = whole * 10 + static_cast<uint64_t>(t[i] - '0');
    }
    uint64_t frac = 0;
    int fracDigits = 0;
    bool roundUp = false;
    if (i < n && t[i] == '.') {
        ++i;
        size_t fd = 0;
        for (; i < n && isDigit(t[i]); ++i, ++fd) {
            if (fracDigits < 3) {
                frac = frac * 10 + static_cast<uint64_t>(t[i] - '0');
                ++fracDigits;
            } else if (fd == 3) {
                roundUp = t[i] >= '5';
            }
        }
        if (fd == 0 && digits == 0) return {NumberStatus::NotANumber, 0};
    } else if (digits == 0) {
        return {NumberStatus::NotANumber, 0};
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) return fromDouble(t);
    if (i != n) return {NumberStatus::NotANumber, 0};
    while (fracDigits < 3) {
        frac *= 10;
        ++fracDigits;
    }
    if (roundUp) ++frac;
    uint64_t ns;
    if (__builtin_mul_overflow(whole, uint64_t(1000), &ns) || __builtin_add_overflow(ns, frac, &ns))
        return {NumberStatus::OutOfRange, 0};
    // INT64_MIN ns (-9223372036854775.808 µs) is in range: what a writer of int64 ns emits
    // for the earliest time must read back.
    constexpr uint64_t kMinMagnitude = uint64_t(INT64_MAX) + 1;
    if (ns > (neg ? kMinMagnitude : static_cast<uint64_t>(INT64_MAX))) return {NumberStatus::OutOfRange, 0};
    if (neg) return {NumberStatus::Ok, static_cast<int64_t>(0 - ns)};  // two's complement: 2^63 -> INT64_MIN
    return {NumberStatus::Ok, static_cast<int64_t>(ns)};
}

IntResult parseInt64(std::string_view t) {
    // Fast path: up to 18 plain digits cannot overflow.
    if (!t.empty() && t.size() <= 18) {
        size_t i = t[0] == '-' ? 1 : 0;
        if (i < t.size()) {
            uint64_t v = 0;
            for (; i < t.size(); ++i) {
                const unsigned d = static_cast<unsigned char>(t[i]) - '0';
                if (d > 9) break;
                v = v * 10 + d;
            }
            if (i == t.size()) {
                const auto sv = static_cast<int64_t>(v);
                return {NumberStatus::Ok, t[0] == '-' ? -sv : sv};
            }
        }
    }
    int64_t v = 0;
    if (t.empty()) return {NumberStatus::NotANumber, 0};
    const char* b = t.data();
    if (*b == '+') ++b;
    auto [ptr, ec] = std::from_chars(b, t.data() + t.size(), v);
    if (ec == std::errc::result_out_of_range) return {NumberStatus::OutOfRange, 0};
    if (ec != std::errc() || ptr != t.data() + t.size()) return {NumberStatus::NotANumber, 0};
    return {NumberStatus::Ok, v};
}

bool parseDouble(std::string_view t, double& out) {
    if (!t.empty() && t.front() == '+') t.remove_prefix(1);
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && ptr == t.data() + t.size() && std::isfinite(out);
}

} // namespace stallscope::importers
