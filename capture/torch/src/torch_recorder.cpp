// The recorder's plain-C++ part: per-thread buffers, the flush thread and the envelopes
// (Hello, ThreadName, Batch, Bye). The RecordFunction callbacks are in torch_hooks.cpp.
#include "recorder_core.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace stallscope::torchrec {

namespace detail {

namespace {
std::atomic<RecorderCore*> g_active{nullptr};
std::atomic<uint64_t> g_inFlight{0};
std::atomic<uint64_t> g_generation{0};
constexpr size_t kMaxActivitiesPerBatch = 20000;

std::string commandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!s.empty() && s.back() == '\0') s.pop_back();
    for (char& c : s)
        if (c == '\0') c = ' ';
    return s;
}

std::string currentThreadName() {
    char buf[64] = {};
    if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
    return buf;
}
} // namespace

ActiveGuard::ActiveGuard() {
    g_inFlight.fetch_add(1, std::memory_order_seq_cst);
    core = g_active.load(std::memory_order_seq_cst);
}

ActiveGuard::~ActiveGuard() {
    g_inFlight.fetch_sub(1, std::memory_order_seq_cst);
}

int64_t osThreadId() {
    thread_local const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
    return tid;
}

/// The state of one active recording.
class RecorderCore {
public:
    RecorderCore(capture::EnvelopeSink& sink, const RecorderOptions& options)
        : m_sink(sink), m_options(options), m_generation(++g_generation) {}

    [[nodiscard]] uint64_t generation() const { return m_generation; }

    std::shared_ptr<ThreadBuffer> registerThread() {
        auto b = std::make_shared<ThreadBuffer>(osThreadId(), currentThreadName(),
                                                m_options.threadBufferRecords);
        std::lock_guard lock(m_buffersMutex);
        m_buffers.push_back(b);
        return b;
    }

    void hello() {
        capture::pb::Envelope e;
        capture::pb::Hello& h = *e.mutable_hello();
        h.set_protocol_version(capture::kProtocolVersion);
        h.set_source("libtorch");
        h.set_pid(getpid());
        h.set_command_line(commandLine());
        h.set_clock_note("CLOCK_REALTIME ns read in the RecordFunction start/end callbacks (" +
                         torchVersionText() + ")");
        send(e);
    }

    void startThread() {
        m_thread = std::thread([this] {
            pthread_setname_np(pthread_self(), "stallscope-flush");
            std::unique_lock lock(m_wakeMutex);
            while (!m_stopping) {
                m_wake.wait_for(lock, std::chrono::milliseconds(m_options.flushIntervalMs));
                if (m_stopping) break;
                lock.unlock();
                flush();
                lock.lock();
            }
        });
    }

    void stopThread() {
        {
            std::lock_guard lock(m_wakeMutex);
            m_stopping = true;
        }
        m_wake.notify_all();
        if (m_thread.joinable()) m_thread.join();
    }

    void flush();

    void bye() {
        capture::pb::Envelope e;
        capture::pb::Bye& b = *e.mutable_bye();
        b.set_reason(capture::pb::Bye::STOPPED);
        b.set_total_records(m_records);
        b.set_total_dropped(m_dropped);
        send(e);
    }

    [[nodiscard]] RecorderStats stats() {
        std::lock_guard lock(m_flushMutex);
        return RecorderStats{m_records, m_dropped, m_batchCount, m_threadCount, m_sinkFailed};
    }

private:
    void send(const capture::pb::Envelope& e) {
        if (!m_sink.send(e)) m_sinkFailed = true;
    }
    void sendBatch(capture::pb::Envelope& e, uint64_t dropped);
    void announce(ThreadBuffer& b);
    void toActivity(const OpRecord& r, int64_t tid, capture::pb::Activity& a);

    capture::EnvelopeSink& m_sink;
    const RecorderOptions m_options;
    const uint64_t m_generation;
    const int64_t m_pid = getpid();

