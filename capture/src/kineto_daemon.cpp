// The daemon side of Kineto's IPC protocol: the wire format, and the server that answers
// Kineto's polls (see kineto_daemon.h; the attach flow is in kineto_attach.cpp).
#include "stallscope/capture/kineto_daemon.h"

#include "socket_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace stallscope::capture::kineto {

namespace {

template <typename T> void put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T)); // x86-64 and aarch64: little-endian, as Kineto's structs
    out.append(b, sizeof(T));
}
template <typename T> T get(std::string_view in, size_t at) {
    T v{};
    std::memcpy(&v, in.data() + at, sizeof(T));
    return v;
}

/// A datagram or payload of the wrong shape.
base::Error malformed(std::string message) {
    return {base::ErrorKind::InvalidStructure, std::move(message)};
}

base::Error startFailed(std::string message) {
    return {base::ErrorKind::StartFailed, std::move(message)};
}

std::string commandOf(int32_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!s.empty() && s.back() == '\0') s.pop_back();
    std::replace(s.begin(), s.end(), '\0', ' ');
    // Another process's words, shown in a terminal and the GUI: no control characters.
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    if (s.size() > 300) s = s.substr(0, 297) + "...";
    return s;
}

/// The parent of `pid` from /proc/<pid>/stat (the field after the command's closing paren);
/// 0 when not told.
int32_t parentOf(int32_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line)) return 0;
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) return 0;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(line.c_str() + paren + 1, " %c %ld", &state, &ppid) != 2) return 0;
    return ppid > 0 && ppid <= INT32_MAX ? static_cast<int32_t>(ppid) : 0;
}

} // namespace

std::vector<uint32_t> servedUids(const std::vector<uint32_t>& allowed) {
    if (!allowed.empty()) return allowed;
    return {static_cast<uint32_t>(::geteuid())};
}

std::vector<int32_t> procAncestry(int32_t pid) {
    std::vector<int32_t> out;
    for (int32_t p = pid; p > 1 && out.size() < 11; p = parentOf(p)) {
        if (std::find(out.begin(), out.end(), p) != out.end()) break; // never, but no loop
        out.push_back(p);
    }
    if (out.empty()) out.push_back(pid);
    return out;
}

int32_t innermostPid(int32_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(f, line);) {
        if (line.rfind("NSpid:", 0) != 0) continue;
        long last = 0;
        std::istringstream in(line.substr(6));
        for (long v; in >> v;) last = v;
        return last > 0 && last <= INT32_MAX ? static_cast<int32_t>(last) : pid;
    }
    return pid;
}

std::filesystem::path kinetoDefaultTracePath(int32_t pid) {
    return "/tmp/libkineto_activities_" + std::to_string(pid) + ".json";
}

std::string encodeMessage(std::string_view type, std::string_view payload) {
    std::string out;
    out.reserve(kHeaderBytes + payload.size());
    put<uint64_t>(out, payload.size());
    char t[kTypeBytes] = {};
    std::memcpy(t, type.data(), std::min(type.size(), kTypeBytes - 1));
    out.append(t, kTypeBytes);
    out.append(payload);
    return out;
}

base::Result<Message> decodeMessage(std::string_view d) {
    if (d.size() < kHeaderBytes)
        return base::Error{base::ErrorKind::Truncated,
                           "a datagram of " + std::to_string(d.size()) +
                               " bytes, shorter than the 40-byte header"};
    const uint64_t size = get<uint64_t>(d, 0);
    if (size != d.size() - kHeaderBytes)
        return malformed("the header announces " + std::to_string(size) +
                         " payload bytes, the datagram has " +
                         std::to_string(d.size() - kHeaderBytes));
    const std::string_view type = d.substr(8, kTypeBytes);
    const size_t nul = type.find('\0');
    if (nul == std::string_view::npos)
        return malformed("a message type without its terminating NUL");
    Message out;
    out.type.assign(type.substr(0, nul));
    out.payload.assign(d.substr(kHeaderBytes));
    return out;
}

