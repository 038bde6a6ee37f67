#pragma once
// Exact decimal parsing of trace numbers: microseconds with up to 3 decimals become
// whole nanoseconds without passing through a double (values exceed 2^53 ns).
#include <cstdint>
#include <string_view>

namespace stallscope::importers {

enum class NumberStatus { Ok, NotANumber, OutOfRange };

struct NsResult {
    NumberStatus status = NumberStatus::NotANumber;
    int64_t ns = 0;
};

/// "1623142623460111" -> 1623142623460111000; "4458676522690.655" -> ...690655;
/// more than 3 decimals round to the nearest ns; exponents are accepted.
NsResult parseMicrosToNs(std::string_view text);

struct IntResult {
    NumberStatus status = NumberStatus::NotANumber;
    int64_t value = 0;
};

/// A plain JSON integer (no fraction, no exponent) into int64.
IntResult parseInt64(std::string_view text);

/// Double from JSON number text; false when the text is not a number.
bool parseDouble(std::string_view text, double& out);

} // namespace stallscope::importers
