// stallscope-cli: headless entry point: inspection, analysis, reports and the CI gates.
// The commands live in the registry (command.h, commands.cpp); this file dispatches.
#include "command.h"
#include "record_command.h"
#include "stallscope/base/huge_pages.h"
#include "stallscope/base/text_format.h"
#include "stallscope/reports/report.h"
#include "stallscope/workspace/memory_budget.h"
#include "terminal_filter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace stallscope::cli;

namespace {

/// "-" as a PATH: standard input, saved to a temporary file (the importers read files and
/// folders; gzip is told by its magic bytes). "-o -": the output goes to a temporary file
/// of the right kind, copied to standard output at the end.
struct StdStreams {
    std::filesystem::path dir, input, output;
    ~StdStreams() {
        std::error_code ec;
        if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
    bool makeDir() {
        if (!dir.empty()) return true;
        std::string t = (std::filesystem::temp_directory_path() / "stallscope-cli-XXXXXX").string();
        if (!::mkdtemp(t.data())) return false;
        dir = t;
        return true;
    }
    bool readStdin(std::string& error) {
        if (::isatty(STDIN_FILENO))
            return error = "- reads a trace from standard input, which is a terminal", false;
        if (!makeDir()) return error = "cannot create a temporary folder", false;
        // Copied to a file in chunks (never held whole), up to what the memory budget could
        // open: `analyze - < /dev/zero` ends with a message, not with the disk or the OOM killer.
        const uint64_t limit =
            stallscope::workspace::textBytesWithin(stallscope::workspace::defaultMemoryBudget());
        const std::filesystem::path raw = dir / "stdin";
        std::ofstream f(raw, std::ios::binary);
        std::string chunk(1 << 20, '\0');
        uint64_t total = 0;
        unsigned char head[2] = {0, 0};
        while (std::cin) {
            std::cin.read(chunk.data(), std::streamsize(chunk.size()));
            const auto n = static_cast<size_t>(std::cin.gcount());
            if (n == 0) break;
            for (size_t i = 0; i < n && total + i < 2; ++i) head[total + i] = uint8_t(chunk[i]);
            total += n;
            if (total > limit)
                return error =
                           "standard input passed " + stallscope::base::formatMemory(limit) +
                           ", more than the memory budget could open (STALLSCOPE_MEMORY_BUDGET): "
                           "save the trace to a file",
                       false;
            if (!f.write(chunk.data(), std::streamsize(n)))
                return error = "cannot save standard input to " + raw.string() + " (disk full?)",
                       false;
        }
        f.close();
        const bool gz = total >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        input = dir / (gz ? "stdin.json.gz" : "stdin.json");
        std::error_code ec;
        std::filesystem::rename(raw, input, ec);
        if (ec) return error = "cannot save standard input: " + ec.message(), false;
        return true;
    }
};

std::string outputExtension(const std::string& cmd, const std::vector<std::string>& args) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--format") {
            const std::string& f = args[i + 1];
            stallscope::reports::ReportFormat format{};
            if (!stallscope::reports::formatFromName(f, format)) return ".html";
            return std::string(stallscope::reports::reportFormatInfo(format).extensions.front());
        }
    return cmd == "analyze" ? ".summary.json" : cmd == "merge" ? ".json" : ".html";
}

} // namespace

