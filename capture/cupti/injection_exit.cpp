// The ends of a capture: normal exit (atexit) and the crash paths a handler can reach
// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, and SIGTERM when the program leaves it at its
// default). Both hand the work to the flush thread — a crashed thread may hold any lock, so
// it does nothing but wake the flush thread and wait a bounded time — then the program's
// own handling goes on: the previous handler runs, or the default action kills the process
// with the same signal (and core dump) it would have had without us.
// Not reachable: SIGKILL, _exit()/os._exit(), a stack overflow in a thread without an
// alternate signal stack; what was already sent is kept by the recorder.
#include "injection_state.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdlib>

namespace stallscope::capture::cupti {

namespace {

constexpr std::array kFatalSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};
constexpr int kExitWaitMs = 10'000;
constexpr int kCrashWaitMs = 3'000;

struct sigaction g_previous[NSIG];
std::atomic<int> g_crashing{0};

void sleepMs(int ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1'000'000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

// Async-signal-safe: atomics, write(), nanosleep(), sigaction(), raise().
void onFatalSignal(int sig, siginfo_t* info, void*) {
    Injection* inj = injection();
    const bool ours = inj != nullptr && getpid() == inj->pid && !inj->flushDone.load();
    const bool onFlushThread = inj != nullptr && syscall(SYS_gettid) == inj->flushTid.load();
    if (ours && !onFlushThread && g_crashing.fetch_add(1) == 0) {
        inj->crashSignal.store(sig);
        wakeFlushThread(*inj);
        for (int waited = 0;
             waited < kCrashWaitMs && !inj->crashFlushed.load() && !inj->flushDone.load();
             waited += 10)
            sleepMs(10);
    }
    sigaction(sig, &g_previous[sig], nullptr);
    // A fault the hardware raised happens again when we return, now handled as before us;
    // a signal that was sent (kill, abort, raise) is sent again.
    const bool fault = info != nullptr && info->si_code > 0 && sig != SIGABRT && sig != SIGTERM;
    if (!fault) raise(sig);
}

void onExit() {
    Injection* inj = injection();
    if (inj == nullptr || getpid() != inj->pid) return;
    if (!inj->flushDone.load()) {
        inj->stopRequested.store(true);
        wakeFlushThread(*inj);
        int waited = 0;
        for (; waited < kExitWaitMs && !inj->flushDone.load(); waited += 5) sleepMs(5);
        if (!inj->flushDone.load())
            say("the last records could not be sent within " + std::to_string(kExitWaitMs / 1000) +
                " s of the exit; they are lost");
    }
    const std::string lost = inj->drops.summary();
    if (!lost.empty()) say("records lost: " + lost);
}

} // namespace

void installExitHandlers() {
    std::atexit(&onExit);
    for (int sig : kFatalSignals) {
        struct sigaction current {};
        if (sigaction(sig, nullptr, &current) != 0) continue;
        // SIGTERM is the program's to handle if it wants to; take it only at its default.
        const bool defaultAction =
            (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
        if (sig == SIGTERM && !defaultAction) continue;
        struct sigaction ours {};
        ours.sa_sigaction = &onFatalSignal;
        ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&ours.sa_mask);
        g_previous[sig] = current;
        sigaction(sig, &ours, nullptr);
    }
}

} // namespace stallscope::capture::cupti
