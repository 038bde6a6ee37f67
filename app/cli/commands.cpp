#include "command.h"

#include "stallscope/reports/report.h"

#include <cstring>

namespace stallscope::cli {

// One row per line of commands.def, each defined in its command's file.
#define STALLSCOPE_COMMAND(Name) extern const Command k##Name##Command;
#include "commands.def"
#undef STALLSCOPE_COMMAND

const std::vector<const Command*>& commands() {
    static const std::vector<const Command*> list{
#define STALLSCOPE_COMMAND(Name) &k##Name##Command,
#include "commands.def"
#undef STALLSCOPE_COMMAND
    };
    return list;
}

std::string reportFormatNames(std::string_view separator) {
    std::string s;
    for (const reports::ReportFormatInfo& f : reports::reportFormats())
        s += (s.empty() ? "" : std::string(separator)) + std::string(f.names.front());
    return s;
}

std::string commandUsage(const Command& command) {
    std::string s(command.usage);
    static constexpr std::string_view kFormats = "{report-formats}";
    for (size_t at; (at = s.find(kFormats)) != std::string::npos;)
        s.replace(at, kFormats.size(), reportFormatNames("|"));
    return s;
}

bool listNames(std::string_view what, std::string& out) {
    out.clear();
    if (what == "commands") {
        for (const Command* c : commands()) out += std::string(c->name) + "\n";
    } else if (what == "report-formats") {
        for (const reports::ReportFormatInfo& f : reports::reportFormats())
            for (std::string_view n : f.names) out += std::string(n) + "\n";
    } else {
        return false;
    }
    return true;
}

const Command* findCommand(std::string_view name) {
    for (const Command* c : commands())
        if (c->name == name) return c;
    return nullptr;
}

const char* exitCodesText() {
    return "exit codes: 0 ok, 1 unreadable input or unwritable output (record --attach: a "
           "requested\n"
           "            trace did not come), 2 usage, 3 a CI gate failed (record: COMMAND's exit\n"
           "            code once the trace is written)\n";
}

std::string usageText() {
    std::string s = "usage: stallscope-cli [-q|--quiet] <command> [options] PATH...\n\ncommands:\n";
    for (const Command* c : commands()) s += commandUsage(*c);
    s +=
        "  --version                             version and build features\n"
        "  --help, COMMAND --help                this text, or one command's\n"
        "  help --man                            this text as a man page (troff)\n"
        "  help --list commands|report-formats   the names, one per line (for completion)\n"
        "  -q, --quiet                           no progress lines on stderr (errors still)\n"
        "\n"
        "PATH is a Kineto / Chrome-trace JSON file (plain or .gz), a TensorBoard log folder, or -\n"
        "(the trace on standard input). -o - writes a report to standard output.\n"
        "Output is never coloured (NO_COLOR is respected by construction).\n";
    s += exitCodesText();
    return s;
}

namespace {

/// Text to troff: backslashes escaped, a leading '.' or '\'' protected.
std::string troff(std::string_view text) {
    std::string out;
    bool lineStart = true;
    for (char c : text) {
        if (lineStart && (c == '.' || c == '\'')) out += "\\&";
        if (c == '\\')
            out += "\\e";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
        lineStart = c == '\n';
    }
    return out;
}

} // namespace

std::string manPage(std::string_view version, std::string_view date) {
    std::string m;
    m += ".TH STALLSCOPE\\-CLI 1 \"" + std::string(date) + "\" \"stallscope " +
         std::string(version) + "\" \"User Commands\"\n";
    m += ".SH NAME\nstallscope\\-cli \\- why is my GPU idle? PyTorch trace diagnostics on the "
         "command line\n";
    m += ".SH SYNOPSIS\n.B stallscope\\-cli\n[\\fB\\-q\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] "
         "\\fIPATH\\fR...\n";
    m += ".SH DESCRIPTION\nstallscope\\-cli reads torch.profiler / TensorBoard traces (Kineto "
         "Chrome\\-trace JSON, "
         "plain or gzip, TensorBoard log folders), explains why the GPU sat idle and what to "
         "change, records live "
         "GPU sessions (CUPTI) or attaches to a running PyTorch job (Kineto's daemon protocol), "
         "writes reports and "
         "gates CI on regressions.\n";
    m += ".SH COMMANDS\n";
    for (const Command* c : commands()) {
        m += ".SS " + troff(c->name) + "\n.nf\n" + troff(commandUsage(*c)) + ".fi\n";
    }
    m += ".SH OPTIONS\n.TP\n.B \\-q, \\-\\-quiet\nNo progress lines on standard error; errors are "
         "still written.\n"
         ".TP\n.B \\-\\-help\nThe usage text, or one command's (\\fICOMMAND\\fR \\-\\-help).\n"
         ".TP\n.B \\-\\-version\nThe version and the features built in.\n";
    m += ".SH EXIT STATUS\n.nf\n" + troff(exitCodesText()) + ".fi\n";
    m += ".SH ENVIRONMENT\n"
         ".TP\n.B NO_COLOR\nRespected: the output is never coloured.\n"
         ".TP\n.B KINETO_IPC_SOCKET_DIR\nrecord \\-\\-attach: Kineto's filesystem sockets folder "
         "(as the job's).\n"
         ".TP\n.B KINETO_ONDEMAND_TRACE_DIR\nrecord \\-\\-attach: where Kineto may write "
         "on\\-demand traces (default /tmp).\n"
         ".TP\n.B STALLSCOPE_CUPTI_INJECTION\nThe CUPTI injection library to record with (default: "
         "found next to the program).\n";
    m += ".SH FILES\n.TP\n.I /usr/lib/stallscope/libstallscope_cupti_injection.so\nThe CUPTI "
         "injection library "
         "(CUDA_INJECTION64_PATH of recorded programs).\n"
         ".TP\n.I /usr/share/stallscope/workloads/\nPyTorch workloads that plant the classic "
         "stalls, each with its fix.\n";
    m += ".SH SEE ALSO\n.BR stallscope (1)\n";
    return m;
}

int usageError(const Command& command, const std::string& message, std::ostream& err) {
    if (!message.empty()) err << "stallscope-cli: " << message << "\n";
    err << "usage:\n" << commandUsage(command) << "(stallscope-cli --help for all commands)\n";
    return 2;
}

namespace {
bool g_quiet = false;
}
bool quiet() {
    return g_quiet;
}
void setQuiet(bool on) {
    g_quiet = on;
}

bool Args::value(std::string& out) {
    if (!more()) return false;
    out = take();
    return true;
}

bool Args::unsignedValue(unsigned& out, unsigned max) {
    std::string v;
    if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos ||
        v.size() > 9)
        return false;
    const unsigned long n = std::stoul(v);
    if (n > max) return false;
    out = static_cast<unsigned>(n);
    return true;
}

bool Args::intValue(int& out) {
    std::string v;
    if (!value(v)) return false;
    const size_t digits = v.size() - (v[0] == '-' ? 1 : 0);
    if (digits == 0 || digits > 9 ||
        v.find_first_not_of("0123456789", v[0] == '-' ? 1 : 0) != std::string::npos)
        return false;
    out = std::stoi(v);
    return true;
}

bool Args::percentValue(double& out) {
    std::string v;
    if (!value(v) || v.empty()) return false;
    char* end = nullptr;
    out = std::strtod(v.c_str(), &end);
    return end == v.c_str() + v.size() && out >= 0 && out < 1e9;
}

} // namespace stallscope::cli
