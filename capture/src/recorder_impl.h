#pragma once
// Recording's state, shared by recorder.cpp (lifecycle), recorder_process.cpp (the target
// process: spawn, wait, signals) and recorder_server.cpp (the socket: accept, one reader
// thread per connection, Control messages).
#include "stallscope/capture/recorder.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <set>
#include <sys/types.h>
#include <thread>

namespace stallscope::capture {

struct Recording::Impl {
    using Clock = std::chrono::steady_clock;

    struct Connection {
        int fd = -1;
        uint32_t source = 0;
        std::thread reader;
        std::mutex writeMutex;
        bool hello = false;       // under Impl::mutex
        bool started = false;     // START sent (under Impl::mutex)
        std::atomic<bool> done{false};
    };

    RecordOptions options;
    std::filesystem::path injection;
    std::filesystem::path tempDir, socketPath;
    std::unique_ptr<CaptureSession> session;

    // Guards everything below that is not atomic.
    mutable std::mutex mutex;
    std::condition_variable cv;
    Clock::time_point startedAt, stopRequestedAt, endedAt;
    bool recording = false, stopRequested = false, stopBroadcast = false, shuttingDown = false, finished = false;
    int signalsSent = 0;                // SIGINT, SIGTERM, SIGKILL
    pid_t child = -1;
    bool childRunning = false;
    int exitCode = -1;
    std::string exitDescription;
    std::set<std::string> helloSources;  // Hello.source of every connection
    std::vector<std::string>
        notCapturing; // why a source said it captures nothing ("not capturing: ...")
    std::list<std::unique_ptr<Connection>> connections;
    bool anyConnection = false;
    std::shared_ptr<const model::Trace> finalTrace;

    int listenFd = -1;
    int wakePipe[2] = {-1, -1};
    std::thread acceptThread, supervisorThread, waiterThread;

    // recorder_process.cpp
    bool spawn(std::string& error);
    void waitForChild();                 // the waiter thread
    void supervise();                    // delay, duration, stop escalation
    void signalChild(int sig);           // caller holds mutex
    // recorder_server.cpp
    bool listen(std::string& error);
    void acceptLoop();
    void readConnection(Connection* c);
    void sendControl(Connection& c, int command);
    void broadcast(int command);         // caller holds mutex
    void drainConnections(std::chrono::milliseconds grace);
    void closeServer();
    // recorder.cpp
    [[nodiscard]] bool runningLocked() const;  // the target (or, without one, the sources)
    std::string gpuNoteLocked(const SessionStats& st) const;
    void shutdownThreads();
};

/// "exited with 3", "killed by SIGSEGV (signal 11)"; `code` gets 128 + signal for signals.
std::string describeWaitStatus(int status, int& code);

} // namespace stallscope::capture