std::string encodePollRequest(const PollRequest& r) {
    std::string out;
    put<int32_t>(out, r.configType);
    put<int32_t>(out, static_cast<int32_t>(r.pids.size()));
    put<int64_t>(out, r.jobId);
    for (int32_t p : r.pids) put<int32_t>(out, p);
    return out;
}

base::Result<PollRequest> decodePollRequest(std::string_view p) {
    if (p.size() < 16)
        return base::Error{base::ErrorKind::Truncated, "a \"req\" payload of " +
                                                           std::to_string(p.size()) +
                                                           " bytes (at least 16)"};
    PollRequest out;
    out.configType = get<int32_t>(p, 0);
    const int32_t n = get<int32_t>(p, 4);
    out.jobId = get<int64_t>(p, 8);
    if (n < 0 || n > 1024 || p.size() != 16 + 4 * size_t(n))
        return malformed("a \"req\" with " + std::to_string(n) + " pids in " +
                         std::to_string(p.size()) + " bytes");
    out.pids.resize(size_t(n));
    for (int32_t i = 0; i < n; ++i) out.pids[size_t(i)] = get<int32_t>(p, 16 + 4 * size_t(i));
    return out;
}

std::string encodeContext(const ContextRegistration& c) {
    std::string out;
    put<int32_t>(out, c.gpu);
    put<int32_t>(out, c.pid);
    put<int64_t>(out, c.jobId);
    return out;
}

base::Result<ContextRegistration> decodeContext(std::string_view p) {
    if (p.size() != 16)
        return malformed("a \"ctxt\" payload of " + std::to_string(p.size()) +
                         " bytes (16 expected)");
    ContextRegistration out;
    out.gpu = get<int32_t>(p, 0);
    out.pid = get<int32_t>(p, 4);
    out.jobId = get<int64_t>(p, 8);
    return out;
}

size_t socketAddress(const std::string& name, const std::string& socketDir, void* addr) {
    auto* a = static_cast<sockaddr_un*>(addr);
    std::memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    if (!socketDir.empty()) {
        const std::string path = socketDir + "/" + name;
        if (path.size() + 1 > sizeof a->sun_path) return 0;
        std::memcpy(a->sun_path, path.data(), path.size());
        return offsetof(sockaddr_un, sun_path) + path.size() + 1;
    }
    // Abstract: '\0' + name + '\0', and the trailing NUL is part of the name (Kineto's
    // Endpoint::setAddress_).
    if (name.empty() || name.size() + 2 > sizeof a->sun_path) return 0;
    std::memcpy(a->sun_path + 1, name.data(), name.size());
    return offsetof(sockaddr_un, sun_path) + name.size() + 2;
}

std::string onDemandConfig(const TraceRequest& r) {
    std::string c = "ACTIVITIES_LOG_FILE=" + r.logFile.string() + "\n";
    if (r.iterations > 0) {
        // From the next optimizer step on (dynolog's iteration-based request).
        c +=
            "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\nACTIVITIES_ITERATIONS=" +
            std::to_string(r.iterations) + "\n";
    } else {
        // 0: "now" plus Kineto's warm-up.
        c += "PROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=" +
             std::to_string(r.duration.count()) + "\n";
        if (r.warmupSeconds >= 0)
            c += "ACTIVITIES_WARMUP_PERIOD_SECS=" + std::to_string(r.warmupSeconds) + "\n";
    }
    c += std::string("PROFILE_REPORT_INPUT_SHAPES=") + (r.recordShapes ? "true" : "false") + "\n";
    c += "PROFILE_PROFILE_MEMORY=false\n";
    c += std::string("PROFILE_WITH_STACK=") + (r.withStack ? "true" : "false") + "\n";
    c += "PROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false\n";
    return c;
}

std::filesystem::path kinetoTracePath(const std::filesystem::path& logFile, int32_t pid) {
    std::string s = logFile.string();
    const std::string suffix = "_" + std::to_string(pid);
    if (size_t at = s.find(".pt.trace.json"); at != std::string::npos) return s.insert(at, suffix);
    if (size_t at = s.find(".json"); at != std::string::npos) return s.insert(at, suffix);
    return s; // Kineto adds nothing: every process writes the same file
}

