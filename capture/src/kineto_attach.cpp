// Attach: wait for PyTorch processes to poll, queue an on-demand trace config for them, and
// wait for the files Kineto writes (kineto_daemon.h).
#include "stallscope/capture/kineto_daemon.h"

#include "stallscope/base/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

namespace stallscope::capture::kineto {

namespace {

using Clock = std::chrono::steady_clock;

std::string describe(const KinetoProcess& p) {
    std::string s = "pid " + std::to_string(p.pid);
    if (!p.command.empty())
        s += " (" + (p.command.size() > 80 ? p.command.substr(0, 77) + "..." : p.command) + ")";
    if (p.jobId) s += " job " + std::to_string(p.jobId);
    return s;
}

bool wanted(const KinetoProcess& p, const std::vector<int32_t>& pids) {
    if (pids.empty()) return true;
    return std::any_of(p.ancestry.begin(), p.ancestry.end(), [&](int32_t a) {
        return std::find(pids.begin(), pids.end(), a) != pids.end();
    });
}

/// A fresh folder of an unguessable name under /tmp (newer Kineto writes on-demand traces only
/// below /tmp/ or $KINETO_ONDEMAND_TRACE_DIR), private to this user: made writable for others
/// (sticky, like /tmp) only when a traced process runs as another user.
std::filesystem::path freshTraceFolder(const std::vector<KinetoProcess>& traced,
                                       std::string& error) {
    const char* dir = std::getenv("KINETO_ONDEMAND_TRACE_DIR");
    std::string base = dir && *dir ? dir : "/tmp";
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    std::string name = base + "/stallscope-attach-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) {
        error = "cannot create a folder for the traces in " + base + ": " + std::strerror(errno);
        return {};
    }
    bool otherUser = false;
    for (const KinetoProcess& p : traced) {
        struct stat st {};
        const std::string proc = "/proc/" + std::to_string(p.pid);
        otherUser = otherUser || (::stat(proc.c_str(), &st) == 0 && st.st_uid != ::geteuid());
    }
    if (otherUser) ::chmod(name.c_str(), 01777);
    return name;
}

struct Watch {
    KinetoProcess process;
    std::filesystem::path expected, fallback;
    uintmax_t lastSize = 0;
    Clock::time_point stableSince{};
    bool done = false;
    bool announcedDelivery = false;
    std::filesystem::path found;
};

/// The file is complete and has not grown for 0.5 s.
bool settled(Watch& w, const std::filesystem::path& p, Clock::time_point now) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(p, ec);
    if (ec || size == 0) return false;
    if (size != w.lastSize) {
        w.lastSize = size;
        w.stableSince = now;
        return false;
    }
    return now - w.stableSince >= std::chrono::milliseconds(500) && traceFileComplete(p);
}

} // namespace

