#pragma once
// Attaching to a running PyTorch job: the daemon side of the IPC protocol that PyTorch's
// profiler library (libkineto) speaks when the job runs with KINETO_USE_DAEMON=1 (what Meta's
// dynolog daemon serves; docs/decisions.md "Attach through Kineto's daemon protocol" has the
// protocol and its sources). Kineto polls the daemon every few seconds ("req"); the answer is
// an on-demand trace config (or nothing), and Kineto writes the trace itself, operators and
// kernels, with no change to the training script.
//
// Wire format (libkineto ipcfabric, x86-64, little-endian):
//  * Unix SOCK_DGRAM sockets, one datagram per message; the daemon is bound to the abstract
//    name "\0dynolog\0" (the trailing NUL is part of the name), each client to
//    "\0dynoconfigclient<uuid>\0"; with KINETO_IPC_SOCKET_DIR set, both are files in that folder;
//  * a message is {uint64 size; char type[32]} then `size` payload bytes;
//  * "req": {int32 configType; int32 n; int64 jobId; int32 pids[n]} (the process and its
//    ancestors, leaf first), answered with type "req" and the config text (possibly empty);
//  * "ctxt": {int32 gpu; int32 pid; int64 jobId}, answered with an int32 count.
//
// Trust (docs/security.md): nothing a datagram claims about its sender is believed. The
// kernel's credentials of each datagram (SO_PASSCRED: pid, uid, gid) say who sent it; only
// processes of the users in DaemonOptions::allowedUids (the invoking user by default, root
// included) are served; a process's ancestry is read from /proc, not from its poll; the
// tables are capped and their entries expire.
#include "stallscope/base/result.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::capture::kineto {

inline constexpr const char* kDaemonName = "dynolog";
inline constexpr size_t kTypeBytes = 32;
inline constexpr size_t kHeaderBytes = 8 + kTypeBytes;
inline constexpr int32_t kConfigEvents = 1;     // LibkinetoConfigType::EVENTS
inline constexpr int32_t kConfigActivities = 2; // LibkinetoConfigType::ACTIVITIES
/// Kineto's default poll interval (ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS).
inline constexpr std::chrono::seconds kDefaultPollInterval{5};
/// Kineto's on-demand trace without ACTIVITIES_LOG_FILE, or with a path it refuses.
std::filesystem::path kinetoDefaultTracePath(int32_t pid);

// ---- the wire format (pure; the test client uses the same functions)

struct Message {
    std::string type;    // "req", "ctxt"
    std::string payload; // raw bytes
};
/// One datagram: the 40-byte header then the payload.
std::string encodeMessage(std::string_view type, std::string_view payload);
/// The message, or an error (Truncated, InvalidStructure) when the datagram is shorter than its
/// header, its size field disagrees with its length, or its type is not NUL-terminated text.
base::Result<Message> decodeMessage(std::string_view datagram);

struct PollRequest {
    int32_t configType = kConfigActivities;
    int64_t jobId = 0;
    std::vector<int32_t> pids; // the process first, then its ancestors
};
std::string encodePollRequest(const PollRequest& r);
/// An error (Truncated, InvalidStructure) when the payload is shorter than 16 bytes or its pid
/// count is negative, above 1024 or disagrees with its length.
base::Result<PollRequest> decodePollRequest(std::string_view payload);

struct ContextRegistration {
    int32_t gpu = 0;
    int32_t pid = 0;
    int64_t jobId = 0;
};
std::string encodeContext(const ContextRegistration& c);
/// An error (InvalidStructure) when the payload is not 16 bytes.
base::Result<ContextRegistration> decodeContext(std::string_view payload);

/// The socket address Kineto uses for `name`: abstract "\0name\0", or `dir`/name when
/// `socketDir` is not empty (KINETO_IPC_SOCKET_DIR). Returns the address length, 0 when the
/// name does not fit.
size_t socketAddress(const std::string& name, const std::string& socketDir, void* sockaddrUn);

// ---- the trace request

