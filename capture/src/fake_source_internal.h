#pragma once
// FakeSource's parts: the Emitter turns activities into numbered Batches (and injects the
// faults); the TrainingLoop decides what happens when.
#include "stallscope/capture/fake_source.h"

#include <atomic>

namespace stallscope::capture::detail {

class Emitter {
public:
    Emitter(EnvelopeSink& sink, SocketWriter* socket, const FakeSourceOptions& o, FakeSourceResult& r,
            const std::atomic<bool>* cancel);

    /// A new activity in the current batch (sent when full).
    pb::Activity& add(pb::Activity::Kind kind, std::string_view name, int64_t start, int64_t end);
    uint32_t string(std::string_view s) { return m_strings.id(s); }
    /// Sends the current batch if it is full (or `force`); false once the play must end
    /// (died, stopped, cancelled, sink gone).
    bool flush(bool force = false);
    /// Waits for Control START when asked to; false when cancelled or the peer is gone.
    bool waitForStart();
    [[nodiscard]] bool ended() const { return m_ended; }
    void sendHeader();
    void sendBye();

private:
    bool deliver(const pb::Envelope& e);
    void injectAfter(int index);
    bool stopRequested();
    void pace(int64_t untilNs);

    EnvelopeSink& m_sink;
    SocketWriter* m_socket;
    const FakeSourceOptions& m_o;
    FakeSourceResult& m_r;
    const std::atomic<bool>* m_cancel;
    StringTable m_strings;
    pb::Envelope m_env;
    uint64_t m_sequence = 0;
    int m_index = 0;
    int64_t m_batchEnd = 0;
    uint64_t m_kernels = 0, m_copies = 0, m_steps = 0;
    bool m_ended = false, m_stopped = false;
};

/// Generates the steps into an Emitter.
void playTrainingLoop(Emitter& e, const FakeSourceOptions& o, int64_t startNs, FakeSourceResult& r);

} // namespace stallscope::capture::detail
