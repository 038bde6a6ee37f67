// The flush thread: waits for the next tick, a recorder command, a range edge, the exit or
// a crash; flushes CUPTI, converts the completed buffers and sends them.
#include "injection_state.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

namespace stallscope::capture::cupti {

namespace {

constexpr int64_t kKeepIntervalsNs = 600'000'000'000; // 10 min of range history

bool send(Injection& inj, pb::Envelope& e) {
    if (inj.recorderGone.load()) return false;
    if (inj.socket.send(e)) return true;
    inj.recorderGone.store(true);
    say("the recorder stopped listening; capture ends, the program continues");
    reconcileCollection(inj); // stop paying for records nobody will read
    return false;
}

void sendBatches(Injection& inj, std::vector<pb::Batch> batches) {
    if (batches.empty()) {
        pb::Batch onlyDrops;
        inj.drops.report(onlyDrops);
        if (onlyDrops.drop_reason().empty()) return;
        batches.push_back(std::move(onlyDrops));
    } else {
        inj.drops.report(batches.front());
    }
    for (pb::Batch& b : batches) {
        const auto records = static_cast<uint64_t>(b.activities_size());
        b.set_sequence(inj.sequence);
        pb::Envelope e;
        e.mutable_batch()->Swap(&b);
        if (send(inj, e)) {
            ++inj.sequence;
            inj.sentRecords += records;
        } else {
            inj.drops.add(DropLedger::Cause::NotDelivered, records);
        }
    }
}

void sendDescriptions(Injection& inj) {
    for (const ThreadRegistry::Thread& t : inj.threads.takeNew()) {
        if (t.osTid == inj.flushTid.load()) continue;
        pb::Envelope e;
        pb::ThreadName* n = e.mutable_thread_name();
        n->set_pid(inj.pid);
        n->set_tid(t.osTid);
        n->set_name(t.name);
        send(inj, e);
    }
    for (pb::Device& d : inj.converter.takeDevices()) {
        pb::Envelope e;
        e.mutable_device()->Swap(&d);
        send(inj, e);
    }
}

// Converts what CUPTI has delivered and sends it.
void drainAndSend(Injection& inj) {
    std::vector<CompletedBuffer> buffers;
    {
        std::lock_guard lock(inj.completedMutex);
        buffers.swap(inj.completed);
    }
    ActivityConverter& conv = inj.converter;
    if (!conv.clock().identity()) {
        ClockMap clock = conv.clock();
        if (calibrateClock(clock)) conv.setClock(clock);
    }
    std::vector<const CUpti_Activity*> records;
    for (const CompletedBuffer& b : buffers) collectRecords(b, records);
    conv.setRecordingIntervals(inj.range.snapshot());
    conv.setThreadMap(inj.threads.snapshot());
    conv.convert(records);
    releaseRecordMemory(records);
    for (const CompletedBuffer& b : buffers) inj.pool.release(b.data);
    const uint64_t exhausted = inj.pool.exhaustedCount();
    inj.drops.addPoolExhausted(exhausted - inj.reportedPoolExhaustion,
                               inj.pool.bufferBytes() * inj.pool.maxBuffers());
    inj.reportedPoolExhaustion = exhausted;
    sendDescriptions(inj);
    sendBatches(inj, conv.takeBatches());
    inj.range.pruneBefore(realtimeNs() - kKeepIntervalsNs);
}

// Applies the recorder's commands waiting on the socket; returns how many there were.
int handleControl(Injection& inj) {
    int n = 0;
    pb::Control c;
    while (!inj.recorderGone.load() && inj.socket.pollControl(c)) {
        ++n;
        if (c.command() == pb::Control::START) inj.range.recorderStart(realtimeNs());
        if (c.command() == pb::Control::STOP) inj.range.recorderStop(realtimeNs());
        // FLUSH needs nothing more: every wake-up flushes.
    }
    return n;
}

// Sleeps until the next tick, a range edge, a command or a wake-up; true when the socket
// woke it. The caller stops watching the socket for one round when that wake-up brought no
// whole command (the peer closed it, or half a message), so a closed socket cannot spin.
bool waitForWork(Injection& inj, int64_t nextTickNs, bool watchSocket) {
    const int64_t now = realtimeNs();
    const int64_t until = std::min(nextTickNs, inj.range.nextDeadline(now));
    const int64_t waitMs = (std::max<int64_t>(0, until - now) + 999'999) / 1'000'000;
    pollfd fds[2] = {{inj.wakeRead, POLLIN, 0}, {inj.socket.fd(), POLLIN, 0}};
    const nfds_t n = watchSocket && inj.socket.fd() >= 0 && !inj.recorderGone.load() ? 2 : 1;
    if (poll(fds, n, static_cast<int>(std::min<int64_t>(waitMs, 60'000))) <= 0) return false;
    if (fds[0].revents & POLLIN) {
        char sink[64];
        while (read(inj.wakeRead, sink, sizeof sink) > 0) {
        }
    }
    return n == 2 && fds[1].revents != 0;
}

void sendBye(Injection& inj, pb::Bye::Reason reason) {
    pb::Envelope e;
    pb::Bye* bye = e.mutable_bye();
    bye->set_reason(reason);
    bye->set_total_records(inj.sentRecords);
    bye->set_total_dropped(inj.drops.total());
    send(inj, e);
}

// One flush of everything CUPTI holds (incomplete records too) and the Bye.
void finalFlush(Injection& inj, pb::Bye::Reason reason) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    drainAndSend(inj);
    sendBye(inj, reason);
}

void flushMain(Injection& inj) {
    inj.flushTid.store(static_cast<int>(syscall(SYS_gettid)));
    inj.converter.ignoreThread(inj.flushTid.load());
    pb::Envelope hello;
    *hello.mutable_hello() = makeHello(&inj, "");
    send(inj, hello);
    const int64_t period = int64_t{inj.config.flushMs} * 1'000'000;
    int64_t nextTick = realtimeNs() + period;
    bool watchSocket = true;
    for (;;) {
        const bool socketWoke = waitForWork(inj, nextTick, watchSocket);
        if (realtimeNs() >= nextTick) nextTick = realtimeNs() + period;
        if (inj.crashSignal.load() != 0) {
            finalFlush(inj, pb::Bye::CRASH);
            inj.crashFlushed.store(true);
            break;
        }
        watchSocket = handleControl(inj) > 0 || !socketWoke;
        const int64_t now = realtimeNs();
        inj.range.tick(now);
        reconcileCollection(inj);
        if (inj.stopRequested.load()) {
            finalFlush(inj, pb::Bye::EXIT);
            break;
        }
        if (inj.cuptiDead.load() || inj.recorderGone.load() || inj.range.finished(now)) {
            finalFlush(inj, pb::Bye::STOPPED);
            break;
        }
        cuptiActivityFlushAll(0);
        drainAndSend(inj);
    }
    inj.socket.close();
    inj.flushDone.store(true);
}

} // namespace

void wakeFlushThread(Injection& inj) {
    if (inj.wakeWrite < 0) return;
    const char c = 'w';
    [[maybe_unused]] const ssize_t n = write(inj.wakeWrite, &c, 1); // full pipe: awake already
}

void startFlushThread(Injection& inj) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
        inj.wakeRead = fds[0];
        inj.wakeWrite = fds[1];
    }
    // The program's signals (SIGINT, SIGTERM, SIGCHLD, ...) are not for this thread.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    inj.flushThread = std::thread([&inj] { flushMain(inj); });
    inj.flushThread.detach();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

} // namespace stallscope::capture::cupti
