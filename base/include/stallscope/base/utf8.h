#pragma once
// UTF-8 for text from other people's traces: one validator (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF) behind every sanitizer of every layer.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace stallscope::base {

/// Length of the valid UTF-8 sequence at `p` (`avail` bytes readable), or 0 when invalid.
size_t utf8SequenceLength(const unsigned char* p, size_t avail);

/// Replaces each byte that is not part of a valid UTF-8 sequence by '?', in place (same
/// length, so byte offsets stay true: the importers). Calls `onInvalid(offset)` per bad
/// byte when given. Returns the number of bytes replaced.
size_t replaceInvalidUtf8InPlace(char* data, size_t len, const std::function<void(size_t)>& onInvalid = {});

/// Valid UTF-8 without C0 controls (except \t \n \r) and DEL; each invalid byte becomes
/// U+FFFD. Reports and every other output meant for people or markup.
std::string sanitizeUtf8(std::string_view s);

/// Only what is not UTF-8 replaced (U+FFFD per bad byte); everything else kept, controls
/// too (for formats that escape them, such as JSON).
std::string replaceInvalidUtf8(std::string_view s);

/// True when `s` is valid UTF-8.
bool isValidUtf8(std::string_view s);

/// sanitizeUtf8, then every directional embedding, override or isolate that `s` opens and
/// leaves open (U+202A..U+202E, U+2066..U+2068) closed at its end with U+202C / U+2069, so
/// a U+202E in a name cannot reverse the text that follows it. Balanced text is unchanged.
/// Use it wherever a name is joined with other text before escaping.
std::string closeBidi(std::string_view s);

/// At most `maxChars` code points, with "…" when cut.
std::string truncateUtf8(std::string_view s, size_t maxChars);

} // namespace stallscope::base
