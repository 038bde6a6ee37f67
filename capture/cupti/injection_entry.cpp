// InitializeInjection: what the CUDA driver calls when it loads this library through
// CUDA_INJECTION64_PATH (during the program's first CUDA call, cuInit, on that thread).
// Every failure prints one line and leaves the program running unprofiled; nothing here may
// throw into the driver or exit the process.
#include "injection_state.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>

namespace stallscope::capture::cupti {

namespace {

std::atomic<bool> g_started{false};
std::atomic<Injection*> g_injection{nullptr};
std::atomic<bool> g_forkedChild{false};

void onForkChild() {
    g_forkedChild.store(true);
}

// An injection whose CUPTI set-up failed half-way: never freed, but still referenced (so
// leak checkers do not report it).
Injection* g_retired = nullptr;

// After an internal error: CUPTI keeps its subscription but collects nothing more, and
// nothing of ours is reached from its callbacks.
void abandon() {
    if (Injection* inj = g_injection.exchange(nullptr)) {
        g_retired = inj;
        inj->recorderGone.store(true);
        reconcileCollection(*inj);
    }
}

// Connects, sets CUPTI up and starts the flush thread; says why in one line when this
// process runs without capture.
void initialise() {
    CaptureConfig config = parseCaptureConfig([](const char* name) { return std::getenv(name); });
    for (const std::string& p : config.problems) say(p);
    if (config.socketPath.empty()) {
        say(std::string(kSocketEnv) +
            " is not set (the recorder sets it); this process runs without GPU capture");
        return;
    }
    // Never freed: CUPTI may call back into it until the very end of the process.
    auto* inj = new Injection(std::move(config), realtimeNs());
    std::string error;
    if (!inj->socket.connect(inj->config.socketPath, error)) {
        say("cannot reach the recorder at " + inj->config.socketPath + " (" + error +
            "); this process runs without GPU capture");
        delete inj;  // CUPTI was never told about it
        return;
    }
    g_injection.store(inj); // the buffer callbacks may run as soon as CUPTI is set up
    if (!setUpCupti(*inj, error)) {
        g_injection.store(nullptr);
        g_retired = inj;  // a half-made subscription may still hold it: kept, and reachable
        say(error + "; this process runs without GPU capture");
        pb::Envelope hello;
        *hello.mutable_hello() = makeHello(nullptr, kNotCapturing + error);
        inj->socket.send(hello);
        inj->socket.close();
        return;
    }
    installExitHandlers();
    startFlushThread(*inj);
}

} // namespace

Injection* injection() {
    return g_forkedChild.load(std::memory_order_relaxed)
               ? nullptr
               : g_injection.load(std::memory_order_acquire);
}

void say(const std::string& message) {
    const std::string line = "stallscope capture: " + message + "\n";
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
}

std::string describe(const char* call, CUptiResult result) {
    const char* name = nullptr;
    const char* message = nullptr;
    std::string s = std::string(call) + ": ";
    s += cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name
             ? name
             : "CUPTI error " + std::to_string(result);
    if (cuptiGetErrorMessage(result, &message) == CUPTI_SUCCESS && message && name &&
        std::string_view(message) != name)
        s += std::string(" (") + message + ")";
    return s;
}

Injection::Injection(CaptureConfig c, int64_t init)
    : config(std::move(c)), initNs(init), pid(static_cast<int>(getpid())),
      range(RangeSettings{config.delayNs, config.durationNs, config.profilerRange}, init),
      pool(kBufferBytes, config.maxBuffers()),
      converter(ConvertOptions{.pid = getpid(), .allApi = config.allApi}, drops) {}

} // namespace stallscope::capture::cupti

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    using namespace stallscope::capture::cupti;
    bool expected = false;
    if (!g_started.compare_exchange_strong(expected, true)) return 1;
    pthread_atfork(nullptr, nullptr, &onForkChild);
    try {
        initialise();
    } catch (const std::exception& e) {
        abandon();
        say(std::string("internal error: ") + e.what() + "; this process runs without GPU capture");
    } catch (...) {
        abandon();
        say("internal error; this process runs without GPU capture");
    }
    return 1;
}
