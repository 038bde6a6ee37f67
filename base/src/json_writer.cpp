#include "stallscope/base/json_writer.h"

#include "stallscope/base/utf8.h"

#include <cmath>
#include <cstdio>

namespace stallscope::base {

void JsonWriter::escape(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x80) {
            // Valid UTF-8 as it is; a byte that is not (a file name in another encoding, a
            // damaged name) becomes U+FFFD: the document stays JSON (RFC 8259 8.1).
            const size_t n = utf8SequenceLength(
                reinterpret_cast<const unsigned char*>(s.data() + i), s.size() - i);
            if (n == 0) {
                out += "\\ufffd";
            } else {
                out.append(s.data() + i, n);
                i += n - 1;
            }
            continue;
        }
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                out += "\\u00";
                out += kHex[c >> 4];
                out += kHex[c & 15];
            } else {
                out += ch;
            }
        }
    }
    out += '"';
}

void JsonWriter::newline() {
    if (!m_pretty) return;
    m_out += '\n';
    m_out.append(m_first.size() * 2, ' ');
}

void JsonWriter::separator() {
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (m_first.empty()) return;
    if (!m_first.back()) m_out += ',';
    m_first.back() = false;
    newline();
}

JsonWriter& JsonWriter::beginObject() {
    separator();
    m_out += '{';
    m_first.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::endObject() {
    const bool empty = m_first.back();
    m_first.pop_back();
    if (!empty) newline();
    m_out += '}';
    return *this;
}

JsonWriter& JsonWriter::beginArray() {
    separator();
    m_out += '[';
    m_first.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::endArray() {
    const bool empty = m_first.back();
    m_first.pop_back();
    if (!empty) newline();
    m_out += ']';
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
    separator();
    escape(m_out, k);
    m_out += m_pretty ? ": " : ":";
    m_afterKey = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
    separator();
    escape(m_out, s);
    return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
    separator();
    m_out += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
    separator();
    m_out += std::to_string(v);
    return *this;
}

JsonWriter& JsonWriter::value(double v, int decimals) {
    separator();
    if (!std::isfinite(v)) {
        m_out += "null";
        return *this;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    m_out += buf;
    return *this;
}

JsonWriter& JsonWriter::value(bool v) {
    separator();
    m_out += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    separator();
    m_out += "null";
    return *this;
}

JsonWriter& JsonWriter::micros(int64_t ns) {
    separator();
    m_out += formatMicros(ns);
    return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
    separator();
    m_out += json;
    return *this;
}

std::string formatMicros(int64_t ns) {
    const bool neg = ns < 0;
    const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                  static_cast<unsigned long long>(a / 1000), static_cast<unsigned long long>(a % 1000));
    return buf;
}

} // namespace stallscope::base
