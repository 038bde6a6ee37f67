// stallscope-cli: headless entry point: inspection, analysis, reports and the CI gates.
#include "analyze_command.h"
#include "info_command.h"
#include "record_command.h"
#include "report_command.h"

#include <cstring>
#include <iostream>
#include <string>

namespace {

constexpr const char* kUsage = R"(usage: stallscope-cli <command> [options] PATH...

commands:
  info [--json] [--threads N] PATH...   what a trace holds: format, span, devices, ranks,
                                        rows, steps, event counts, diagnostics, import speed
  analyze [--json] [--window all|steps|hta|STEP] [--device N] [--fail-on KIND[:MIN_PCT],...]
          [--baseline BEFORE [--max-regression PCT]] PATH...
                                        why the GPU is idle: utilisation, idle causes, findings
                                        with their fix; --fail-on exits 3 when a listed finding
                                        saves at least MIN_PCT of step time; --baseline exits 3
                                        when step time grew more than PCT % or the GPU idle share
                                        more than PCT points against BEFORE (default 5)
  report [--format html|md|json|pdf|trace] [--window ...] [--device N] [--baseline BEFORE]
         -o OUT PATH                    an annotated report: OUT.html (self-contained), .md,
                                        .json (the analysis JSON), .pdf, or .trace.json[.gz]
                                        (the trace plus a "Stallscope findings" process);
                                        with --baseline, BEFORE -> PATH compared (.html/.md/.pdf)
  record [-o OUT.json[.gz]] [--delay S] [--duration S] [--cuda-profiler-range] -- COMMAND ARGS...
                                        run COMMAND with live capture (CUPTI), write a Kineto-
                                        compatible trace (default stallscope-<time>.pt.trace.json.gz)
                                        and print the top findings; exits with COMMAND's exit code.
                                        --delay/--duration: record from S seconds after the start,
                                        for S seconds (then COMMAND is stopped); Ctrl-C stops.
                                        --cuda-profiler-range: GPU capture only between
                                        cudaProfilerStart/Stop (torch.cuda.profiler.start/stop)
                                        --fake-source: a scripted training loop joins (for demos
                                        and tests; COMMAND is optional then)
  record [-o OUT] --demo NAME|list [--steps N]
                                        record a built-in LibTorch workload (stallscope-demo) that
                                        reproduces a bottleneck, or its fixed variant
  --version                             version and build features
  --help                                this text

PATH is a Kineto / Chrome-trace JSON file (plain or .gz) or a TensorBoard log folder.
exit codes: 0 ok, 1 unreadable input or unwritable output, 2 usage, 3 a CI gate failed
            (record: COMMAND's exit code once the trace is written)
)";

int usage(const std::string& msg) {
    if (!msg.empty()) std::cerr << "stallscope-cli: " << msg << "\n";
    std::cerr << kUsage;
    return 2;
}

int report(int argc, char** argv) {
    stallscope::cli::ReportOptions o;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "-o" || a == "--output") {
            if (!v) return usage("-o needs a file");
            o.out = v, ++i;
        } else if (a == "--format") {
            stallscope::reports::ReportFormat f;
            if (!v || !stallscope::reports::formatFromName(v, f)) return usage("--format needs html, md, json, pdf or trace");
            o.format = f, ++i;
        } else if (a == "--baseline") {
            if (!v) return usage("--baseline needs a trace");
            o.baseline = v, ++i;
        } else if (a == "--window") {
            if (!v || !stallscope::cli::parseWindow(v, o.analysis.window))
                return usage("--window needs all, steps, hta or a step number");
            ++i;
        } else if (a == "--device") {
            try {
                if (!v) throw 0;
                o.analysis.device = std::stoi(v), ++i;
            } catch (...) {
                return usage("--device needs a device index");
            }
        } else if (a.size() > 1 && a[0] == '-') return usage("unknown option " + a);
        else if (o.path.empty()) o.path = a;
        else return usage("report takes one PATH (a file or a TensorBoard folder)");
    }
    if (o.path.empty()) return usage("report needs a PATH");
    if (o.out.empty()) return usage("report needs -o OUT");
    return stallscope::cli::runReport(o, std::cout, std::cerr);
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
#ifdef STALLSCOPE_HAVE_PDF
                  << "PDF reports: yes\n"
#else
                  << "PDF reports: not built (needs the Qt part: STALLSCOPE_BUILD_APP=ON)\n"
#endif
                  << stallscope::capture::captureFeatureLine() << "\n"
                  << "LibTorch demos (record --demo): "
                  << (stallscope::capture::demoExecutablePath().empty() ? std::string("not built (LibTorch not found)")
                                                                        : stallscope::capture::demoExecutablePath().string())
                  << "\n";
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
            } else if (a == "--baseline") {
                const char* v = next("--baseline");
                if (!v) return usage("--baseline needs a trace");
                o.baseline = v;
            } else if (a == "--max-regression") {
                const char* v = next("--max-regression");
                try {
                    if (!v) throw 0;
                    size_t used = 0;
                    o.maxRegressionPct = std::stod(v, &used);
                    if (used != std::strlen(v) || o.maxRegressionPct < 0) throw 0;
                } catch (...) {
                    return usage("--max-regression needs a percentage");
                }
            } else if (a.size() > 1 && a[0] == '-') return usage("unknown option " + a);
            else o.paths.push_back(a);
        }
        if (o.paths.empty()) return usage("analyze needs at least one PATH");
        return stallscope::cli::runAnalyze(o, std::cout, std::cerr);
    }
    if (cmd == "report") return report(argc, argv);
    if (cmd == "record") {
        stallscope::cli::RecordCommandOptions o;
        std::string error;
        if (!stallscope::cli::parseRecordArgs(argc, argv, 2, o, error)) return usage(error);
        return stallscope::cli::runRecord(std::move(o), std::cout, std::cerr);
    }
    return usage("unknown command " + cmd);
}
