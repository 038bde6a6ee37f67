#include "utf8.h"

namespace stallscope::importers {

namespace {
// Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when invalid.
size_t validSequence(const unsigned char* p, size_t avail) {
    const unsigned char c = p[0];
    if (c < 0x80) return 1;
    auto cont = [&](size_t i) { return i < avail && (p[i] & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;  // overlong
        if (c == 0xED && p[1] > 0x9F) return 0;  // surrogates
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;
        if (c == 0xF4 && p[1] > 0x8F) return 0;
        return 4;
    }
    return 0;
}
} // namespace

size_t sanitizeUtf8(char* data, size_t len, const std::function<void(size_t)>& onInvalid) {
    auto* p = reinterpret_cast<unsigned char*>(data);
    size_t replaced = 0;
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const size_t n = validSequence(p + i, len - i);
        if (n == 0) {
            p[i] = '?';
            ++replaced;
            if (onInvalid) onInvalid(i);
            ++i;
        } else {
            i += n;
        }
    }
    return replaced;
}

} // namespace stallscope::importers