struct TraceRequest {
    /// Duration mode: the trace starts ~7 s after Kineto receives the request (its warm-up)
    /// and lasts this long. Ignored when iterations > 0.
    std::chrono::milliseconds duration{2000};
    /// Iteration mode: the next `iterations` optimizer steps (Kineto counts optimizer.step()
    /// when KINETO_USE_DAEMON was set before `import torch`).
    int iterations = 0;
    std::filesystem::path logFile; // ACTIVITIES_LOG_FILE; Kineto inserts _<pid>
    /// ACTIVITIES_WARMUP_PERIOD_SECS: Kineto's warm-up before a duration-based trace (its
    /// default, 5 s, when negative).
    int warmupSeconds = -1;
    bool recordShapes = false;
    bool withStack = false;
};
/// The on-demand config text Kineto parses (KEY=VALUE lines).
std::string onDemandConfig(const TraceRequest& request);
/// Where Kineto writes the trace of process `pid` for ACTIVITIES_LOG_FILE `logFile`: "_<pid>"
/// inserted before the first ".pt.trace.json", else before the first ".json".
std::filesystem::path kinetoTracePath(const std::filesystem::path& logFile, int32_t pid);

// ---- the daemon

struct KinetoProcess {
    int32_t pid = 0; // the polling process, as the kernel says (its credentials)
    /// The pid Kineto names its files with: its own view, which differs from `pid` in another
    /// pid namespace (checked against /proc/<pid>/status NSpid, never just believed).
    int32_t filePid = 0;
    uint32_t uid = 0, gid = 0;     // the sender's, from its credentials
    std::vector<int32_t> ancestry; // from /proc: the process, then its ancestors (as Kineto's)
    int64_t jobId = 0;
    std::string command; // /proc/<pid>/cmdline, "" when not readable
    std::chrono::steady_clock::time_point firstSeen, lastSeen;
    int polls = 0;
    bool busy = false;    // its last poll did not ask for activities (already tracing)
    bool pending = false; // a config waits for its next poll
    int delivered = 0;    // configs handed to it
};

struct DaemonOptions {
    std::string name = kDaemonName;
    /// Filesystem sockets in this folder instead of abstract ones; empty: the environment's
    /// KINETO_IPC_SOCKET_DIR (as Kineto reads it), else abstract.
    std::string socketDir;
    bool socketDirFromEnvironment = true;
    /// Processes silent for longer are forgotten (dynolog: 60 s).
    std::chrono::seconds keepAlive{60};
    /// The users whose processes are served; empty: the invoking user (geteuid) only. Another
    /// user's process is answered with no config and counted (refusedPolls()).
    std::vector<uint32_t> allowedUids;
    /// At most this many processes and "ctxt" registrations are kept (the oldest silent
    /// entries expire first; beyond the cap a new one is refused and counted).
    size_t maxProcesses = 4096;
};

/// The users a daemon serves: `allowed`, or the invoking user when empty.
std::vector<uint32_t> servedUids(const std::vector<uint32_t>& allowed);
/// The process and its ancestors from /proc (leaf first, at most 11, down to pid 2, as
/// Kineto's getPids); just {pid} when /proc does not tell.
std::vector<int32_t> procAncestry(int32_t pid);
/// The pid `pid` has in its own (innermost) pid namespace (/proc/<pid>/status NSpid), or
/// `pid` when not told.
int32_t innermostPid(int32_t pid);

/// Serves Kineto's pollers on a thread of its own. processes(), request(), cancelPending() and
/// the counters may be called from any thread; start() and stop() from one owner.
class KinetoDaemon {
public:
    KinetoDaemon();
    ~KinetoDaemon();
    KinetoDaemon(const KinetoDaemon&) = delete;
    KinetoDaemon& operator=(const KinetoDaemon&) = delete;

    /// Binds and starts serving. An error (StartFailed) when the name is taken (a dynolog
    /// daemon, or another attach, already serves this machine), the socket fails, or it is
    /// already serving.
    base::Status start(const DaemonOptions& options);
    void stop();
    /// "abstract socket @dynolog" or the socket file.
    [[nodiscard]] std::string address() const;

