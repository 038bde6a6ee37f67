// stallscope-cli: headless entry point (inspection now; analysis and reports follow).
#include "analyze_command.h"
#include "info_command.h"

#include <cstring>
#include <iostream>
#include <string>

namespace {

constexpr const char* kUsage = R"(usage: stallscope-cli <command> [options] PATH...

commands:
  info [--json] [--threads N] PATH...   what a trace holds: format, span, devices, ranks,
                                        rows, steps, event counts, diagnostics, import speed
  analyze [--json] [--window all|steps|hta|STEP] [--device N] [--fail-on KIND[:MIN_PCT],...] PATH...
                                        why the GPU is idle: utilisation, idle causes, findings
                                        with their fix; --fail-on exits 3 when a listed finding
                                        saves at least MIN_PCT of step time (a CI gate)
  --version                             version and build features
  --help                                this text

PATH is a Kineto / Chrome-trace JSON file (plain or .gz) or a TensorBoard log folder.
exit codes: 0 ok, 1 unreadable input, 2 usage, 3 a --fail-on finding is present
)";

int usage(const std::string& msg) {
    if (!msg.empty()) std::cerr << "stallscope-cli: " << msg << "\n";
    std::cerr << kUsage;
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage("");
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << kUsage;
        return 0;
    }
    if (cmd == "--version") {
        std::cout << "stallscope-cli " << STALLSCOPE_VERSION << "\n"
                  << "live GPU capture: not built\n";
        return 0;
    }
    if (cmd == "info") {
        stallscope::cli::InfoOptions o;
        for (int i = 2; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--json") o.json = true;
            else if (a == "--threads") {
                if (i + 1 >= argc) return usage("--threads needs a number");
                try {
                    o.threads = static_cast<unsigned>(std::stoul(argv[++i]));
                } catch (...) {
                    return usage("--threads needs a number");
                }
            } else if (a.size() > 1 && a[0] == '-') return usage("unknown option " + a);
            else o.paths.push_back(a);
        }
        if (o.paths.empty()) return usage("info needs at least one PATH");
        return stallscope::cli::runInfo(o, std::cout, std::cerr);
    }
    if (cmd == "analyze") {
        stallscope::cli::AnalyzeOptions o;
        for (int i = 2; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&](const char* what) -> const char* {
                if (i + 1 >= argc) return nullptr;
                (void)what;
                return argv[++i];
            };
            if (a == "--json") o.json = true;
            else if (a == "--window") {
                const char* v = next("--window");
                if (!v || !stallscope::cli::parseWindow(v, o.analysis.window))
                    return usage("--window needs all, steps, hta or a step number");
            } else if (a == "--device") {
                const char* v = next("--device");
                try {
                    if (!v) throw 0;
                    o.analysis.device = std::stoi(v);
                } catch (...) {
                    return usage("--device needs a device index");
                }
            } else if (a == "--fail-on") {
                const char* v = next("--fail-on");
                std::string error;
                if (!v || !stallscope::cli::parseFailOn(v, o.failOn, error))
                    return usage(v ? error : "--fail-on needs KIND[:MIN_PCT],...");
            } else if (a == "--threads") {
                const char* v = next("--threads");
                try {
                    if (!v) throw 0;
                    o.threads = static_cast<unsigned>(std::stoul(v));
                } catch (...) {
                    return usage("--threads needs a number");
                }
            } else if (a.size() > 1 && a[0] == '-') return usage("unknown option " + a);
            else o.paths.push_back(a);
        }
        if (o.paths.empty()) return usage("analyze needs at least one PATH");
        return stallscope::cli::runAnalyze(o, std::cout, std::cerr);
    }
    return usage("unknown command " + cmd);
}