// ---- the daemon

struct KinetoDaemon::Impl {
    DaemonOptions options;
    std::string socketDir;
    std::string boundPath; // the socket file to remove, filesystem mode only
    int fd = -1;
    int wakeFd = -1;
    std::thread thread;

    mutable std::mutex mutex;
    struct Entry {
        KinetoProcess p;
        std::string config; // pending
    };
    std::map<int32_t, Entry> processes; // by the sender's pid (its credentials)
    struct Context {
        int64_t jobId = 0;
        int32_t gpu = 0;
        std::chrono::steady_clock::time_point lastSeen;
    };
    std::map<int32_t, Context> contexts; // by the sender's pid
    std::vector<uint32_t> served;        // the uids served
    size_t bad = 0, refused = 0;
    // What is told in problems(): each refused user and each lying sender once (a few of
    // each), the cap once, and at most 8 messages not understood.
    std::set<uint32_t> refusedUsersTold;
    std::set<int32_t> liarsTold;
    bool capTold = false, contextCapTold = false;
    std::vector<std::string> problemText;
    size_t badTold = 0;

    void note(std::string s) {
        if (problemText.size() < 24) problemText.push_back(std::move(s));
    }
    void problem(std::string s) {
        ++bad;
        if (badTold < 8) ++badTold, note(std::move(s));
    }
    /// Whose datagram this is, and whether it is served; false (counted) when not.
    bool accept(const ucred* cred, std::string_view what);

    void serve();
    void handle(std::string_view datagram, const sockaddr_un& from, socklen_t fromLen,
                const ucred* cred);
    void reply(std::string_view type, std::string_view payload, const sockaddr_un& to,
               socklen_t toLen);
    void forgetSilent();
};

void KinetoDaemon::Impl::reply(std::string_view type, std::string_view payload,
                               const sockaddr_un& to, socklen_t toLen) {
    if (toLen <= sizeof(sa_family_t)) {
        std::lock_guard lock(mutex);
        problem("a poll from an unnamed socket (no address to answer)");
        return;
    }
    const std::string m = encodeMessage(type, payload);
    // One non-blocking try: Kineto waits only ~50-90 ms for the answer, and a client that
    // has gone must not hold this thread.
    if (::sendto(fd, m.data(), m.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&to), toLen) < 0) {
        const int e = errno;
        std::lock_guard lock(mutex);
        problem("cannot answer a poll: " + detail::errnoText(e));
    }
}

bool KinetoDaemon::Impl::accept(const ucred* cred, std::string_view what) {
    if (!cred) {
        ++refused;
        if (refusedUsersTold.size() < 4 && refusedUsersTold.insert(UINT32_MAX).second)
            note(std::string(what) + " without the sender's credentials: not served");
        return false;
    }
    if (std::find(served.begin(), served.end(), cred->uid) == served.end()) {
        ++refused;
        if (refusedUsersTold.size() < 4 && refusedUsersTold.insert(cred->uid).second)
            note(std::string(what) + " from pid " + std::to_string(cred->pid) + " of uid " +
                 std::to_string(cred->uid) + ", another user: not served (--allow-user " +
                 std::to_string(cred->uid) + " serves that user's processes)");
        return false;
    }
    return true;
}

