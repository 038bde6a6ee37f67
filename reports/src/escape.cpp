#include "stallscope/reports/escape.h"

#include "stallscope/base/utf8.h"

#include <algorithm>

namespace stallscope::reports {

using base::closeBidi;
using base::sanitizeUtf8;

namespace {

size_t longestBacktickRun(std::string_view s) {
    size_t best = 0, run = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        best = std::max(best, run);
    }
    return best;
}

} // namespace

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


} // namespace stallscope::reports
