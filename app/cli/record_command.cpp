// stallscope-cli record [-o OUT.json[.gz]] [--duration S] [--delay S] [--fake-source] -- COMMAND ARGS...
#include "record_command.h"

#include "command.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/base/text_format.h"
#include "stallscope/capture/fake_source.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>
#include <thread>
#include <unistd.h>

namespace stallscope::cli {

extern const Command kRecordCommand; // defined at the end of this file

using base::formatCount;
using base::formatDuration;

namespace {

std::atomic<int> g_interrupts{0};

extern "C" void onInterrupt(int) { g_interrupts.fetch_add(1); }

/// Ctrl-C and SIGTERM stop the recording instead of killing the recorder.
class InterruptGuard {
public:
    InterruptGuard() {
        struct sigaction sa {};
        sa.sa_handler = onInterrupt;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGINT, &sa, &m_oldInt);
        ::sigaction(SIGTERM, &sa, &m_oldTerm);
    }
    ~InterruptGuard() {
        ::sigaction(SIGINT, &m_oldInt, nullptr);
        ::sigaction(SIGTERM, &m_oldTerm, nullptr);
    }

private:
    struct sigaction m_oldInt {}, m_oldTerm {};
};

bool parseSeconds(const char* v, double& out) {
    if (!v) return false;
    char* end = nullptr;
    out = std::strtod(v, &end);
    return end && *end == '\0' && end != v && out >= 0 && out < 1e7;
}

std::string defaultOutput() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::localtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "stallscope-%Y%m%d-%H%M%S.pt.trace.json.gz", &tm);
    return buf;
}

std::string progressLine(const capture::RecordStatus& st) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "stallscope: %s %.1f s, %s events", st.recording ? "recording" : "waiting",
                  st.elapsedSeconds, formatCount(st.session.records).c_str());
    std::string line = buf;
    if (st.session.droppedBySources) line += ", " + formatCount(st.session.droppedBySources) + " dropped";
    if (st.session.badMessages) line += ", " + formatCount(st.session.badMessages) + " bad messages";
    return line;
}