void KinetoDaemon::Impl::handle(std::string_view datagram, const sockaddr_un& from,
                                socklen_t fromLen, const ucred* cred) {
    const base::Result<Message> decoded = decodeMessage(datagram);
    if (!decoded) {
        std::lock_guard lock(mutex);
        problem("not a Kineto message: " + decoded.error().message);
        return;
    }
    const Message& m = decoded.value();
    if (m.type == "req") {
        PollRequest r;
        std::string config;
        bool serve = false;
        {
            std::lock_guard lock(mutex);
            base::Result<PollRequest> polled = decodePollRequest(m.payload);
            if (!polled) {
                problem(polled.error().message);
                return;
            }
            r = std::move(polled.value());
            serve = !r.pids.empty() && accept(cred, "a poll");
        }
        // The sender's pid in its own namespace: what a true Kineto puts first (the kernel's
        // view is checked, not believed; /proc is read outside the lock).
        int32_t filePid = 0;
        std::vector<int32_t> ancestry;
        std::string command;
        if (serve) {
            filePid = r.pids[0] == cred->pid ? cred->pid : innermostPid(cred->pid);
            if (filePid != r.pids[0]) {
                std::lock_guard lock(mutex);
                ++refused;
                if (liarsTold.size() < 4 && liarsTold.insert(cred->pid).second)
                    note("a poll from pid " + std::to_string(cred->pid) + " claiming to be pid " +
                         std::to_string(r.pids[0]) + ": not served");
                serve = false;
            } else {
                ancestry = procAncestry(cred->pid);
            }
        }
        if (serve) {
            std::lock_guard lock(mutex);
            const auto now = std::chrono::steady_clock::now();
            auto it = processes.find(cred->pid);
            if (it == processes.end() && processes.size() >= options.maxProcesses) {
                ++refused;
                if (!std::exchange(capTold, true))
                    note("more than " + std::to_string(options.maxProcesses) +
                         " polling processes: pid " + std::to_string(cred->pid) +
                         " not served (and any more after it)");
            } else {
                const bool fresh = it == processes.end();
                if (fresh) it = processes.try_emplace(cred->pid).first;
                KinetoProcess& p = it->second.p;
                if (fresh || p.jobId != r.jobId) {
                    p.pid = cred->pid;
                    p.firstSeen = now;
                }
                if (fresh) command = commandOf(cred->pid), p.command = command;
                p.filePid = filePid;
                p.uid = cred->uid;
                p.gid = cred->gid;
                p.jobId = r.jobId;
                p.ancestry = std::move(ancestry);
                p.lastSeen = now;
                ++p.polls;
                p.busy = (r.configType & kConfigActivities) == 0;
                if (!p.busy && !it->second.config.empty()) {
                    config = std::move(it->second.config);
                    it->second.config.clear();
                    p.pending = false;
                    ++p.delivered;
                }
            }
        }
        // Kineto in a container's pid 1 sends no pids: it cannot be told apart, and gets
        // nothing; neither does a process not served (an empty answer, as to a process with
        // no trace to take, so that its Kineto does not wait).
        reply("req", config, from, fromLen);
    } else if (m.type == "ctxt") {
        ContextRegistration c;
        int32_t count = 0;
        {
            std::lock_guard lock(mutex);
            const base::Result<ContextRegistration> registered = decodeContext(m.payload);
            if (!registered) {
                problem(registered.error().message);
                return;
            }
            c = registered.value();
            if (accept(cred, "a context registration")) {
                const auto now = std::chrono::steady_clock::now();
                auto it = contexts.find(cred->pid);
                if (it == contexts.end() && contexts.size() >= options.maxProcesses) {
                    ++refused;
                    if (!std::exchange(contextCapTold, true))
                        note("more than " + std::to_string(options.maxProcesses) +
                             " context registrations: pid " + std::to_string(cred->pid) +
                             " not kept (and any more after it)");
                } else {
                    contexts[cred->pid] = {c.jobId, c.gpu, now};
                }
                // The processes of this job on this GPU (the sender's own pid counts, whatever
                // pid the message names).
                for (const auto& [pid, ctx] : contexts)
                    count += ctx.jobId == c.jobId && ctx.gpu == c.gpu;
            }
        }
        std::string payload;
        put<int32_t>(payload, count);
        reply("ctxt", payload, from, fromLen);
    } else {
        std::lock_guard lock(mutex);
        problem("a message of unknown type \"" + m.type + "\"");
    }
}