    std::mutex m_buffersMutex;
    std::vector<std::shared_ptr<ThreadBuffer>> m_buffers;

    std::mutex m_flushMutex; // one flush at a time; guards everything below
    capture::StringTable m_strings;
    uint64_t m_sequence = 0, m_records = 0, m_dropped = 0, m_batchCount = 0, m_threadCount = 0;
    bool m_sinkFailed = false;

    std::mutex m_wakeMutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::thread m_thread;
};

void RecorderCore::toActivity(const OpRecord& r, int64_t tid, capture::pb::Activity& a) {
    a.set_kind(r.userScope ? capture::pb::Activity::USER_ANNOTATION
                           : capture::pb::Activity::CPU_OP);
    a.set_start_ns(r.startNs);
    a.set_end_ns(r.endNs);
    a.set_name_id(m_strings.id(r.name));
    a.set_pid(m_pid);
    a.set_tid(tid);
    a.set_external_id(r.externalId);
    a.set_sequence_number(r.sequenceNumber);
    if (!r.shapes.empty()) a.set_input_shapes(r.shapes);
    a.set_depth_hint(r.depth);
}

void RecorderCore::announce(ThreadBuffer& b) {
    b.announced = true;
    ++m_threadCount;
    capture::pb::Envelope e;
    capture::pb::ThreadName& t = *e.mutable_thread_name();
    t.set_pid(m_pid);
    t.set_tid(b.tid());
    t.set_name(b.threadName().empty() ? "thread " + std::to_string(b.tid()) : b.threadName());
    send(e);
}

void RecorderCore::sendBatch(capture::pb::Envelope& e, uint64_t dropped) {
    capture::pb::Batch& batch = *e.mutable_batch();
    if (batch.activities_size() == 0 && dropped == 0) return;
    batch.set_sequence(m_sequence++);
    m_strings.takeNew(batch);
    if (dropped) {
        batch.set_dropped_records(dropped);
        batch.set_drop_reason("LibTorch recorder: thread buffer full (" +
                              std::to_string(m_options.threadBufferRecords) + " records)");
    }
    m_records += static_cast<uint64_t>(batch.activities_size());
    m_dropped += dropped;
    ++m_batchCount;
    send(e);
    e.Clear();
}

void RecorderCore::flush() {
    std::lock_guard flushLock(m_flushMutex);
    std::vector<std::shared_ptr<ThreadBuffer>> buffers;
    {
        std::lock_guard lock(m_buffersMutex);
        buffers = m_buffers;
    }
    capture::pb::Envelope e;
    uint64_t dropped = 0;
    for (const auto& b : buffers) {
        dropped += b->takeDropped();
        if (b->empty()) continue;
        if (!b->announced) announce(*b);
        const int64_t tid = b->tid();
        for (;;) {
            const size_t room =
                kMaxActivitiesPerBatch - static_cast<size_t>(e.batch().activities_size());
            const size_t n = b->drain(
                [&](const OpRecord& r) {
                    toActivity(r, tid, *e.mutable_batch()->add_activities());
                },
                room);
            if (static_cast<size_t>(e.batch().activities_size()) >= kMaxActivitiesPerBatch) {
                sendBatch(e, dropped);
                dropped = 0;
            }
            if (n < room) break;
        }
    }
    sendBatch(e, dropped);
    // Buffers of threads that ended (only the list still holds them) and are drained.
    buffers.clear();
    std::lock_guard lock(m_buffersMutex);
    std::erase_if(m_buffers, [](const std::shared_ptr<ThreadBuffer>& b) {
        return b.use_count() == 1 && b->empty();
    });
}

ThreadBuffer* threadBuffer(RecorderCore& core) {
    thread_local std::shared_ptr<ThreadBuffer> buffer;
    thread_local uint64_t generation = 0;
    if (generation != core.generation()) {
        buffer = core.registerThread();
        generation = core.generation();
    }
    return buffer.get();
}

} // namespace detail

// ---------------------------------------------------------------- TorchRecorder

