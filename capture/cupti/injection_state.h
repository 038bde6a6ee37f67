#pragma once
// The injection library's state: one per process, created by InitializeInjection and never
// destroyed (the process tears down CUDA, CUPTI and the C++ runtime in an order we do not
// control, so nothing of ours may be destroyed under a late CUPTI callback).
//
// Threads:
//   the program's threads  CUPTI callbacks: profiler start/stop, thread registration,
//                          buffer requests/completions (also on CUPTI's own thread)
//   the flush thread       every STALLSCOPE_CAPTURE_FLUSH_MS (default 200 ms), on a recorder
//                          command, at a range edge, at exit and on a crash: flushes CUPTI,
//                          converts, sends; the only thread that touches the converter
//                          and (after connecting) writes to the socket
#include "stallscope_cupti_buffers.h"
#include "stallscope_cupti_config.h"
#include "stallscope_cupti_convert.h"
#include "stallscope_cupti_range.h"

#include "stallscope/capture/protocol.h"

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stallscope::capture::cupti {

struct CompletedBuffer {
    uint8_t* data = nullptr;
    size_t validBytes = 0;
};

struct Injection {
    Injection(CaptureConfig config, int64_t initNs);

    CaptureConfig config;
    int64_t initNs;
    int pid;
    SocketWriter socket;
    RangeControl range;
    BufferPool pool;
    DropLedger drops;
    ThreadRegistry threads;
    ActivityConverter converter; // flush thread only
    CUpti_SubscriberHandle subscriber = nullptr;
    std::string clockNote;

    std::mutex completedMutex;
    std::vector<CompletedBuffer> completed;

    // CUPTI activity kinds on/off. Timed: a CUPTI callback waits for it a bounded time only
    // (CUPTI may hold a lock of its own around the callback that the holder needs).
    std::timed_mutex collectionMutex;
    bool collecting = false;

    int wakeRead = -1, wakeWrite = -1; // self-pipe: wakes the flush thread (signal-safe)
    std::thread flushThread;
    std::atomic<int> flushTid{0};
    std::atomic<bool> stopRequested{false}; // at exit
    std::atomic<bool> flushDone{false};     // the flush thread sent Bye and returned
    std::atomic<int> crashSignal{0};        // set by the fatal-signal handler
    std::atomic<bool> crashFlushed{false};
    std::atomic<bool> cuptiDead{false}; // CUPTI reported a fatal error
    std::atomic<bool> recorderGone{false};
    uint64_t sequence = 0;               // flush thread only
    uint64_t sentRecords = 0;            // flush thread only
    uint64_t reportedPoolExhaustion = 0; // flush thread only
};

/// The process's injection, or nullptr (not initialised, or inert in a forked child).
Injection* injection();

// stderr, one line, prefixed "stallscope capture: ".
void say(const std::string& message);
/// "cuptiSubscribe: CUPTI_ERROR_... (message)".
std::string describe(const char* call, CUptiResult result);

// injection_cupti.cpp
bool setUpCupti(Injection& inj, std::string& error);
/// Switches the activity kinds on or off to match inj.range (and a dead CUPTI or recorder).
/// From a CUPTI callback it gives up after a few milliseconds (the flush thread, woken,
/// does it then); false when it did not get to it.
bool reconcileCollection(Injection& inj, bool fromCallback = false);
bool calibrateClock(ClockMap& clock);
/// The records of a completed buffer, in order.
void collectRecords(const CompletedBuffer& buffer, std::vector<const CUpti_Activity*>& out);
/// Frees what CUPTI hands over with some records (device names, overhead details).
void releaseRecordMemory(const std::vector<const CUpti_Activity*>& records);

// injection_flush.cpp
void startFlushThread(Injection& inj);
void wakeFlushThread(Injection& inj); // async-signal-safe
pb::Hello makeHello(const Injection* inj, const std::string& note);

// injection_exit.cpp
void installExitHandlers();

} // namespace stallscope::capture::cupti
