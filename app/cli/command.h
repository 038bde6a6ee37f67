#pragma once
// stallscope-cli's subcommands as a registry: each command is one file that parses its own
// options (with Args) and runs; commands.cpp lists them, and the usage text, `--help` and
// the dispatch in cli_main.cpp come from that list. A new command is one new file plus one
// line in commands.def.
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::cli {

/// The most --threads a command takes.
inline constexpr unsigned kMaxThreads = 1024;

/// A command's arguments, read front to back. Typed readers return false when the value is
/// missing or malformed; the command then reports a usage error.
class Args {
public:
    explicit Args(std::vector<std::string> args) : m_args(std::move(args)) {}
    [[nodiscard]] bool more() const { return m_next < m_args.size(); }
    std::string take() { return m_args[m_next++]; }
    bool value(std::string& out); // the next argument, whatever it is
    bool unsignedValue(unsigned& out, unsigned max = 999999999); // "4", at most max
    bool intValue(int& out);                                     // "-1", "0"
    bool percentValue(double& out);                              // a number >= 0: "5", "2.5"
    [[nodiscard]] const std::vector<std::string>& all() const { return m_args; }
    [[nodiscard]] size_t position() const { return m_next; }

private:
    std::vector<std::string> m_args;
    size_t m_next = 0;
};

struct Command {
    std::string_view name;
    std::string_view usage; // the synopsis and description lines of the --help text
    /// Parses `args` (what follows the command's name) and runs. Returns the exit code; a
    /// usage error returns usageError(...).
    int (*main)(Args& args, std::ostream& out, std::ostream& err);
};

/// Every command, in the order --help lists them (commands.def).
const std::vector<const Command*>& commands();
const Command* findCommand(std::string_view name);
/// A command's usage text with its placeholders filled from the tables:
/// {report-formats} -> "html|pdf|md|json|trace".
std::string commandUsage(const Command& command);
/// The report formats' --format names joined by `separator`: "html|pdf|md|json|trace".
std::string reportFormatNames(std::string_view separator);
/// `help --list WHAT`: one name per line (commands, report-formats); false for an unknown WHAT.
bool listNames(std::string_view what, std::string& out);
/// The whole --help text.
std::string usageText();
/// The exit codes, in one place (--help and the man page).
const char* exitCodesText();
/// The man page (troff), from the same text as --help.
std::string manPage(std::string_view version, std::string_view date);
/// -q / --quiet: no progress lines on stderr.
bool quiet();
void setQuiet(bool on);
/// "stallscope-cli: MESSAGE", the command's usage, and exit code 2.
int usageError(const Command& command, const std::string& message, std::ostream& err);

// The commands: one file each, defining `extern const Command k<Name>Command{...}` (extern:
// the list finds it by name), registered by one line in commands.def (commands.cpp reads it,
// so adding a command recompiles that file and the new one only).

} // namespace stallscope::cli
