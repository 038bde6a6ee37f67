// stallscope-cli record --attach: a running PyTorch job's own Kineto trace, through the
// daemon protocol Kineto polls when the job runs with KINETO_USE_DAEMON=1.
#include "analyze_command.h"
#include "command.h"
#include "record_command.h"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

namespace stallscope::cli {

namespace {

std::atomic<bool> g_attachCancel{false};
extern "C" void onAttachInterrupt(int) {
    g_attachCancel.store(true);
}

void listProcesses(const std::vector<capture::kineto::KinetoProcess>& ps, std::ostream& out) {
    out << "     pid      job  polls  command\n";
    for (const auto& p : ps) {
        char line[64];
        std::snprintf(line, sizeof line, "%8d %8lld %6d  ", p.pid, static_cast<long long>(p.jobId),
                      p.polls);
        out << line
            << (p.command.empty() ? "(not visible from here: another pid namespace?)" : p.command)
            << (p.busy ? "   [tracing]" : "") << "\n";
    }
}

/// What the daemon did not serve or understand (other users' polls, spoofed pids, garbage):
/// said, never acted on.
void tellRefused(const capture::kineto::KinetoDaemon& daemon, std::ostream& err) {
    const size_t refused = daemon.refusedPolls(), bad = daemon.badMessages();
    if (!refused && !bad) return;
    err << "stallscope-cli: " << refused << " datagram" << (refused == 1 ? "" : "s")
        << " not served and " << bad << " not understood:\n";
    for (const std::string& p : daemon.problems()) err << "  " << p << "\n";
}

} // namespace

int runAttach(const RecordCommandOptions& o, std::ostream& out, std::ostream& err) {
    namespace k = capture::kineto;
    g_attachCancel = false;
    struct sigaction sa {
    }, oldInt{}, oldTerm{};
    sa.sa_handler = onAttachInterrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &oldInt);
    ::sigaction(SIGTERM, &sa, &oldTerm);
    struct Restore {
        struct sigaction i, t;
        ~Restore() {
            ::sigaction(SIGINT, &i, nullptr);
            ::sigaction(SIGTERM, &t, nullptr);
        }
    } restore{oldInt, oldTerm};

    k::KinetoDaemon daemon;
    if (const base::Status started = daemon.start(o.daemonOptions); !started) {
        err << "stallscope-cli: " << started.error().message << "\n";
        return 1;
    }
    auto say = [&](const std::string& line) {
        if (!quiet()) err << "stallscope: " << line << "\n" << std::flush;
    };

    if (o.attachList) {
        // One poll interval (or --wait) is enough for every process to show.
        const auto wait = o.waitGiven ? o.attachOptions.waitForProcesses : o.attachOptions.settle;
        say("listening on " + daemon.address() + " for " +
            std::to_string(wait.count() / 1000.0).substr(0, 4) +
            " s (PyTorch processes started with KINETO_USE_DAEMON=1 poll every 5 s)");
        const auto until = std::chrono::steady_clock::now() + wait;
        while (std::chrono::steady_clock::now() < until && !g_attachCancel)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto ps = daemon.processes();
        tellRefused(daemon, err);
        if (ps.empty()) {
            err << "stallscope-cli: no PyTorch process polled " << daemon.address()
                << ". Start the job with KINETO_USE_DAEMON=1 set before `import torch`.\n";
            return 1;
        }
        listProcesses(ps, out);
        return 0;
    }

    const k::AttachResult r = k::attachAndTrace(daemon, o.attachOptions, say, &g_attachCancel);
    daemon.stop();
    tellRefused(daemon, err);
    for (const std::string& p : r.problems) err << "stallscope-cli: " << p << "\n";
    if (r.cancelled) {
        err << "stallscope-cli: attach cancelled\n";
        if (r.traces.empty()) return 1;
    }
    if (r.traces.empty()) return 1;

    const base::Result<k::CollectedTraces> collected = k::collectTraces(r, o.record.output);
    if (!collected) {
        err << "stallscope-cli: " << collected.error().message << "\n";
        return 1;
    }
    const std::vector<std::filesystem::path>& written = collected.value().written;
    out << "Attached: " << r.traces.size() << " trace" << (r.traces.size() == 1 ? "" : "s")
        << " from Kineto ("
        << (o.attachOptions.trace.iterations > 0
                ? std::to_string(o.attachOptions.trace.iterations) + " iterations"
                : std::to_string(o.attachOptions.trace.duration.count()) + " ms")
        << ")\n";
    for (size_t i = 0; i < written.size(); ++i)
        out << "Wrote " << written[i].string() << "   (pid " << r.traces[i].pid
            << (r.traces[i].command.empty() ? "" : ": " + r.traces[i].command) << ")\n";
    out << "\n";
    AnalyzeOptions ao;
    ao.paths = {collected.value().open.string()};
    const int analysed = runAnalyze(ao, out, err);
    return r.problems.empty() && !r.cancelled ? analysed : 1;
}

} // namespace stallscope::cli
