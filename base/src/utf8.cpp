#include "stallscope/base/utf8.h"

namespace stallscope::base {

size_t utf8SequenceLength(const unsigned char* p, size_t avail) {
    if (avail == 0) return 0;
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
        if (c == 0xF0 && p[1] < 0x90) return 0;  // overlong
        if (c == 0xF4 && p[1] > 0x8F) return 0;  // above U+10FFFF
        return 4;
    }
    return 0;
}

size_t replaceInvalidUtf8InPlace(char* data, size_t len, const std::function<void(size_t)>& onInvalid) {
    auto* p = reinterpret_cast<unsigned char*>(data);
    size_t replaced = 0;
    size_t i = 0;
    while (i < len) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const size_t n = utf8SequenceLength(p + i, len - i);
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

namespace {
/// Valid UTF-8 with each invalid byte as U+FFFD; C0 controls (but \t \n \r) and DEL
/// dropped when `dropControls`.
std::string cleanUtf8(std::string_view s, bool dropControls) {
    std::string out;
    out.reserve(s.size());
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8SequenceLength(p + i, s.size() - i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
            continue;
        }
        const unsigned char c = p[i];
        if (dropControls && n == 1 && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)) {
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}
} // namespace

std::string sanitizeUtf8(std::string_view s) { return cleanUtf8(s, true); }

std::string replaceInvalidUtf8(std::string_view s) { return cleanUtf8(s, false); }

bool isValidUtf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (size_t i = 0; i < s.size();) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        const size_t n = utf8SequenceLength(p + i, s.size() - i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string closeBidi(std::string_view s) {
    std::string out = sanitizeUtf8(s);
    // UAX #9's directional status stack (X1-X8), kept by kind: 'E' an embedding or
    // override, 'I' an isolate. A PDF pops an 'E' on top; a PDI pops up to and including
    // the innermost 'I' and is ignored without one. A paragraph separator empties the stack,
    // but whether a renderer sees one (HTML collapses line breaks outside <pre>) is not
    // known here: both stacks are kept and both closed. Unmatched closers are ignored by the
    // algorithm, so closing twice or closing balanced text changes nothing on screen.
    std::string whole, paragraph;
    const auto apply = [](std::string& open, unsigned char kind, bool opens) {
        if (opens) open += static_cast<char>(kind);
        else if (kind == 'E' && !open.empty() && open.back() == 'E') open.pop_back();
        else if (kind == 'I' && open.find('I') != std::string::npos) open.resize(open.rfind('I'));
    };
    for (size_t i = 0; i < out.size(); ++i) {
        const auto c = static_cast<unsigned char>(out[i]);
        const auto b1 = i + 1 < out.size() ? static_cast<unsigned char>(out[i + 1]) : 0;
        const auto b2 = i + 2 < out.size() ? static_cast<unsigned char>(out[i + 2]) : 0;
        if (c == '\n' || c == '\r' || (c == 0xC2 && b1 == 0x85) || (c == 0xE2 && b1 == 0x80 && b2 == 0xA9)) {
            paragraph.clear();  // LF, CR, NEL, U+2029
        } else if (c == 0xE2 && b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) {  // LRE RLE PDF LRO RLO
            apply(whole, 'E', b2 != 0xAC);
            apply(paragraph, 'E', b2 != 0xAC);
        } else if (c == 0xE2 && b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) {  // LRI RLI FSI PDI
            apply(whole, 'I', b2 != 0xA9);
            apply(paragraph, 'I', b2 != 0xA9);
        }
    }
    const auto close = [&](const std::string& open) {
        for (auto it = open.rbegin(); it != open.rend(); ++it) out += *it == 'E' ? "\xE2\x80\xAC" : "\xE2\x81\xA9";
    };
    close(whole);
    if (paragraph != whole) close(paragraph);
    return out;
}

std::string truncateUtf8(std::string_view s, size_t maxChars) {
    size_t chars = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
        if (chars == maxChars) return std::string(s.substr(0, i)) + "…";
        ++chars;
    }
    return std::string(s);
}

} // namespace stallscope::base
