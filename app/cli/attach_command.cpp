// stallscope-cli record --attach: a running PyTorch job's own Kineto trace, through the
// daemon protocol Kineto polls when the job runs with KINETO_USE_DAEMON=1.
#include "analyze_command.h"
#include "record_command.h"

#include "stallscope/base/atomic_file.h"

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

bool endsWith(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Copies Kineto's file to `dest` (gzip-compressed when dest ends in .gz), in chunks.
bool copyTrace(const std::filesystem::path& from, const std::filesystem::path& dest,
               std::string& error) {
    std::ifstream in(from, std::ios::binary);
    if (!in) return error = "cannot read " + from.string(), false;
    base::AtomicFile f;
    const auto compression = endsWith(dest.string(), ".gz") ? base::AtomicFile::Compression::Gzip
                                                            : base::AtomicFile::Compression::None;
    if (!f.open(dest, compression)) return error = f.error(), false;
    std::string buf(1 << 20, '\0');
    while (in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        if (in.gcount() > 0 && !f.write(std::string_view(buf.data(), size_t(in.gcount()))))
            return error = f.error(), false;
    }
    if (!f.commit()) return error = f.error(), false;
    return true;
}

std::string stem(const std::string& output) {
    for (std::string_view ext : {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"})
        if (endsWith(output, ext)) return output.substr(0, output.size() - ext.size());
    return output;
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
    std::string error;
    if (!daemon.start({}, error)) {
        err << "stallscope-cli: " << error << "\n";
        return 1;
    }
    auto say = [&](const std::string& line) {
        err << "stallscope: " << line << "\n" << std::flush;
    };

    if (o.attachList) {
        // One poll interval (or --wait) is enough for every process to show.
        const auto wait = o.attachOptions.waitForProcesses == k::AttachOptions{}.waitForProcesses
                              ? o.attachOptions.settle
                              : o.attachOptions.waitForProcesses;
        say("listening on " + daemon.address() + " for " +
            std::to_string(wait.count() / 1000.0).substr(0, 4) +
            " s (PyTorch processes started with KINETO_USE_DAEMON=1 poll every 5 s)");
        const auto until = std::chrono::steady_clock::now() + wait;
        while (std::chrono::steady_clock::now() < until && !g_attachCancel)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto ps = daemon.processes();
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
    for (const std::string& p : r.problems) err << "stallscope-cli: " << p << "\n";
    if (r.cancelled) {
        err << "stallscope-cli: attach cancelled\n";
        if (r.traces.empty()) return 1;
    }
    if (r.traces.empty()) return 1;

    // One trace: the output file. Several (the ranks of a job): a folder of them, which
    // every Stallscope command opens as one multi-rank session.
    std::filesystem::path dest = o.record.output;
    std::vector<std::filesystem::path> written;
    if (r.traces.size() > 1) {
        const std::filesystem::path dir = stem(o.record.output.string());
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) {
            err << "stallscope-cli: cannot create " << dir.string() << ": " << ec.message() << "\n";
            return 1;
        }
        dest = dir;
    }
    for (const k::AttachedTrace& t : r.traces) {
        const std::filesystem::path target =
            r.traces.size() == 1 ? dest
                                 : dest / ("pid" + std::to_string(t.pid) + ".pt.trace.json.gz");
        if (!copyTrace(t.path, target, error)) {
            err << "stallscope-cli: cannot write " << target.string() << ": " << error << "\n";
            return 1;
        }
        written.push_back(target);
        // Kineto's copy in our own /tmp folder is ours to remove; its default file is not.
        if (t.path.parent_path().filename().string().rfind("stallscope-attach-", 0) == 0) {
            std::error_code ec;
            std::filesystem::remove(t.path, ec);
            std::filesystem::remove(t.path.parent_path(), ec); // only when empty
        }
    }
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
    ao.paths = {dest.string()};
    const int analysed = runAnalyze(ao, out, err);
    return r.problems.empty() && !r.cancelled ? analysed : 1;
}

} // namespace stallscope::cli