void KinetoDaemon::Impl::forgetSilent() {
    std::lock_guard lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = processes.begin(); it != processes.end();)
        it = now - it->second.p.lastSeen > options.keepAlive ? processes.erase(it) : std::next(it);
    for (auto it = contexts.begin(); it != contexts.end();)
        it = now - it->second.lastSeen > options.keepAlive ? contexts.erase(it) : std::next(it);
}

void KinetoDaemon::Impl::serve() {
    std::string buf(1 << 16, '\0');
    auto lastSweep = std::chrono::steady_clock::now();
    for (;;) {
        pollfd fds[2] = {{fd, POLLIN, 0}, {wakeFd, POLLIN, 0}};
        const int n = ::poll(fds, 2, 500);
        if (n < 0 && errno != EINTR) return;
        if (fds[1].revents) return;
        if (n > 0 && (fds[0].revents & POLLIN)) {
            // At most a batch per wake-up, so that a flood does not starve the sweep below.
            for (int batch = 0; batch < 4096; ++batch) {
                sockaddr_un from{};
                alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
                iovec io{buf.data(), buf.size()};
                msghdr msg{};
                msg.msg_name = &from;
                msg.msg_namelen = sizeof from;
                msg.msg_iov = &io;
                msg.msg_iovlen = 1;
                msg.msg_control = control;
                msg.msg_controllen = sizeof control;
                const ssize_t got =
                    ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
                if (got < 0) break;
                const ucred* cred = nullptr;
                ucred credCopy{};
                for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
                    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                        c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
                        std::memcpy(&credCopy, CMSG_DATA(c), sizeof credCopy);
                        cred = &credCopy;
                    }
                if (size_t(got) > buf.size()) {
                    std::lock_guard lock(mutex);
                    problem("a datagram of " + std::to_string(got) +
                            " bytes (larger than any Kineto message)");
                    continue;
                }
                handle(std::string_view(buf.data(), size_t(got)), from, msg.msg_namelen, cred);
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (now - lastSweep >= std::chrono::milliseconds(250)) {
            forgetSilent();
            lastSweep = now;
        }
    }
}

KinetoDaemon::KinetoDaemon() : m_impl(std::make_unique<Impl>()) {}
KinetoDaemon::~KinetoDaemon() {
    stop();
}

base::Status KinetoDaemon::start(const DaemonOptions& options) {
    Impl& d = *m_impl;
    if (d.fd >= 0) return startFailed("already serving");
    d.options = options;
    d.socketDir = options.socketDir;
    if (d.socketDir.empty() && options.socketDirFromEnvironment)
        if (const char* e = std::getenv("KINETO_IPC_SOCKET_DIR"); e && *e) d.socketDir = e;
    sockaddr_un a{};
    const size_t len = socketAddress(options.name, d.socketDir, &a);
    if (len == 0)
        return startFailed("the socket name " + options.name +
                           " does not fit a Unix socket address");
    d.fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (d.fd < 0) return startFailed("socket: " + detail::errnoText(errno));
    // Every datagram comes with its sender's pid, uid and gid, as the kernel knows them.
    const int on = 1;
    if (::setsockopt(d.fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
        const int e = errno;
        ::close(d.fd);
        d.fd = -1;
        return startFailed("SO_PASSCRED: " + detail::errnoText(e));
    }
    d.served = servedUids(options.allowedUids);
    if (!d.socketDir.empty()) {
        // A socket file left by a daemon that died is removed; one that answers is not.
        const int probe = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        const bool live =
            probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&a), socklen_t(len)) == 0;
        if (probe >= 0) ::close(probe);
        struct stat st {};
        if (!live && ::lstat(a.sun_path, &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) {
                ::close(d.fd);
                d.fd = -1;
                return startFailed(std::string(a.sun_path) +
                                   " exists and is not a socket: it was left as it is (remove it, "
                                   "or choose another KINETO_IPC_SOCKET_DIR)");
            }
            ::unlink(a.sun_path);
        }
    }
    if (::bind(d.fd, reinterpret_cast<sockaddr*>(&a), socklen_t(len)) != 0) {
        const int e = errno;
        ::close(d.fd);
        d.fd = -1;
        if (e == EADDRINUSE)
            return startFailed("another Kineto daemon already serves " + address() +
                               " (dynolog, or another Stallscope attach): stop it, or ask it for "
                               "the trace (dyno gputrace)");
        return startFailed("cannot bind " + address() + ": " + detail::errnoText(e));
    }
    if (!d.socketDir.empty()) {
        d.boundPath = a.sun_path;
        // Kineto's clients of another user reach the socket file only when that user is served.
        const bool othersServed = std::any_of(d.served.begin(), d.served.end(),
                                              [](uint32_t u) { return u != ::geteuid(); });
        ::chmod(a.sun_path, othersServed ? 0666 : 0600);
    }
    d.wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (d.wakeFd < 0) {
        const int e = errno;
        ::close(d.fd);
        d.fd = -1;
        if (!d.boundPath.empty()) ::unlink(d.boundPath.c_str());
        d.boundPath.clear();
        return startFailed("eventfd: " + detail::errnoText(e));
    }
    d.thread = std::thread([&d] { d.serve(); });
    return {};
}

