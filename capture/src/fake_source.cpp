// FakeSource: the protocol side (Hello, Device, threads, numbered Batches, Bye, faults).
#include "fake_source_internal.h"

#include <chrono>
#include <ctime>
#include <thread>
#include <unistd.h>

namespace stallscope::capture {

namespace detail {

Emitter::Emitter(EnvelopeSink& sink, SocketWriter* socket, const FakeSourceOptions& o, FakeSourceResult& r,
                 const std::atomic<bool>* cancel)
    : m_sink(sink), m_socket(socket), m_o(o), m_r(r), m_cancel(cancel) {
    m_env.mutable_batch();
}

bool Emitter::deliver(const pb::Envelope& e) {
    if (m_sink.send(e)) return true;
    m_r.error = "the recorder closed the connection";
    m_ended = true;
    return false;
}

void Emitter::sendHeader() {
    pb::Envelope e;
    pb::Hello& h = *e.mutable_hello();
    h.set_protocol_version(kProtocolVersion);
    h.set_source("fake");
    h.set_pid(m_o.pid);
    h.set_command_line("stallscope fake training loop (" + std::to_string(m_o.steps) + " steps)");
    h.set_clock_note("fake source: timestamps generated on CLOCK_REALTIME");
    if (!deliver(e)) return;
    pb::Envelope d;
    pb::Device& dev = *d.mutable_device();
    dev.set_id(m_o.device);
    dev.set_name("Stallscope fake GPU (A100-like)");
    dev.set_compute_major(8);
    dev.set_compute_minor(0);
    dev.set_total_memory(int64_t(40) << 30);
    dev.set_num_sms(108);
    dev.set_max_threads_per_sm(2048);
    dev.set_max_registers_per_sm(65536);
    dev.set_shared_memory_per_sm(167936);
    dev.set_warp_size(32);
    if (!deliver(d)) return;
    for (auto [tid, name] : {std::pair<int64_t, const char*>{m_o.tid, "pt_main_thread"}, {m_o.tid + 1, "pt_autograd_0"}}) {
        pb::Envelope t;
        t.mutable_thread_name()->set_pid(m_o.pid);
        t.mutable_thread_name()->set_tid(tid);
        t.mutable_thread_name()->set_name(name);
        if (!deliver(t)) return;
    }
}

void Emitter::sendBye() {
    if (m_ended && !m_stopped) return;
    pb::Envelope e;
    e.mutable_bye()->set_reason(m_stopped ? pb::Bye::STOPPED : pb::Bye::EXIT);
    e.mutable_bye()->set_total_records(m_r.recordsSent + m_r.recordsLost);
    e.mutable_bye()->set_total_dropped(m_o.droppedPerBatch * m_r.batchesSent);
    m_sink.send(e);
}

pb::Activity& Emitter::add(pb::Activity::Kind kind, std::string_view name, int64_t start, int64_t end) {
    if (m_env.batch().activities_size() >= m_o.recordsPerBatch) flush();  // (after a death: never sent)
    pb::Activity& a = *m_env.mutable_batch()->add_activities();
    a.set_kind(kind);
    a.set_name_id(m_strings.id(name));
    a.set_start_ns(start);
    a.set_end_ns(end);
    m_batchEnd = std::max(m_batchEnd, end);
    if (kind == pb::Activity::KERNEL) ++m_kernels;
    if (kind == pb::Activity::MEMCPY) ++m_copies;
    if (kind == pb::Activity::USER_ANNOTATION && name.rfind("ProfilerStep#", 0) == 0) ++m_steps;
    return a;
}

bool Emitter::stopRequested() {
    if (m_cancel && m_cancel->load()) {
        m_stopped = true;
        return true;
    }
    pb::Control c;
    while (m_socket && m_o.waitForStart && m_socket->pollControl(c))
        if (c.command() == pb::Control::STOP) m_stopped = true;
    return m_stopped;
}

void Emitter::pace(int64_t untilNs) {
    while (m_o.realTime && !(m_cancel && m_cancel->load())) {
        const int64_t left = untilNs - realtimeNs();
        if (left <= 0) return;
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(left, 20'000'000)));
        if (stopRequested()) return;
    }
}