struct TorchRecorder::Impl {
    RecorderOptions options;
    std::unique_ptr<detail::RecorderCore> core;
    std::unique_ptr<capture::SocketWriter> socket;
    uint64_t hooks = 0;
    detail::UserScopeHandle* step = nullptr;
    RecorderStats last; // of the previous recording, after stop()
};

TorchRecorder::TorchRecorder(RecorderOptions options) : m_impl(std::make_unique<Impl>()) {
    m_impl->options = options;
    if (m_impl->options.flushIntervalMs <= 0) m_impl->options.flushIntervalMs = 100;
}

TorchRecorder::~TorchRecorder() {
    stop();
}

namespace {
base::Error startFailed(std::string message) {
    return {base::ErrorKind::StartFailed, std::move(message)};
}
} // namespace

base::Status TorchRecorder::start(capture::EnvelopeSink& sink) {
    if (m_impl->core) return startFailed("this recorder is already recording");
    auto core = std::make_unique<detail::RecorderCore>(sink, m_impl->options);
    detail::RecorderCore* expected = nullptr;
    if (!detail::g_active.compare_exchange_strong(expected, core.get()))
        return startFailed("another TorchRecorder is recording in this process (RecordFunction "
                           "callbacks are global)");
    core->hello();
    m_impl->core = std::move(core);
    m_impl->hooks = detail::installHooks(m_impl->options);
    m_impl->core->startThread();
    return {};
}

base::Status TorchRecorder::startFromEnvironment() {
    const char* path = std::getenv(capture::kSocketEnv);
    if (!path || !*path)
        return startFailed(std::string(capture::kSocketEnv) +
                           " is not set: run the program under `stallscope-cli record -- ...`");
    auto socket = std::make_unique<capture::SocketWriter>();
    std::string error;
    if (!socket->connect(path, error)) return startFailed(std::move(error));
    if (base::Status started = start(*socket); !started) return started;
    m_impl->socket = std::move(socket);
    return {};
}

void TorchRecorder::stop() {
    if (!m_impl->core) return;
    endStep();
    detail::g_active.store(nullptr, std::memory_order_seq_cst);
    detail::removeHooks(m_impl->hooks);
    // Callbacks that found the recorder active finish their push before it goes away.
    while (detail::g_inFlight.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    m_impl->core->stopThread();
    m_impl->core->flush();
    m_impl->core->bye();
    m_impl->last = m_impl->core->stats();
    m_impl->core.reset();
    if (m_impl->socket) m_impl->socket->close();
    m_impl->socket.reset();
}

void TorchRecorder::flush() {
    if (m_impl->core) m_impl->core->flush();
}

void TorchRecorder::step(int64_t n) {
    endStep();
    if (m_impl->core) m_impl->step = detail::beginUserScope("ProfilerStep#" + std::to_string(n));
}

void TorchRecorder::endStep() {
    if (!m_impl->step) return;
    detail::endUserScope(m_impl->step);
    m_impl->step = nullptr;
}

bool TorchRecorder::recording() const {
    return m_impl->core != nullptr;
}

RecorderStats TorchRecorder::stats() const {
    return m_impl->core ? m_impl->core->stats() : m_impl->last;
}

bool TorchRecorder::gpuAvailable() {
    return detail::torchGpuAvailable();
}

std::string TorchRecorder::libtorchDescription() {
    return detail::torchVersionText();
}

// ---------------------------------------------------------------- UserRange

struct UserRange::Impl {
    detail::UserScopeHandle* handle = nullptr;
};

UserRange::UserRange(const std::string& name) : m_impl(std::make_unique<Impl>()) {
    m_impl->handle = detail::beginUserScope(name);
}

UserRange::~UserRange() {
    end();
}

void UserRange::end() {
    if (!m_impl->handle) return;
    detail::endUserScope(m_impl->handle);
    m_impl->handle = nullptr;
}

} // namespace stallscope::torchrec