/// Polls until the target (or, without one, the sources) ended; Ctrl-C stops.
void waitForTheEnd(capture::Recording& rec, bool hasCommand, std::ostream& err) {
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    auto lastPrint = std::chrono::steady_clock::now();
    auto firstInterrupt = std::chrono::steady_clock::time_point();
    bool stopped = false;
    for (;;) {
        const capture::RecordStatus st = rec.status();
        if (!st.running) break;
        const auto now = std::chrono::steady_clock::now();
        const int interrupts = g_interrupts.load();
        if (interrupts > 0 && firstInterrupt == std::chrono::steady_clock::time_point()) {
            firstInterrupt = now;
            err << (tty ? "\n" : "") << "stallscope: stopping (Ctrl-C again to stop the program now)\n";
        }
        // The program got the terminal's Ctrl-C too: give it time to end on its own.
        if (!stopped && interrupts > 0 &&
            (!hasCommand || interrupts > 1 || now - firstInterrupt > std::chrono::seconds(2))) {
            rec.stop();
            stopped = true;
        }
        if (!quiet() && now - lastPrint > (tty ? std::chrono::milliseconds(500)
                                               : std::chrono::milliseconds(10000))) {
            err << (tty ? "\r" : "") << progressLine(st) << (tty ? "   " : "\n") << std::flush;
            lastPrint = now;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (tty && !quiet()) err << "\r" << progressLine(rec.status()) << "   \n";
}

void writeSummary(std::ostream& out, const model::Trace& t, const capture::RecordStatus& st, bool hasCommand) {
    size_t kernels = 0, copies = 0;
    for (model::EventKind k : t.slices().kind) kernels += k == model::EventKind::Kernel, copies += k == model::EventKind::Memcpy;
    out << "Recorded " << formatDuration(int64_t(st.elapsedSeconds * 1e9));
    if (hasCommand) out << ": the program " << st.exitDescription;
    out << ".\n  " << formatCount(st.session.records) << " events (" << formatCount(kernels) << " kernels, "
        << formatCount(copies) << " copies) from " << st.session.sources << " source"
        << (st.session.sources == 1 ? "" : "s") << "; " << formatCount(st.session.droppedBySources)
        << " dropped by the sources, " << st.session.missingBatches << " missing batches, "
        << st.session.badMessages << " bad messages\n";
    for (size_t i = 0; i < st.session.problems.size() && i < 3; ++i) out << "  problem: " << st.session.problems[i] << "\n";
    if (!st.gpuNote.empty()) out << "  note: " << st.gpuNote << "\n";
}

void writeFindings(std::ostream& out, const model::Trace& t, const std::string& path) {
    if (t.slices().size() == 0) {
        out << "\nNothing to analyse: no events were recorded.\n";
        return;
    }
    const analysis::AnalysisResult r = analysis::analyze(t);
    out << "\n";
    for (const auto& d : r.devices) {
        char line[200];
        std::snprintf(line, sizeof line, "GPU %d: utilisation %.1f%%, idle %s of %s\n", d.device, d.utilization * 100,
                      formatDuration(d.idleNs).c_str(), formatDuration(d.windowNs).c_str());
        out << line;
    }
    if (r.hostOnly) {
        // CPU only: where the step time went, by the causes that would idle a GPU.
        std::vector<std::pair<int64_t, analysis::IdleCause>> causes;
        for (size_t k = 0; k < analysis::kIdleCauseCount; ++k)
            if (r.hostOnly->time.causes[k].ns > 0)
                causes.emplace_back(r.hostOnly->time.causes[k].ns, static_cast<analysis::IdleCause>(k));
        std::sort(causes.rbegin(), causes.rend());
        out << "No GPU work: step time on the training thread by cause:";
        for (size_t i = 0; i < causes.size() && i < 4; ++i) {
            char share[32];
            std::snprintf(share, sizeof share, " %.1f%%", 100.0 * double(causes[i].first) / double(std::max<int64_t>(1, r.hostOnly->windowNs)));
            out << (i ? "," : "") << " " << analysis::idleCauseName(causes[i].second) << share;
        }
        out << "\n";
    }
    if (r.findings.empty()) out << "No findings: nothing in the recorded window costs measurable GPU time.\n";
    else out << "Top findings:\n";
    for (size_t i = 0; i < r.findings.size() && i < 3; ++i) {
        const analysis::Finding& f = r.findings[i];
        char line[64];
        std::snprintf(line, sizeof line, "%.1f%%", f.savingShare * 100);
        out << " " << i + 1 << ". [" << analysis::severityName(f.severity) << "] " << f.title
            << "\n"
            << "    " << analysis::savingText(f, analysis::shareBase(r)) << "\n"
            << "    fix: " << f.fix << "\n";
    }
    out << "\nMore: stallscope-cli analyze " << path << "   (or open it in stallscope, Perfetto, HTA)\n";
}

} // namespace

namespace {
/// "a,b,c" -> {"a", "b", "c"} (an empty item stays, for the caller to refuse).
std::vector<std::string> commaItems(std::string_view list) {
    std::vector<std::string> out;
    for (size_t at = 0;;) {
        const size_t comma = list.find(',', at);
        out.emplace_back(
            list.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
        if (comma == std::string_view::npos) return out;
        at = comma + 1;
    }
}
} // namespace

bool parseRecordArgs(int argc, char** argv, int first, RecordCommandOptions& o, std::string& error) {
    // Options of one mode only, for a clear error when given with the other.
    static const std::set<std::string> kAttachOnly = {
        "--pid",           "--iterations", "--process-limit", "--wait",      "--timeout",
        "--kineto-warmup", "--with-stack", "--record-shapes", "--allow-user"};
    static const std::set<std::string> kProgramOnly = {"--delay", "--demo", "--steps",
                                                       "--cuda-profiler-range", "--fake-source"};
    std::string attachOnly, programOnly;
    for (int i = first; i < argc; ++i) {
        const std::string a = argv[i];
        if (kAttachOnly.count(a) && attachOnly.empty()) attachOnly = a;
        if (kProgramOnly.count(a) && programOnly.empty()) programOnly = a;
        if (a == "--wait") o.waitGiven = true;
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--") {
            o.record.command.assign(argv + i + 1, argv + argc);
            break;
        }
        if (a == "-o" || a == "--output") {
            if (!v) return error = "-o needs a file", false;
            o.record.output = v, ++i;
        } else if (a == "--duration" || a == "--delay") {
            double s = 0;
            if (!parseSeconds(v, s) || (a == "--duration" && s <= 0))
                return error = a + " needs a number of seconds" + (a == "--duration" ? " above 0" : ""), false;
            (a == "--duration" ? o.record.durationSeconds : o.record.delaySeconds) = s, ++i;
        } else if (a == "--demo") {
            if (!v) return error = "--demo needs a demo name (--demo list shows them)", false;
            o.demo = v, ++i;
        } else if (a == "--steps") {
            char* end = nullptr;
            const long n = v ? std::strtol(v, &end, 10) : 0;
            if (!v || *end || n < 1 || n > 100000) return error = "--steps needs a number of steps (1-100000)", false;
            o.demoSteps = static_cast<int>(n), ++i;
        } else if (a == "--cuda-profiler-range") {
            // The injection records only between cudaProfilerStart() and cudaProfilerStop()
            // (torch.cuda.profiler.start()/stop()).
            o.record.environment.emplace_back("STALLSCOPE_CAPTURE_PROFILER_RANGE", "1");
        } else if (a == "--fake-source") {
            o.fakeSource = true;
        } else if (a == "--attach") {
            o.attach = true;
        } else if (a == "--list") {
            o.attach = o.attachList = true;
        } else if (a == "--pid") {
            // A pid, or several separated by commas; the job's launcher pid selects its workers.
            if (!v) return error = "--pid needs a process id", false;
            for (const std::string& one : commaItems(v)) {
                char* end = nullptr;
                const long pid = std::strtol(one.c_str(), &end, 10);
                if (one.empty() || *end || pid < 1 || pid > 0x3fffffff)
                    return error = "--pid needs process ids, not " + std::string(v), false;
                o.attachOptions.pids.push_back(static_cast<int32_t>(pid));
            }
            ++i;
        } else if (a == "--iterations" || a == "--process-limit") {
            char* end = nullptr;
            const long n = v ? std::strtol(v, &end, 10) : 0;
            if (!v || *end || n < 1 || n > 1000000)
                return error = a + " needs a whole number above 0", false;
            if (a == "--iterations")
                o.attachOptions.trace.iterations = static_cast<int>(n);
            else
                o.attachOptions.processLimit = static_cast<size_t>(n);
            ++i;
        } else if (a == "--wait" || a == "--timeout") {
            double s = 0;
            if (!parseSeconds(v, s) || s <= 0)
                return error = a + " needs a number of seconds above 0", false;
            (a == "--wait" ? o.attachOptions.waitForProcesses : o.attachOptions.traceTimeout) =
                std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
            ++i;
        } else if (a == "--kineto-warmup") {
            char* end = nullptr;
            const long n = v ? std::strtol(v, &end, 10) : -1;
            if (!v || *end || n < 0 || n > 3600)
                return error = "--kineto-warmup needs whole seconds (0-3600)", false;
            o.attachOptions.trace.warmupSeconds = static_cast<int>(n), ++i;
        } else if (a == "--allow-user") {
            // Another user's processes are served only when named here (root included).
            if (!v) return error = "--allow-user needs a user name or uid", false;
            for (const std::string& one : commaItems(v)) {
                char* end = nullptr;
                const unsigned long uid = std::strtoul(one.c_str(), &end, 10);
                if (!one.empty() && !*end && uid < 0xfffffffful) {
                    o.daemonOptions.allowedUids.push_back(static_cast<uint32_t>(uid));
                } else if (const passwd* pw = one.empty() ? nullptr : ::getpwnam(one.c_str())) {
                    o.daemonOptions.allowedUids.push_back(pw->pw_uid);
                } else {
                    return error = "--allow-user: no user " + one, false;
                }
            }
            // The invoking user stays served.
            o.daemonOptions.allowedUids.push_back(static_cast<uint32_t>(::geteuid()));
            ++i;
        } else if (a == "--with-stack") {
            o.attachOptions.trace.withStack = true;
        } else if (a == "--record-shapes") {
            o.attachOptions.trace.recordShapes = true;
        } else if (a.size() > 1 && a[0] == '-') {
            return error = "unknown option " + a, false;
        } else {
            o.record.command.assign(argv + i, argv + argc);
            break;
        }
    }
    o.outputGiven = !o.record.output.empty();
    if (o.attach) {
        if (!o.record.command.empty())
            return error = "--attach traces a running job: no COMMAND with it", false;
        if (!programOnly.empty())
            return error =
                       programOnly + " records a program it starts: it does not go with --attach",
                   false;
        if (o.record.durationSeconds > 0 && o.attachOptions.trace.iterations > 0)
            return error = "--duration or --iterations: a trace is one or the other", false;
        if (o.record.durationSeconds > 3600)
            return error = "--duration with --attach is at most 3600 s", false;
        if (o.record.durationSeconds > 0)
            o.attachOptions.trace.duration =
                std::chrono::milliseconds(static_cast<int64_t>(o.record.durationSeconds * 1000));
        if (o.record.output.empty()) o.record.output = defaultOutput();
        return true;
    }
    if (!attachOnly.empty()) return error = attachOnly + " goes with --attach", false;
    if (!o.demo.empty() && (o.fakeSource || !o.record.command.empty()))
        return error = "--demo runs a built-in workload: no COMMAND or --fake-source with it", false;
    if (o.demoSteps && o.demo.empty()) return error = "--steps goes with --demo", false;
    if (o.record.command.empty() && !o.fakeSource && o.demo.empty())
        return error = "record needs a COMMAND (after --), --demo NAME or --fake-source", false;
    if (o.record.output.empty()) o.record.output = defaultOutput();
    return true;
}

namespace {

/// record --demo NAME: the demo program (stallscope-demo, which loads LibTorch) becomes the
/// recorded command; it joins the recording through the socket like any LibTorch program.
bool resolveDemo(RecordCommandOptions& o, std::ostream& out, std::ostream& err, int& rc) {
    const std::filesystem::path exe = capture::demoExecutablePath();
    if (exe.empty()) {
        err << "stallscope-cli: record --demo is not built: LibTorch was not found at build time "
               "(install libtorch-dev and rebuild)\n";
        return rc = 1, false;
    }
    if (o.demo == "list" || o.demo == "help") {
        out.flush();
        ::execl(exe.c_str(), exe.c_str(), "list", static_cast<char*>(nullptr));
        err << "stallscope-cli: cannot run " << exe.string() << "\n";
        return rc = 1, false;
    }
    o.record.command = {exe.string(), o.demo};
    if (o.demoSteps) o.record.command.insert(o.record.command.end(), {"--steps", std::to_string(o.demoSteps)});
    return true;
}

} // namespace

int runRecord(RecordCommandOptions o, std::ostream& out, std::ostream& err) {
    if (o.attach) return runAttach(o, out, err);
    if (int rc = 0; !o.demo.empty() && !resolveDemo(o, out, err, rc)) return rc;
    InterruptGuard guard;
    g_interrupts = 0;
    capture::Recording rec;
    if (const base::Status started = rec.start(o.record); !started) {
        err << "stallscope-cli: " << started.error().message << "\n";
        return 1;
    }
    std::atomic<bool> cancelFake{false};
    std::thread fake;
    if (o.fakeSource) {
        capture::FakeSourceOptions fo;
        fo.steps = o.fakeSteps, fo.realTime = true, fo.waitForStart = true;
        fake = std::thread([&rec, &cancelFake, fo] { capture::FakeSource(fo).playTo(rec.socketPath().string(), &cancelFake); });
    }
    const bool hasCommand = !o.record.command.empty();
    waitForTheEnd(rec, hasCommand, err);
    cancelFake = true;
    if (fake.joinable()) fake.join();
    const auto finished = rec.finish();
    const capture::RecordStatus st = rec.status();
    if (!finished) {
        err << "stallscope-cli: " << finished.error().message << "\n";
        return 1;
    }
    const auto& trace = finished.value();
    writeSummary(out, *trace, st, hasCommand);
    out << "Wrote " << o.record.output.string() << "\n";
    writeFindings(out, *trace, o.record.output.string());
    if (!hasCommand) return 0;
    return st.exitCode >= 0 ? st.exitCode : 1;
}

namespace {
int recordMain(Args& args, std::ostream& out, std::ostream& err) {
    // parseRecordArgs reads argv-style (the target's own arguments follow "--").
    std::vector<std::string> copy = args.all();
    std::vector<char*> argv;
    for (std::string& s : copy) argv.push_back(s.data());
    argv.push_back(nullptr);
    RecordCommandOptions o;
    std::string error;
    if (!parseRecordArgs(static_cast<int>(copy.size()), argv.data(), 0, o, error))
        return usageError(kRecordCommand, error, err);
    return runRecord(std::move(o), out, err);
}
} // namespace

extern const Command kRecordCommand{
    "record",
    "  record [-o OUT.json[.gz]] [--delay S] [--duration S] [--cuda-profiler-range] -- COMMAND "
    "ARGS...\n"
    "                                        run COMMAND with live capture (CUPTI), write a "
    "Kineto-\n"
    "                                        compatible trace (default "
    "stallscope-<time>.pt.trace.json.gz)\n"
    "                                        and print the top findings; exits with COMMAND's exit "
    "code.\n"
    "                                        --delay/--duration: record from S seconds after the "
    "start,\n"
    "                                        for S seconds (then COMMAND is stopped); Ctrl-C "
    "stops.\n"
    "                                        --cuda-profiler-range: GPU capture only between\n"
    "                                        cudaProfilerStart/Stop "
    "(torch.cuda.profiler.start/stop)\n"
    "                                        --fake-source: a scripted training loop joins (for "
    "demos\n"
    "                                        and tests; COMMAND is optional then)\n"
    "  record --attach [--pid PID[,PID...]] [--duration S | --iterations N] [-o OUT]\n"
    "         [--wait S] [--timeout S] [--process-limit N] [--kineto-warmup S] [--with-stack]\n"
    "         [--record-shapes] [--allow-user USER[,USER...]]\n"
    "                                        trace a running PyTorch job started with\n"
    "                                        KINETO_USE_DAEMON=1 (no code change): Stallscope\n"
    "                                        answers Kineto's daemon polls (as dynolog does), "
    "asks\n"
    "                                        for a trace of S seconds (default 2) or N optimizer\n"
    "                                        steps, collects the file Kineto writes (operators "
    "and\n"
    "                                        kernels) into OUT, a folder when several processes\n"
    "                                        (ranks) were traced, and analyses it. --pid: only\n"
    "                                        those processes or their children (default: all);\n"
    "                                        --wait: for the first poll (15 s); --timeout: for "
    "the\n"
    "                                        files (120 s). Only processes of the invoking "
    "user\n"
    "                                        are served (root too); --allow-user serves those "
    "users'\n"
    "                                        as well (docs/security.md)\n"
    "  record --list [--wait S]              the PyTorch processes polling for a trace\n"
    "  record [-o OUT] --demo NAME|list [--steps N]\n"
    "                                        record a built-in LibTorch workload (stallscope-demo) "
    "that\n"
    "                                        reproduces a bottleneck, or its fixed variant\n",
    recordMain};

} // namespace stallscope::cli