bool Emitter::waitForStart() {
    if (!m_socket || !m_o.waitForStart) return true;
    pb::Control c;
    for (;;) {
        if (m_cancel && m_cancel->load()) return false;
        if (m_socket->pollControl(c) && c.command() == pb::Control::START) return true;
        if (c.command() == pb::Control::STOP) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void Emitter::injectAfter(int index) {
    if (index == m_o.corruptAfterBatch) {
        // Field 0 with wire type 7: never a valid Envelope.
        if (m_socket) m_socket->sendRaw(std::string("\x05\x07\x07\x07\x07\x07", 6));
        else m_sink.send(pb::Envelope());
    }
    if (index == m_o.cutAfterBatch) {
        pb::Envelope e;
        pb::Batch& b = *e.mutable_batch();
        b.set_sequence(1u << 30);
        b.add_new_strings("a string in a message that was cut");
        pb::Activity& a = *b.add_activities();
        a.set_kind(pb::Activity::RUNTIME);
        a.set_start_ns(1);
        a.set_end_ns(2);
        std::string bytes = e.SerializeAsString();
        bytes.resize(bytes.size() / 2);  // inside the batch field: the message cannot parse
        // Well under 128 bytes, so the length prefix is one varint byte.
        if (m_socket) m_socket->sendRaw(static_cast<char>(bytes.size()) + bytes);
        else m_sink.send(pb::Envelope());
    }
}

bool Emitter::flush(bool force) {
    pb::Batch& b = *m_env.mutable_batch();
    if (m_ended) return false;
    if (b.activities_size() == 0 || (!force && b.activities_size() < m_o.recordsPerBatch))
        return !m_stopped && !(m_cancel && m_cancel->load());
    const int index = m_index++;
    const auto n = static_cast<uint64_t>(b.activities_size());
    if (index == m_o.unknownStringInBatch) b.mutable_activities(0)->set_name_id(1000000);
    b.set_sequence(m_sequence++);
    m_strings.takeNew(b);
    b.set_dropped_records(m_o.droppedPerBatch);
    if (m_o.droppedPerBatch) b.set_drop_reason("fake source: buffer full");
    pace(m_batchEnd);
    bool sent = false;
    if (index == m_o.skipBatch) {
        m_r.recordsLost += n;
    } else if (index == m_o.dieInBatch) {
        m_r.recordsLost += n;
        const std::string bytes = frame(m_env);
        if (m_socket) m_socket->sendRaw(std::string_view(bytes).substr(0, bytes.size() / 2)), m_socket->close();
        m_ended = true;
    } else if ((sent = deliver(m_env))) {
        ++m_r.batchesSent;
        m_r.recordsSent += n;
        m_r.kernels += m_kernels, m_r.copies += m_copies, m_r.steps += m_steps;
    }
    if (sent) injectAfter(index);
    m_env.mutable_batch()->Clear();
    m_kernels = m_copies = m_steps = 0;
    return !m_ended && !stopRequested();
}

} // namespace detail

FakeSource::FakeSource(FakeSourceOptions options) : m_options(std::move(options)) {
    if (m_options.pid == 0) m_options.pid = ::getpid();
    if (m_options.tid == 0) m_options.tid = m_options.pid;
    if (m_options.recordsPerBatch < 1) m_options.recordsPerBatch = 1;
}

FakeSourceResult FakeSource::run(EnvelopeSink& sink, SocketWriter* socket, const std::atomic<bool>* cancel) {
    FakeSourceResult r;
    detail::Emitter e(sink, socket, m_options, r, cancel);
    e.sendHeader();
    if (e.ended()) return r;
    if (!e.waitForStart()) {
        r.error = "cancelled before the recorder said START";
        return r;
    }
    const int64_t start = m_options.startNs != 0 ? m_options.startNs : realtimeNs();
    detail::playTrainingLoop(e, m_options, start, r);
    e.flush(true);
    e.sendBye();
    r.ok = r.error.empty();
    return r;
}

FakeSourceResult FakeSource::play(EnvelopeSink& sink, const std::atomic<bool>* cancel) {
    return run(sink, nullptr, cancel);
}

FakeSourceResult FakeSource::play(SocketWriter& socket, const std::atomic<bool>* cancel) {
    return run(socket, &socket, cancel);
}

FakeSourceResult FakeSource::playTo(const std::string& socketPath, const std::atomic<bool>* cancel) {
    SocketWriter w;
    FakeSourceResult r;
    if (!w.connect(socketPath, r.error)) return r;
    r = play(w, cancel);
    w.close();
    return r;
}

} // namespace stallscope::capture
