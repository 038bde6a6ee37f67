// Attach: wait for PyTorch processes to poll, queue an on-demand trace config for them, and
// wait for the files Kineto writes (kineto_daemon.h).
#include "stallscope/capture/kineto_daemon.h"

#include "stallscope/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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
/// below /tmp/ or $KINETO_ONDEMAND_TRACE_DIR), mode 0700, never writable by anyone else: for
/// processes of this user it is ours; for another user's (served only with --allow-user) root
/// gives it to that user, so that only the traced process's user can write in it.
std::filesystem::path freshTraceFolder(uint32_t uid, uint32_t gid, std::string& error) {
    const char* dir = std::getenv("KINETO_ONDEMAND_TRACE_DIR");
    std::string base = dir && *dir ? dir : "/tmp";
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    if (uid != ::geteuid() && ::geteuid() != 0) {
        error = "the traced process runs as uid " + std::to_string(uid) +
                ": only root can give it a trace folder of its own";
        return {};
    }
    std::string name = base + "/stallscope-attach-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) {
        error = "cannot create a folder for the traces in " + base + ": " + std::strerror(errno);
        return {};
    }
    if (uid != ::geteuid() && ::chown(name.c_str(), uid, gid) != 0) {
        error = "cannot give the trace folder " + name + " to uid " + std::to_string(uid) + ": " +
                std::strerror(errno);
        ::rmdir(name.c_str());
        return {};
    }
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
    std::string refused; // why a file there was not taken (a link, another owner)
};

/// The last 256 bytes of an open file end a complete JSON trace.
bool completeAt(int fd, off_t size) {
    if (size <= 0) return false;
    const off_t tail = std::min<off_t>(size, 256);
    std::string t(static_cast<size_t>(tail), '\0');
    if (::pread(fd, t.data(), size_t(tail), size - tail) != tail) return false;
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

/// The file is complete, owned by the traced process's user, not a link, and has not grown
/// for 0.5 s.
bool settled(Watch& w, const std::filesystem::path& p, Clock::time_point now) {
    std::error_code ec;
    if (std::filesystem::exists(p.string() + ".tmp", ec)) return false; // Kineto 2.x writing
    std::string why;
    const int fd = openOwnedTrace(p, w.process.uid, why);
    if (fd < 0) {
        if (errno != ENOENT && w.refused.empty()) w.refused = why;
        return false;
    }
    struct stat st {};
    const bool stat = ::fstat(fd, &st) == 0;
    const uintmax_t size = stat ? uintmax_t(st.st_size) : 0;
    bool ok = false;
    if (stat && size > 0) {
        if (size != w.lastSize) {
            w.lastSize = size;
            w.stableSince = now;
        } else {
            ok =
                now - w.stableSince >= std::chrono::milliseconds(500) && completeAt(fd, st.st_size);
        }
    }
    ::close(fd);
    return ok;
}

} // namespace

int openOwnedTrace(const std::filesystem::path& path, uint32_t uid, std::string& why) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        why = e == ELOOP ? path.string() + " is a symbolic link: not read"
                         : "cannot read " + path.string() + ": " + std::strerror(e);
        errno = e;
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
        const bool regular = S_ISREG(st.st_mode);
        why = !regular ? path.string() + " is not a regular file: not read"
                       : path.string() + " is owned by uid " + std::to_string(st.st_uid) +
                             ", not by the traced process's user (uid " + std::to_string(uid) +
                             "): not read";
        ::close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

bool traceFileComplete(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::exists(path.string() + ".tmp", ec))
        return false; // Kineto 2.x still writing
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && completeAt(fd, st.st_size);
    ::close(fd);
    return ok;
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

    // 2. The request: one config per user of the processes chosen, each naming a folder only
    //    that user can write in (the processes of one user share one).
    size_t leftOut = 0;
    if (o.processLimit && selected.size() > o.processLimit) {
        leftOut = selected.size() - o.processLimit;
        selected.resize(o.processLimit);
    }
    TraceRequest trace = o.trace;
    std::map<uint32_t, std::filesystem::path> logFiles; // per uid
    std::vector<int32_t> queued;
    std::vector<Watch> watches;
    for (const KinetoProcess& first : selected) {
        if (logFiles.count(first.uid)) continue;
        std::filesystem::path logFile = o.trace.logFile;
        if (logFile.empty()) {
            std::string error;
            const std::filesystem::path folder = freshTraceFolder(first.uid, first.gid, error);
            if (folder.empty()) {
                res.problems.push_back(error);
                logFiles[first.uid];
                continue;
            }
            logFile = folder / "trace.pt.trace.json";
        }
        logFiles[first.uid] = logFile;
        trace.logFile = logFile;
        std::vector<int32_t> pids;
        for (const KinetoProcess& p : selected)
            if (p.uid == first.uid) pids.push_back(p.pid);
        for (int32_t pid : daemon.request(pids, onDemandConfig(trace), 0, /*exact=*/true)) {
            queued.push_back(pid);
            Watch w;
            for (const KinetoProcess& p : selected)
                if (p.pid == pid) w.process = p;
            const int32_t filePid = w.process.filePid ? w.process.filePid : pid;
            w.expected = kinetoTracePath(logFile, filePid);
            w.fallback = kinetoDefaultTracePath(filePid);
            watches.push_back(std::move(w));
        }
    }
    if (queued.empty()) {
        if (res.problems.empty()) res.problems.push_back("no process took a trace request");
        return res;
    }
    const auto requestedAt = Clock::now();
    const auto requestedWall = std::filesystem::file_time_type::clock::now();
    say("trace requested from " + std::to_string(queued.size()) + " process" +
        (queued.size() == 1 ? "" : "es") +
        (trace.iterations > 0
             ? ": the next " + std::to_string(trace.iterations) + " optimizer steps"
             : ": " + std::to_string(trace.duration.count()) + " ms after Kineto's warm-up (~" +
                   std::to_string((trace.warmupSeconds >= 0 ? trace.warmupSeconds : 5) + 2) +
                   " s)") +
        "; Kineto writes " + watches.front().expected.string());
    if (leftOut)
        res.problems.push_back(std::to_string(leftOut) +
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
                res.traces.push_back({w.process.pid, w.process.uid, w.process.command, w.found});
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
            if (!w.refused.empty())
                why += w.refused;
            else if (!took)
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

/// Copies Kineto's file to `dest` (gzip-compressed when dest ends in .gz), in chunks: read
/// only when it is a regular file owned by the traced process's user (openOwnedTrace).
bool copyTrace(const AttachedTrace& t, const std::filesystem::path& dest, std::string& error) {
    const int fd = openOwnedTrace(t.path, t.uid, error);
    if (fd < 0) return false;
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    base::AtomicFile f;
    const auto compression = endsWith(dest.string(), ".gz") ? base::AtomicFile::Compression::Gzip
                                                            : base::AtomicFile::Compression::None;
    if (!f.open(dest, compression)) return error = f.error(), false;
    std::string buf(1 << 20, '\0');
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            return error = "cannot read " + t.path.string() + ": " + std::strerror(errno), false;
        if (n == 0) break;
        if (!f.write(std::string_view(buf.data(), size_t(n)))) return error = f.error(), false;
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
        if (!copyTrace(t, target, error)) {
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