bool traceFileComplete(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::exists(path.string() + ".tmp", ec))
        return false; // Kineto 2.x still writing
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    if (size <= 0) return false;
    const std::streamoff tail = std::min<std::streamoff>(size, 256);
    f.seekg(size - tail);
    std::string t(static_cast<size_t>(tail), '\0');
    f.read(t.data(), tail);
    auto trim = [&t] {
        while (!t.empty() &&
               (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
            t.pop_back();
    };
    trim();
    if (t.empty() || t.back() != '}') return false;
    // The document's end, not an event's: Kineto ends with its "traceName" (and the like)
    // after the events, or the events array closes right before the last brace.
    if (t.find("\"traceName\"") != std::string::npos) return true;
    t.pop_back();
    trim();
    return !t.empty() && t.back() == ']';
}

AttachResult attachAndTrace(KinetoDaemon& daemon, const AttachOptions& o,
                            const std::function<void(const std::string&)>& say,
                            const std::atomic<bool>* cancel) {
    AttachResult res;
    auto cancelled = [&] { return cancel && cancel->load(); };
    auto sleep = [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); };
    say("waiting for PyTorch processes to poll " + daemon.address() +
        " (they do when started with KINETO_USE_DAEMON=1, every 5 s)");

    // 1. The first wanted process, then a poll interval for the others (every rank of a job).
    const auto start = Clock::now();
    const auto deadline = start + o.waitForProcesses;
    Clock::time_point firstAt{};
    std::vector<KinetoProcess> selected;
    std::set<int32_t> announced;
    for (;;) {
        if (cancelled()) return res.cancelled = true, res.seen = daemon.processes(), res;
        const auto now = Clock::now();
        res.seen = daemon.processes();
        selected.clear();
        for (const KinetoProcess& p : res.seen)
            if (wanted(p, o.pids)) selected.push_back(p);
        if (!selected.empty() && firstAt == Clock::time_point{}) firstAt = now;
        for (const KinetoProcess& p : selected)
            if (announced.insert(p.pid).second) say("found " + describe(p));
        // Named pids that are themselves polling processes need no more waiting; a launcher's
        // pid (an ancestor) waits a poll interval for all of its workers.
        bool allNamed = !o.pids.empty();
        for (int32_t pid : o.pids)
            allNamed =
                allNamed && std::any_of(selected.begin(), selected.end(),
                                        [&](const KinetoProcess& p) { return p.pid == pid; });
        if (allNamed) break;
        if (firstAt != Clock::time_point{} && (now - firstAt >= o.settle || now >= deadline)) break;
        if (firstAt == Clock::time_point{} && now >= deadline) break;
        sleep();
    }
    if (selected.empty()) {
        char within[32];
        std::snprintf(within, sizeof within, "%.1f s", double(o.waitForProcesses.count()) / 1000.0);
        std::string why = "no PyTorch process polled " + daemon.address() + " within " + within;
        if (!o.pids.empty() && !res.seen.empty()) {
            why += " with the pids given; polling:";
            for (const KinetoProcess& p : res.seen) why += " " + std::to_string(p.pid);
        } else {
            why +=
                ". Start the job with KINETO_USE_DAEMON=1 set before `import torch` (older PyTorch "
                "polls only "
                "after its first CUDA call; with KINETO_IPC_SOCKET_DIR, set the same folder here)";
        }
        res.problems.push_back(why);
        return res;
    }

    // 2. The request.
    TraceRequest trace = o.trace;
    if (trace.logFile.empty()) {
        std::string error;
        const std::filesystem::path folder = freshTraceFolder(selected, error);
        if (folder.empty()) {
            res.problems.push_back(error);
            return res;
        }
        trace.logFile = folder / "trace.pt.trace.json";
    }
    const std::string config = onDemandConfig(trace);
    std::vector<int32_t> leafPids;
    for (const KinetoProcess& p : selected) leafPids.push_back(p.pid);
    const std::vector<int32_t> queued =
        daemon.request(leafPids, config, o.processLimit, /*exact=*/true);
    const auto requestedAt = Clock::now();
    const auto requestedWall = std::filesystem::file_time_type::clock::now();
    std::vector<Watch> watches;
    for (int32_t pid : queued) {
        Watch w;
        for (const KinetoProcess& p : selected)
            if (p.pid == pid) w.process = p;
        w.expected = kinetoTracePath(trace.logFile, pid);
        w.fallback = kinetoDefaultTracePath(pid);
        watches.push_back(std::move(w));
    }
    say("trace requested from " + std::to_string(queued.size()) + " process" +
        (queued.size() == 1 ? "" : "es") +
        (trace.iterations > 0
             ? ": the next " + std::to_string(trace.iterations) + " optimizer steps"
             : ": " + std::to_string(trace.duration.count()) + " ms after Kineto's warm-up (~" +
                   std::to_string((trace.warmupSeconds >= 0 ? trace.warmupSeconds : 5) + 2) +
                   " s)") +
        "; Kineto writes " +
        kinetoTracePath(trace.logFile, queued.empty() ? 0 : queued.front()).string());
    if (o.processLimit && selected.size() > queued.size())
        res.problems.push_back(std::to_string(selected.size() - queued.size()) +
                               " more processes polled; --process-limit " +
                               std::to_string(o.processLimit) + " left them out");

    // 3. The files.
    const auto traceDeadline =
        requestedAt + o.traceTimeout +
        (trace.iterations > 0 ? std::chrono::milliseconds(0) : trace.duration);
    for (;;) {
        if (cancelled()) {
            daemon.cancelPending();
            res.cancelled = true;
            break;
        }
        const auto now = Clock::now();
        const std::vector<KinetoProcess> current = daemon.processes();
        bool all = true;
        for (Watch& w : watches) {
            if (w.done) continue;
            for (const KinetoProcess& p : current)
                if (p.pid == w.process.pid && p.jobId == w.process.jobId) {
                    if (p.delivered > w.process.delivered && !w.announcedDelivery) {
                        w.announcedDelivery = true;
                        say("pid " + std::to_string(p.pid) + " took the request");
                    }
                }
            if (settled(w, w.expected, now)) {
                w.done = true, w.found = w.expected;
            } else {
                // Kineto that refuses the folder writes its default file instead.
                std::error_code ec;
                const auto mtime = std::filesystem::last_write_time(w.fallback, ec);
                if (!ec && mtime >= requestedWall && settled(w, w.fallback, now))
                    w.done = true, w.found = w.fallback;
            }
            if (w.done) {
                say("pid " + std::to_string(w.process.pid) + " wrote " + w.found.string());
                res.traces.push_back({w.process.pid, w.process.command, w.found});
            }
            all = all && w.done;
        }
        if (all || now >= traceDeadline) break;
        sleep();
    }
    if (!res.cancelled) {
        const auto current = daemon.processes();
        for (const Watch& w : watches) {
            if (w.done) continue;
            const bool took = w.announcedDelivery;
            const bool stillPolling =
                std::any_of(current.begin(), current.end(), [&](const KinetoProcess& p) {
                    return p.pid == w.process.pid &&
                           Clock::now() - p.lastSeen < std::chrono::seconds(15);
                });
            std::string why =
                describe(w.process) + " wrote no trace to " + w.expected.string() + " within " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - requestedAt)
                        .count()) +
                " s: ";
            if (!took)
                why += stillPolling
                           ? "it kept polling without taking the request (it was busy tracing)"
                           : "it did not poll again (did it end?)";
            else if (trace.iterations > 0)
                why += "Kineto took the request; an iteration request needs optimizer.step() calls "
                       "(and is dropped "
                       "before the first one)";
            else
                why +=
                    "Kineto took the request but wrote nothing there (a CPU-only PyTorch does not "
                    "trace on demand; a process in another container writes to its own /tmp; see "
                    "the job's log for Kineto's messages)";
            res.problems.push_back(why);
        }
    }
    daemon.cancelPending();
    std::sort(res.traces.begin(), res.traces.end(),
              [](const AttachedTrace& a, const AttachedTrace& b) { return a.pid < b.pid; });
    return res;
}

