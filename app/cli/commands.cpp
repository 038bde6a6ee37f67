#include "command.h"

#include <cstring>

namespace stallscope::cli {

// The registration point: one line per command.
const std::vector<const Command*>& commands() {
    static const std::vector<const Command*> list{&kInfoCommand, &kAnalyzeCommand, &kMergeCommand,
                                                  &kReportCommand, &kRecordCommand};
    return list;
}

const Command* findCommand(std::string_view name) {
    for (const Command* c : commands())
        if (c->name == name) return c;
    return nullptr;
}

std::string usageText() {
    std::string s = "usage: stallscope-cli <command> [options] PATH...\n\ncommands:\n";
    for (const Command* c : commands()) s += c->usage;
    s += "  --version                             version and build features\n"
         "  --help, COMMAND --help                this text, or one command's\n"
         "\n"
         "PATH is a Kineto / Chrome-trace JSON file (plain or .gz) or a TensorBoard log folder.\n"
         "exit codes: 0 ok, 1 unreadable input or unwritable output, 2 usage, 3 a CI gate failed\n"
         "            (record: COMMAND's exit code once the trace is written)\n";
    return s;
}

int usageError(const Command& command, const std::string& message, std::ostream& err) {
    if (!message.empty()) err << "stallscope-cli: " << message << "\n";
    err << "usage:\n" << command.usage << "(stallscope-cli --help for all commands)\n";
    return 2;
}

bool Args::value(std::string& out) {
    if (!more()) return false;
    out = take();
    return true;
}

bool Args::unsignedValue(unsigned& out) {
    std::string v;
    if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos ||
        v.size() > 9)
        return false;
    out = static_cast<unsigned>(std::stoul(v));
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
