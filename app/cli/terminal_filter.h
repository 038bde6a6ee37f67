#pragma once
// Text for a terminal: names in traces, device names and other processes' command lines are
// other people's bytes, and an escape sequence among them would drive the user's terminal
// (retitle it, rewrite what is shown, on some terminals type for them). When standard output
// or standard error is a terminal, the CLI's stream goes through this filter: C0 controls but
// tab, newline and carriage return, DEL, and the C1 controls (U+0080-U+009F, 8-bit CSI among
// them) become '?'. Pipes and files get the bytes as they are (JSON escapes its own).
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace stallscope::cli {

class TerminalFilter : public std::streambuf {
public:
    explicit TerminalFilter(std::streambuf* to) : m_to(to) {}
    /// The bytes `s` as the filter would pass them (for tests).
    static std::string filtered(std::string_view s);

protected:
    int_type overflow(int_type ch) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

private:
    bool put(const char* s, size_t n);
    std::streambuf* m_to;
    bool m_leadC2 = false; // a 0xC2 byte waits for the next one (C1 controls are C2 80..9F)
};

/// Puts the filter in front of std::cout and std::cerr where each is a terminal; the filters
/// live until the program ends.
void filterTerminalOutput();

} // namespace stallscope::cli