    /// The processes that polled within keepAlive, in order of first poll.
    [[nodiscard]] std::vector<KinetoProcess> processes() const;
    /// Queues `config` for the processes whose pid or an ancestor's is in `pids` (all when
    /// empty; with `exact`, only the processes whose own pid is in `pids`), at most `limit` of
    /// them (0: no limit); handed out once, on each one's next poll that asks for activities.
    /// Returns the pids it was queued for.
    std::vector<int32_t> request(const std::vector<int32_t>& pids, const std::string& config,
                                 size_t limit = 0, bool exact = false);
    /// Withdraws configs not handed out yet.
    void cancelPending();
    /// Messages that were not understood (counted; the first few kept as text).
    [[nodiscard]] size_t badMessages() const;
    /// Datagrams from processes not served: another user's, a poll whose pids are not its
    /// sender's, no credentials, or beyond the table's cap (counted; the first few in problems()).
    [[nodiscard]] size_t refusedPolls() const;
    /// Entries in the process and context tables (bounded by maxProcesses each).
    [[nodiscard]] size_t tableSize() const;
    [[nodiscard]] std::vector<std::string> problems() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// ---- attach: request traces and collect the files Kineto writes

struct AttachOptions {
    std::vector<int32_t> pids; // empty: every PyTorch process that polls
    size_t processLimit = 0;   // 0: no limit
    TraceRequest trace;        // trace.logFile empty: a fresh folder under /tmp
    /// How long to wait for the first process to poll, and then for the others (a poll
    /// interval, so that every rank of a job is seen before the request goes out).
    std::chrono::milliseconds waitForProcesses{15000};
    std::chrono::milliseconds settle{kDefaultPollInterval + std::chrono::milliseconds(500)};
    /// After the request: Kineto's warm-up, the trace and its writing.
    std::chrono::milliseconds traceTimeout{120000};
};

struct AttachedTrace {
    int32_t pid = 0;
    uint32_t uid = 0; // the traced process's: the file must be owned by it
    std::string command;
    std::filesystem::path path; // the file Kineto wrote
};

struct AttachResult {
    std::vector<KinetoProcess> seen;   // every process that polled
    std::vector<AttachedTrace> traces; // one per traced process that wrote its file
    std::vector<std::string> problems; // processes that did not, and why
    bool cancelled = false;
};

/// Asks the processes polling `daemon` for a trace and waits for their files. `say` gets
/// one line per step ("waiting for PyTorch processes...", "trace requested from ..."); `cancel`
/// ends the wait. An empty result with a problem when no process polled.
AttachResult attachAndTrace(KinetoDaemon& daemon, const AttachOptions& options,
                            const std::function<void(const std::string&)>& say,
                            const std::atomic<bool>* cancel = nullptr);

struct CollectedTraces {
    std::filesystem::path open;                 // what to open: the file or the folder
    std::vector<std::filesystem::path> written; // the files written, in the order of the traces
};

/// Copies the traces Kineto wrote to `output`: the file itself for one trace (gzip-compressed
/// when it ends in .gz), else a folder named after it (".pt.trace.json.gz" and the like taken
/// off) holding pid<PID>.pt.trace.json.gz per process, which Stallscope opens as one session of
/// ranks. Each file is read only when owned by its traced process's uid and not a link
/// (openOwnedTrace). Kineto's files in attachAndTrace's own /tmp folder are removed. Returns what
/// to open and the files written, or an error: InvalidArgument when there is no trace, else
/// that of the file that could not be read (NotFound, Unreadable) or written (Unwritable).
base::Result<CollectedTraces> collectTraces(const AttachResult& result,
                                            const std::filesystem::path& output);

/// True when `path` holds a complete JSON trace (ends with '}' after whitespace, does not
/// grow); Kineto before 2.0 wrote the final name directly.
bool traceFileComplete(const std::filesystem::path& path);

/// An open file descriptor, closed when its owner goes (move-only).
class OwnedFd {
public:
    OwnedFd() = default;
    explicit OwnedFd(int fd) : m_fd(fd) {}
    OwnedFd(OwnedFd&& other) noexcept : m_fd(other.release()) {}
    OwnedFd& operator=(OwnedFd&& other) noexcept;
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;
    ~OwnedFd();

    [[nodiscard]] int get() const { return m_fd; }
    /// Gives the descriptor up (the caller closes it); -1 after.
    int release() {
        const int fd = m_fd;
        m_fd = -1;
        return fd;
    }

private:
    int m_fd = -1;
};

/// Opens a trace file Kineto wrote for reading, only when it is a regular file (not a link:
/// O_NOFOLLOW) owned by `uid`; an error otherwise: NotFound when there is no such file,
/// Unreadable for a link, not a regular file, another owner or any other failure.
base::Result<OwnedFd> openOwnedTrace(const std::filesystem::path& path, uint32_t uid);

} // namespace stallscope::capture::kineto