int main(int argc, char** argv) {
    stallscope::base::tuneMalloc(argv); // docs/decisions.md, "Import at the speed of the parser"
    filterTerminalOutput();             // other people's bytes never drive the terminal
    // -q / --quiet before the command word (after it, the words are the command's, and a
    // recorded program's own -q stays its own).
    std::vector<std::string> all;
    int first = 1;
    for (; first < argc &&
           (std::string(argv[first]) == "-q" || std::string(argv[first]) == "--quiet");
         ++first)
        setQuiet(true);
    for (int i = first; i < argc; ++i) all.emplace_back(argv[i]);
    if (all.empty()) {
        std::cerr << usageText();
        return 2;
    }
    const std::string cmd = all[0];
    if (cmd == "help" && all.size() >= 2 && all[1] == "--man") {
        std::cout << manPage(STALLSCOPE_VERSION, STALLSCOPE_RELEASE_DATE);
        return 0;
    }
    if (cmd == "help" && all.size() >= 2 && all[1] == "--list") {
        std::string names;
        if (all.size() != 3 || !listNames(all[2], names)) {
            std::cerr << "stallscope-cli: help --list needs commands or report-formats\n";
            return 2;
        }
        std::cout << names;
        return 0;
    }
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << usageText();
        return 0;
    }
    if (cmd == "--version") {
        std::cout << "stallscope-cli " << STALLSCOPE_VERSION << "\n"
#ifdef STALLSCOPE_HAVE_PDF
                  << "PDF reports: yes\n"
#else
                  << "PDF reports: not built (needs the Qt part: STALLSCOPE_BUILD_APP=ON)\n"
#endif
                  << stallscope::capture::captureFeatureLine() << "\n"
                  << "LibTorch demos (record --demo): "
                  << (stallscope::capture::demoExecutablePath().empty()
                          ? std::string("not built (LibTorch not found)")
                          : stallscope::capture::demoExecutablePath().string())
                  << "\n";
        return 0;
    }
    const Command* command = findCommand(cmd);
    if (!command) {
        std::cerr << "stallscope-cli: unknown command " << cmd << "\n" << usageText();
        return 2;
    }
    if (all.size() == 2 && (all[1] == "--help" || all[1] == "-h")) {
        std::cout << "usage:\n" << commandUsage(*command);
        return 0;
    }
    std::vector<std::string> rest(all.begin() + 1, all.end());
    StdStreams streams;
    if (cmd == "record") {
        for (size_t i = 0; i + 1 < rest.size() && rest[i] != "--"; ++i)
            if ((rest[i] == "-o" || rest[i] == "--output") && rest[i + 1] == "-") {
                std::cerr << "stallscope-cli: -o - (standard output) is for report; record writes "
                             "a trace file\n";
                return 2;
            }
    }
    if (cmd != "record" && cmd != "mcp") { // mcp: standard input carries the protocol
        for (size_t i = 0; i < rest.size(); ++i) {
            std::string error;
            const bool isOutput = i > 0 && (rest[i - 1] == "-o" || rest[i - 1] == "--output");
            if (rest[i] != "-") continue;
            // "-" is a PATH (standard input) or -o's value (standard output), nothing else:
            // as another option's value it would be taken for a file named "-".
            if (i > 0 && (rest[i - 1] == "--report" || rest[i - 1] == "--summaries" ||
                          rest[i - 1] == "--baseline")) {
                std::cerr << "stallscope-cli: - stands for standard input (a PATH) or output (-o "
                             "-), not for "
                          << rest[i - 1] << "'s value\n";
                return 2;
            }
            if (isOutput && (cmd == "analyze" || cmd == "merge")) {
                std::cerr << "stallscope-cli: -o - (standard output) is for report; " << cmd
                          << " writes files (or folders) of its own\n";
                return 2;
            }
            if (isOutput) {
                if (!streams.makeDir())
                    return std::cerr << "stallscope-cli: cannot create a temporary folder\n", 1;
                streams.output = streams.dir / ("stdout" + outputExtension(cmd, rest));
                rest[i] = streams.output.string();
            } else {
                if (!streams.input.empty()) {
                    std::cerr << "stallscope-cli: - can be given once\n";
                    return 2;
                }
                if (!streams.readStdin(error)) { // unreadable input: a terminal, too much, no room
                    std::cerr << "stallscope-cli: " << error << "\n";
                    return 1;
                }
                rest[i] = streams.input.string();
            }
        }
    }
    Args args(rest);
    if (streams.output.empty()) return command->main(args, std::cout, std::cerr);
    // The command's own messages ("Wrote ...") would mix with the document: they go to stderr.
    const int rc = command->main(args, std::cerr, std::cerr);
    std::ifstream f(streams.output, std::ios::binary);
    std::cout << f.rdbuf();
    std::cout.flush();
    return rc;
}
