#include "content_signatures.h"

#include <cctype>

namespace stallscope::importers {

namespace {

bool isBlank(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

size_t skipBlanks(std::string_view b, size_t i) {
    while (i < b.size() && isBlank(b[i])) ++i;
    return i;
}

bool isNumberChar(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/// The end of the JSON string starting at b[i] == '"' (just after its closing quote), or
/// npos when the bytes end inside it.
size_t stringEnd(std::string_view b, size_t i) {
    for (size_t k = i + 1; k < b.size(); ++k) {
        if (b[k] == '\\')
            ++k;
        else if (b[k] == '"')
            return k + 1;
    }
    return std::string_view::npos;
}

bool startsWithNoCase(std::string_view b, size_t i, std::string_view word) {
    if (b.size() - i < word.size()) return false;
    for (size_t k = 0; k < word.size(); ++k)
        if (std::tolower(static_cast<unsigned char>(b[i + k])) != word[k]) return false;
    return true;
}

} // namespace

size_t skipBomAndBlanks(std::string_view b) {
    size_t i = b.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    return skipBlanks(b, i);
}

bool looksJson(std::string_view b) {
    const size_t i = skipBomAndBlanks(b);
    return i == b.size() || b[i] == '{' || b[i] == '[';
}

bool looksArrayOfRows(std::string_view b) {
    size_t i = skipBomAndBlanks(b);
    if (i >= b.size() || b[i] != '[') return false;
    i = skipBlanks(b, i + 1);
    if (i >= b.size() || b[i] != '[') return false;
    size_t scalars = 0;
    for (i = skipBlanks(b, i + 1); i < b.size(); i = skipBlanks(b, i + 1)) {
        if (b[i] == '"') {
            i = stringEnd(b, i);
            if (i == std::string_view::npos) return scalars > 0; // cut inside a later string
        } else if (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
            while (i < b.size() && isNumberChar(b[i])) ++i;
        } else {
            return false; // an object, an array, a literal or junk: not a row of scalars
        }
        ++scalars;
        i = skipBlanks(b, i);
        if (i >= b.size()) return true; // cut after a scalar
        if (b[i] == ']') return true;
        if (b[i] != ',') return false;
    }
    return scalars > 0;
}

std::string firstObjectKey(std::string_view b) {
    size_t i = skipBomAndBlanks(b);
    if (i >= b.size() || b[i] != '{') return {};
    i = skipBlanks(b, i + 1);
    if (i >= b.size() || b[i] != '"') return {};
    const size_t end = stringEnd(b, i);
    if (end == std::string_view::npos) return {};
    return std::string(b.substr(i + 1, end - i - 2));
}

bool looksHtml(std::string_view b) {
    const size_t i = skipBomAndBlanks(b);
    return startsWithNoCase(b, i, "<!doctype html") || startsWithNoCase(b, i, "<html");
}

} // namespace stallscope::importers
