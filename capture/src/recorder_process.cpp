// Recording's target process: started with the injection set up, reaped by a waiter
// thread; a supervisor thread turns --delay/--duration into START/STOP and escalates a
// stop (STOP to the sources, then SIGINT, SIGTERM after 3 s, SIGKILL after 10 s).
#include "recorder_impl.h"

#include "socket_io.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;

namespace stallscope::capture {

namespace {

constexpr auto kStopToInterrupt = std::chrono::milliseconds(200);
constexpr auto kInterruptToTerm = std::chrono::seconds(3);
constexpr auto kInterruptToKill = std::chrono::seconds(10);

std::vector<std::string> childEnvironment(const std::filesystem::path& injection, const std::filesystem::path& socket,
                                          const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::pair<std::string, std::string>> ours;
    if (!injection.empty() && std::filesystem::exists(injection))
        ours.emplace_back("CUDA_INJECTION64_PATH", injection.string());
    ours.emplace_back(kSocketEnv, socket.string());
    for (const auto& kv : extra) ours.push_back(kv);
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view kv(*e);
        const std::string_view key = kv.substr(0, kv.find('='));
        bool replaced = false;
        for (const auto& [k, v] : ours) replaced = replaced || k == key;
        if (!replaced) env.emplace_back(kv);
    }
    for (const auto& kv : ours) {
        // A later entry for the same key wins (options.environment over ours). (Not a
        // structured binding: clang 14 cannot capture one in the lambda.)
        const std::string prefix = kv.first + "=";
        std::erase_if(env, [&](const std::string& s) { return s.compare(0, prefix.size(), prefix) == 0; });
        env.push_back(prefix + kv.second);
    }
    return env;
}

} // namespace

std::string describeWaitStatus(int status, int& code) {
    if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
        return "exited with " + std::to_string(code);
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        code = 128 + sig;
        const char* abbrev = ::sigabbrev_np(sig);
        std::string d = "killed by " + (abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig));
        if (WCOREDUMP(status)) d += " (core dumped)";
        return d;
    }
    code = -1;
    return "ended (status " + std::to_string(status) + ")";
}

bool Recording::Impl::spawn(std::string& error) {
    std::vector<std::string> env = childEnvironment(injection, socketPath, options.environment);
    std::vector<char*> argv, envp;
    for (auto& a : options.command) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    if (!options.workingDirectory.empty())
        posix_spawn_file_actions_addchdir_np(&actions, options.workingDirectory.c_str());
    // The child starts with default signal handling and nothing blocked, whatever the
    // recorder (a CLI catching Ctrl-C, a GUI) set up for itself.
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        error = "cannot start '" + options.command.front() + "': " + detail::errnoText(rc);
        return false;
    }
    std::lock_guard lock(mutex);
    child = pid;
    childRunning = true;
    return true;
}

void Recording::Impl::waitForChild() {
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(child, &status, 0);
    } while (r < 0 && errno == EINTR);
    std::lock_guard lock(mutex);
    if (r == child) {
        exitDescription = describeWaitStatus(status, exitCode);
    } else {
        exitCode = -1;
        exitDescription = "ended (its exit status was collected elsewhere: " + detail::errnoText(errno) + ")";
    }
    childRunning = false;
    cv.notify_all();
}

void Recording::Impl::signalChild(int sig) {
    if (child > 0 && childRunning) ::kill(child, sig);
}

void Recording::Impl::supervise() {
    using namespace std::chrono;
    std::unique_lock lock(mutex);
    const auto startAt = startedAt + duration_cast<Clock::duration>(duration<double>(options.delaySeconds));
    const auto endAt = startAt + duration_cast<Clock::duration>(duration<double>(options.durationSeconds));
    while (!finished) {
        const auto now = Clock::now();
        auto wake = now + seconds(1);
        if (!recording && !stopRequested) {
            if (now >= startAt) {
                recording = true;
                broadcast(pb::Control::START);
            } else {
                wake = std::min(wake, startAt);
            }
        }
        if (recording && options.durationSeconds > 0) {
            if (now >= endAt) {
                stopRequested = true;
                stopRequestedAt = now;
            } else {
                wake = std::min(wake, endAt);
            }
        }
        if (stopRequested) {
            if (!stopBroadcast) {
                recording = false;
                stopBroadcast = true;
                broadcast(pb::Control::STOP);
            }
            const auto since = now - stopRequestedAt;
            if (signalsSent == 0 && since >= kStopToInterrupt) signalChild(SIGINT), signalsSent = 1;
            else if (signalsSent == 1 && since >= kInterruptToTerm) signalChild(SIGTERM), signalsSent = 2;
            else if (signalsSent == 2 && since >= kInterruptToKill) signalChild(SIGKILL), signalsSent = 3;
            if (signalsSent < 3 && childRunning) wake = std::min(wake, now + milliseconds(50));
        }
        cv.wait_until(lock, wake);
    }
}

} // namespace stallscope::capture
