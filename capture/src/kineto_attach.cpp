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
    const base::Result<OwnedFd> opened = openOwnedTrace(p, w.process.uid);
    if (!opened) {
        if (opened.error().kind != base::ErrorKind::NotFound && w.refused.empty())
            w.refused = opened.error().message;
        return false;
    }
    const int fd = opened.value().get();
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
    return ok;
}

using Say = std::function<void(const std::string&)>;

bool isCancelled(const std::atomic<bool>* cancel) {
    return cancel && cancel->load();
}

void pause() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

/// Step 1: the first wanted process, then a poll interval for the others (every rank of a job).
/// Returns the processes selected; `res.seen` gets every process that polled, and
/// `res.cancelled` is set (nothing selected) when `cancel` ends the wait.
std::vector<KinetoProcess> awaitProcesses(KinetoDaemon& daemon, const AttachOptions& o,
                                          const Say& say, const std::atomic<bool>* cancel,
                                          AttachResult& res) {
    const auto start = Clock::now();
    const auto deadline = start + o.waitForProcesses;
    Clock::time_point firstAt{};
    std::vector<KinetoProcess> selected;
    std::set<int32_t> announced;
    for (;;) {
        if (isCancelled(cancel)) {
            res.cancelled = true;
            res.seen = daemon.processes();
            return {};
        }
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
        if (allNamed) return selected;
        if (firstAt != Clock::time_point{} && (now - firstAt >= o.settle || now >= deadline))
            return selected;
        if (firstAt == Clock::time_point{} && now >= deadline) return selected;
        pause();
    }
}

/// Why nothing was selected: no process polled in time, or none with the pids given.
std::string noProcessPolled(const KinetoDaemon& daemon, const AttachOptions& o,
                            const std::vector<KinetoProcess>& seen) {
    char within[32];
    std::snprintf(within, sizeof within, "%.1f s", double(o.waitForProcesses.count()) / 1000.0);
    std::string why = "no PyTorch process polled " + daemon.address() + " within " + within;
    if (!o.pids.empty() && !seen.empty()) {
        why += " with the pids given; polling:";
        for (const KinetoProcess& p : seen) why += " " + std::to_string(p.pid);
    } else {
        why += ". Start the job with KINETO_USE_DAEMON=1 set before `import torch` (older PyTorch "
               "polls only "
               "after its first CUDA call; with KINETO_IPC_SOCKET_DIR, set the same folder here)";
    }
    return why;
}

/// What was asked for: the request (with the last log file named) and a watch per process it
/// was queued for.
struct Requested {
    TraceRequest trace;
    std::vector<Watch> watches;
};

/// Step 2: one config per user of the processes chosen, each naming a folder only that user
/// can write in (the processes of one user share one). A folder that cannot be made is a
/// problem, and that user's processes are not asked.
Requested requestTraces(KinetoDaemon& daemon, const AttachOptions& o,
                        const std::vector<KinetoProcess>& selected,
                        std::vector<std::string>& problems) {
    Requested req;
    req.trace = o.trace;
    std::map<uint32_t, std::filesystem::path> logFiles; // per uid
    for (const KinetoProcess& first : selected) {
        if (logFiles.count(first.uid)) continue;
        std::filesystem::path logFile = o.trace.logFile;
        if (logFile.empty()) {
            std::string error;
            const std::filesystem::path folder = freshTraceFolder(first.uid, first.gid, error);
            if (folder.empty()) {
                problems.push_back(error);
                logFiles[first.uid];
                continue;
            }
            logFile = folder / "trace.pt.trace.json";
        }
        logFiles[first.uid] = logFile;
        req.trace.logFile = logFile;
        std::vector<int32_t> pids;
        for (const KinetoProcess& p : selected)
            if (p.uid == first.uid) pids.push_back(p.pid);
        for (int32_t pid : daemon.request(pids, onDemandConfig(req.trace), 0, /*exact=*/true)) {
            Watch w;
            for (const KinetoProcess& p : selected)
                if (p.pid == pid) w.process = p;
            const int32_t filePid = w.process.filePid ? w.process.filePid : pid;
            w.expected = kinetoTracePath(logFile, filePid);
            w.fallback = kinetoDefaultTracePath(filePid);
            req.watches.push_back(std::move(w));
        }
    }
    return req;
}

