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

} // namespace

std::string sanitizeUtf8(std::string_view s) {
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
        if (n == 1 && ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)) {
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

std::string escapeHtml(std::string_view s) {
    const std::string clean = sanitizeUtf8(s);
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
    const std::string clean = sanitizeUtf8(s);
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
    std::string clean = sanitizeUtf8(s);
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
