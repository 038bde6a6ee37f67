#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace stallscope::importers {

/// Replaces each byte that is not part of a valid UTF-8 sequence by '?', in place
/// (same length, so byte offsets stay true). Calls `onInvalid(offset)` per bad byte.
/// Returns the number of bytes replaced.
size_t sanitizeUtf8(char* data, size_t len, const std::function<void(size_t)>& onInvalid);

} // namespace stallscope::importers