/// "trace requested from 2 processes: 2000 ms after Kineto's warm-up (~7 s); Kineto writes ..."
std::string requestedLine(const Requested& req) {
    const TraceRequest& trace = req.trace;
    const size_t n = req.watches.size();
    return "trace requested from " + std::to_string(n) + " process" + (n == 1 ? "" : "es") +
           (trace.iterations > 0
                ? ": the next " + std::to_string(trace.iterations) + " optimizer steps"
                : ": " + std::to_string(trace.duration.count()) + " ms after Kineto's warm-up (~" +
                      std::to_string((trace.warmupSeconds >= 0 ? trace.warmupSeconds : 5) + 2) +
                      " s)") +
           "; Kineto writes " + req.watches.front().expected.string();
}

/// One look at a process's files: says when it took the request and when its file is there
/// (then `w` is done and its trace is in `res`).
void checkWatch(Watch& w, const std::vector<KinetoProcess>& current,
                std::filesystem::file_time_type requestedWall, Clock::time_point now,
                const Say& say, AttachResult& res) {
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
}

/// Step 3: the files, until every process wrote its own, `deadline`, or `cancel` (then the
/// requests not handed out are withdrawn and `res.cancelled` is set).
void awaitTraceFiles(KinetoDaemon& daemon, std::vector<Watch>& watches,
                     std::filesystem::file_time_type requestedWall, Clock::time_point deadline,
                     const Say& say, const std::atomic<bool>* cancel, AttachResult& res) {
    for (;;) {
        if (isCancelled(cancel)) {
            daemon.cancelPending();
            res.cancelled = true;
            return;
        }
        const auto now = Clock::now();
        const std::vector<KinetoProcess> current = daemon.processes();
        bool all = true;
        for (Watch& w : watches) {
            if (w.done) continue;
            checkWatch(w, current, requestedWall, now, say, res);
            all = all && w.done;
        }
        if (all || now >= deadline) return;
        pause();
    }
}

/// Why the process of `w` wrote no trace (`current`: the processes polling now).
std::string whyNoTrace(const Watch& w, const std::vector<KinetoProcess>& current,
                       const TraceRequest& trace, Clock::time_point requestedAt) {
    const bool took = w.announcedDelivery;
    const bool stillPolling =
        std::any_of(current.begin(), current.end(), [&](const KinetoProcess& p) {
            return p.pid == w.process.pid && Clock::now() - p.lastSeen < std::chrono::seconds(15);
        });
    std::string why =
        describe(w.process) + " wrote no trace to " + w.expected.string() + " within " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - requestedAt).count()) +
        " s: ";
    if (!w.refused.empty())
        why += w.refused;
    else if (!took)
        why += stillPolling ? "it kept polling without taking the request (it was busy tracing)"
                            : "it did not poll again (did it end?)";
    else if (trace.iterations > 0)
        why += "Kineto took the request; an iteration request needs optimizer.step() calls "
               "(and is dropped "
               "before the first one)";
    else
        why += "Kineto took the request but wrote nothing there (a CPU-only PyTorch does not "
               "trace on demand; a process in another container writes to its own /tmp; see "
               "the job's log for Kineto's messages)";
    return why;
}

} // namespace

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = other.release();
    }
    return *this;
}

OwnedFd::~OwnedFd() {
    if (m_fd >= 0) ::close(m_fd);
}

