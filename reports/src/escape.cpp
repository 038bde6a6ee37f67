#include "stallscope/reports/escape.h"

#include <algorithm>

namespace stallscope::reports {

namespace {

/// Length of the valid UTF-8 sequence at s[i], or 0 when invalid (overlongs, surrogates
/// and code points above U+10FFFF are invalid).
size_t utf8Length(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    size_t n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07;
    else return 0;
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(k) & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

size_t longestBacktickRun(std::string_view s) {
    size_t best = 0, run = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        best = std::max(best, run);
    }
    return best;
}

/// Valid UTF-8 with each invalid byte as U+FFFD; C0 controls (but \t \n \r) and DEL
/// dropped when `dropControls`.
std::string cleanUtf8(std::string_view s, bool dropControls) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8Length(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
            continue;
        }
        const unsigned char c = static_cast<unsigned char>(s[i]);
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

std::string escapeHtml(std::string_view s) {
    const std::string clean = closeBidi(s);
    std::string out;
    out.reserve(clean.size() + clean.size() / 8);
    for (char c : clean) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string escapeMarkdown(std::string_view s, bool singleLine) {
    const std::string clean = closeBidi(s);
    // Inline syntax anywhere; block markers only where a line starts: "#", "+", "-", "="
    // and the "." or ")" after leading digits ("12. item").
    static constexpr std::string_view kInline = "\\`*_[]<>|~&";
    std::string out;
    out.reserve(clean.size() + clean.size() / 4);
    bool lineStart = true, leadingDigits = false;
    for (char c : clean) {
        if (singleLine && (c == '\n' || c == '\r' || c == '\t')) c = ' ';
        if (c == '\n') {
            out += c;
            lineStart = true;
            leadingDigits = false;
            continue;
        }
        const bool marker = (lineStart && (c == '#' || c == '+' || c == '-' || c == '=')) ||
                            (leadingDigits && (c == '.' || c == ')'));
        if (marker || kInline.find(c) != std::string_view::npos) out += '\\';
        out += c;
        leadingDigits = (lineStart || leadingDigits) && c >= '0' && c <= '9';
        if (c != ' ') lineStart = false;
    }
    return out;
}

std::string markdownCodeSpan(std::string_view s) {
    std::string clean = closeBidi(s);
    for (char& c : clean)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    std::string body;
    for (char c : clean) {
        if (c == '|') body += "\\|";  // GitHub tables split on | even inside code spans
        else body += c;
    }
    const std::string fence(longestBacktickRun(clean) + 1, '`');
    const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`' || body.front() == ' ');
    return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string markdownCodeBlock(std::string_view code, std::string_view language) {
    const std::string clean = sanitizeUtf8(code);
    const std::string fence(std::max<size_t>(3, longestBacktickRun(clean) + 1), '`');
    std::string out = fence + std::string(language) + "\n" + clean;
    if (out.back() != '\n') out += '\n';
    return out + fence + "\n";
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

} // namespace stallscope::reports