void KinetoDaemon::stop() {
    Impl& d = *m_impl;
    if (d.fd < 0) return;
    const uint64_t one = 1;
    while (::write(d.wakeFd, &one, sizeof one) < 0 && errno == EINTR) {
    }
    if (d.thread.joinable()) d.thread.join();
    ::close(d.fd);
    ::close(d.wakeFd);
    d.fd = d.wakeFd = -1;
    if (!d.boundPath.empty()) ::unlink(d.boundPath.c_str());
    d.boundPath.clear();
}

std::string KinetoDaemon::address() const {
    const Impl& d = *m_impl;
    if (!d.socketDir.empty()) return "socket " + d.socketDir + "/" + d.options.name;
    return "abstract socket @" + d.options.name;
}

std::vector<KinetoProcess> KinetoDaemon::processes() const {
    const Impl& d = *m_impl;
    std::lock_guard lock(d.mutex);
    std::vector<KinetoProcess> out;
    for (const auto& [key, e] : d.processes) out.push_back(e.p);
    std::sort(out.begin(), out.end(), [](const KinetoProcess& a, const KinetoProcess& b) {
        return a.firstSeen != b.firstSeen ? a.firstSeen < b.firstSeen : a.pid < b.pid;
    });
    return out;
}

std::vector<int32_t> KinetoDaemon::request(const std::vector<int32_t>& pids,
                                           const std::string& config, size_t limit, bool exact) {
    Impl& d = *m_impl;
    std::lock_guard lock(d.mutex);
    std::vector<Impl::Entry*> matched;
    for (auto& [key, e] : d.processes) {
        auto named = [&](int32_t a) {
            return std::find(pids.begin(), pids.end(), a) != pids.end();
        };
        const bool match =
            pids.empty() ||
            (exact ? named(e.p.pid) : std::any_of(e.p.ancestry.begin(), e.p.ancestry.end(), named));
        if (match) matched.push_back(&e);
    }
    std::sort(matched.begin(), matched.end(), [](const Impl::Entry* a, const Impl::Entry* b) {
        return a->p.firstSeen < b->p.firstSeen;
    });
    std::vector<int32_t> out;
    for (Impl::Entry* e : matched) {
        if (limit && out.size() >= limit) break;
        e->config = config;
        e->p.pending = true;
        out.push_back(e->p.pid);
    }
    return out;
}

void KinetoDaemon::cancelPending() {
    Impl& d = *m_impl;
    std::lock_guard lock(d.mutex);
    for (auto& [key, e] : d.processes) e.config.clear(), e.p.pending = false;
}

size_t KinetoDaemon::badMessages() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->bad;
}

size_t KinetoDaemon::refusedPolls() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->refused;
}

size_t KinetoDaemon::tableSize() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->processes.size() + m_impl->contexts.size();
}

std::vector<std::string> KinetoDaemon::problems() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->problemText;
}

} // namespace stallscope::capture::kineto
