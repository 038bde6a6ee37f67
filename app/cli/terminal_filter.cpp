#include "terminal_filter.h"

#include <unistd.h>

#include <iostream>
#include <string>

namespace stallscope::cli {

namespace {

bool isC0(unsigned char c) {
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

/// Filters `n` bytes into `out`; `leadC2` carries a 0xC2 across calls.
void filterInto(const char* s, size_t n, bool& leadC2, std::string& out) {
    for (size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (leadC2) {
            leadC2 = false;
            if (c >= 0x80 && c <= 0x9f) {
                out += '?';
                continue;
            }
            out += '\xc2';
        }
        if (c == 0xc2) {
            leadC2 = true;
            continue;
        }
        out += isC0(c) ? '?' : static_cast<char>(c);
    }
}

} // namespace

std::string TerminalFilter::filtered(std::string_view s) {
    std::string out;
    bool lead = false;
    filterInto(s.data(), s.size(), lead, out);
    if (lead) out += '\xc2';
    return out;
}

bool TerminalFilter::put(const char* s, size_t n) {
    std::string out;
    out.reserve(n + 1);
    filterInto(s, n, m_leadC2, out);
    return m_to->sputn(out.data(), std::streamsize(out.size())) == std::streamsize(out.size());
}

TerminalFilter::int_type TerminalFilter::overflow(int_type ch) {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    const char c = traits_type::to_char_type(ch);
    return put(&c, 1) ? ch : traits_type::eof();
}

std::streamsize TerminalFilter::xsputn(const char* s, std::streamsize n) {
    return n > 0 && put(s, size_t(n)) ? n : 0;
}

int TerminalFilter::sync() {
    if (m_leadC2) { // a lone 0xC2 at a flush: invalid UTF-8 on its own, shown as it came
        m_leadC2 = false;
        if (m_to->sputc('\xc2') == traits_type::eof()) return -1;
    }
    return m_to->pubsync();
}

void filterTerminalOutput() {
    if (::isatty(STDOUT_FILENO)) {
        static TerminalFilter out(std::cout.rdbuf());
        std::cout.rdbuf(&out);
    }
    if (::isatty(STDERR_FILENO)) {
        static TerminalFilter err(std::cerr.rdbuf());
        std::cerr.rdbuf(&err);
    }
}

} // namespace stallscope::cli