base::Result<OwnedFd> openOwnedTrace(const std::filesystem::path& path, uint32_t uid) {
    OwnedFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) {
        const int e = errno;
        return base::Error{e == ENOENT ? base::ErrorKind::NotFound : base::ErrorKind::Unreadable,
                           e == ELOOP ? path.string() + " is a symbolic link: not read"
                                      : "cannot read " + path.string() + ": " + std::strerror(e)};
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
        const bool regular = S_ISREG(st.st_mode);
        return base::Error{base::ErrorKind::Unreadable,
                           !regular
                               ? path.string() + " is not a regular file: not read"
                               : path.string() + " is owned by uid " + std::to_string(st.st_uid) +
                                     ", not by the traced process's user (uid " +
                                     std::to_string(uid) + "): not read"};
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

AttachResult attachAndTrace(KinetoDaemon& daemon, const AttachOptions& o, const Say& say,
                            const std::atomic<bool>* cancel) {
    AttachResult res;
    say("waiting for PyTorch processes to poll " + daemon.address() +
        " (they do when started with KINETO_USE_DAEMON=1, every 5 s)");
    std::vector<KinetoProcess> selected = awaitProcesses(daemon, o, say, cancel, res);
    if (res.cancelled) return res;
    if (selected.empty()) {
        res.problems.push_back(noProcessPolled(daemon, o, res.seen));
        return res;
    }

    size_t leftOut = 0;
    if (o.processLimit && selected.size() > o.processLimit) {
        leftOut = selected.size() - o.processLimit;
        selected.resize(o.processLimit);
    }
    Requested req = requestTraces(daemon, o, selected, res.problems);
    if (req.watches.empty()) {
        if (res.problems.empty()) res.problems.push_back("no process took a trace request");
        return res;
    }
    const auto requestedAt = Clock::now();
    const auto requestedWall = std::filesystem::file_time_type::clock::now();
    say(requestedLine(req));
    if (leftOut)
        res.problems.push_back(std::to_string(leftOut) +
                               " more processes polled; --process-limit " +
                               std::to_string(o.processLimit) + " left them out");

    const auto traceDeadline =
        requestedAt + o.traceTimeout +
        (req.trace.iterations > 0 ? std::chrono::milliseconds(0) : req.trace.duration);
    awaitTraceFiles(daemon, req.watches, requestedWall, traceDeadline, say, cancel, res);
    if (!res.cancelled) {
        const auto current = daemon.processes();
        for (const Watch& w : req.watches)
            if (!w.done) res.problems.push_back(whyNoTrace(w, current, req.trace, requestedAt));
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

base::Error unwritable(std::string message) {
    return {base::ErrorKind::Unwritable, std::move(message)};
}

/// Copies Kineto's file to `dest` (gzip-compressed when dest ends in .gz), in chunks: read
/// only when it is a regular file owned by the traced process's user (openOwnedTrace).
base::Status copyTrace(const AttachedTrace& t, const std::filesystem::path& dest) {
    const base::Result<OwnedFd> opened = openOwnedTrace(t.path, t.uid);
    if (!opened) return opened.error();
    const int fd = opened.value().get();
    base::AtomicFile f;
    const auto compression = endsWith(dest.string(), ".gz") ? base::AtomicFile::Compression::Gzip
                                                            : base::AtomicFile::Compression::None;
    if (!f.open(dest, compression)) return unwritable(f.error());
    std::string buf(1 << 20, '\0');
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int e = errno;
            return base::Error{base::ErrorKind::Unreadable,
                               "cannot read " + t.path.string() + ": " + std::strerror(e)};
        }
        if (n == 0) break;
        if (!f.write(std::string_view(buf.data(), size_t(n)))) return unwritable(f.error());
    }
    if (!f.commit()) return unwritable(f.error());
    return {};
}

std::string stem(const std::string& output) {
    for (std::string_view ext : {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"})
        if (endsWith(output, ext)) return output.substr(0, output.size() - ext.size());
    return output;
}

} // namespace

base::Result<CollectedTraces> collectTraces(const AttachResult& r,
                                            const std::filesystem::path& output) {
    if (r.traces.empty())
        return base::Error{base::ErrorKind::InvalidArgument, "no trace to collect"};
    CollectedTraces collected;
    collected.open = output;
    if (r.traces.size() > 1) {
        collected.open = stem(output.string());
        std::error_code ec;
        std::filesystem::create_directories(collected.open, ec);
        if (ec) return unwritable("cannot create " + collected.open.string() + ": " + ec.message());
    }
    for (const AttachedTrace& t : r.traces) {
        const std::filesystem::path target =
            r.traces.size() == 1
                ? collected.open
                : collected.open / ("pid" + std::to_string(t.pid) + ".pt.trace.json.gz");
        if (const base::Status copied = copyTrace(t, target); !copied)
            return base::Error{copied.error().kind,
                               "cannot write " + target.string() + ": " + copied.error().message};
        collected.written.push_back(target);
        if (t.path.parent_path().filename().string().rfind("stallscope-attach-", 0) == 0) {
            std::error_code ec;
            std::filesystem::remove(t.path, ec);
            std::filesystem::remove(t.path.parent_path(), ec); // only when empty
        }
    }
    return collected;
}

} // namespace stallscope::capture::kineto