namespace {

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

} // namespace

std::filesystem::path collectTraces(const AttachResult& r, const std::filesystem::path& output,
                                    std::vector<std::filesystem::path>& written,
                                    std::string& error) {
    written.clear();
    if (r.traces.empty()) return error = "no trace to collect", std::filesystem::path();
    std::filesystem::path dest = output;
    if (r.traces.size() > 1) {
        dest = stem(output.string());
        std::error_code ec;
        std::filesystem::create_directories(dest, ec);
        if (ec)
            return error = "cannot create " + dest.string() + ": " + ec.message(),
                   std::filesystem::path();
    }
    for (const AttachedTrace& t : r.traces) {
        const std::filesystem::path target =
            r.traces.size() == 1 ? dest
                                 : dest / ("pid" + std::to_string(t.pid) + ".pt.trace.json.gz");
        if (!copyTrace(t.path, target, error)) {
            error = "cannot write " + target.string() + ": " + error;
            return {};
        }
        written.push_back(target);
        if (t.path.parent_path().filename().string().rfind("stallscope-attach-", 0) == 0) {
            std::error_code ec;
            std::filesystem::remove(t.path, ec);
            std::filesystem::remove(t.path.parent_path(), ec); // only when empty
        }
    }
    return dest;
}

} // namespace stallscope::capture::kineto
