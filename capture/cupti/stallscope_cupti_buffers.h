#pragma once
// Bounded memory for CUPTI's activity records, and the ledger of what was lost.
//
// CUPTI asks for an empty buffer whenever it fills one (bufferRequested) and hands full ones
// back (bufferCompleted). BufferPool gives out at most `maxBuffers` buffers of `bufferBytes`
// (allocated on first use, then recycled); when all are out — the recorder or the socket is
// slower than the program produces records — the request is declined, CUPTI drops records
// and counts them (cuptiActivityGetNumDroppedRecords), and the pool counts the refusal. The
// drops are reported in the next Batch (dropped_records, drop_reason) and in Bye.
#include "stallscope_capture.pb.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace stallscope::capture::cupti {

class BufferPool {
public:
    /// `bufferBytes` is rounded up to a multiple of 8 (CUPTI's record alignment).
    BufferPool(size_t bufferBytes, size_t maxBuffers);
    ~BufferPool();
    BufferPool(const BufferPool&) = delete;
    BufferPool& operator=(const BufferPool&) = delete;

    /// A free buffer (8-byte aligned), or nullptr when all `maxBuffers` are out.
    uint8_t* acquire();
    /// Gives a buffer from acquire() back; other pointers are ignored (and counted).
    void release(uint8_t* buffer);

    [[nodiscard]] size_t bufferBytes() const { return m_bufferBytes; }
    [[nodiscard]] size_t maxBuffers() const { return m_maxBuffers; }
    [[nodiscard]] size_t allocated() const;
    [[nodiscard]] size_t inUse() const;
    /// Requests declined because every buffer was out, since the start.
    [[nodiscard]] uint64_t exhaustedCount() const;
    [[nodiscard]] uint64_t foreignReleases() const;

private:
    const size_t m_bufferBytes, m_maxBuffers;
    mutable std::mutex m_mutex;
    std::vector<uint8_t*> m_all, m_free;
    uint64_t m_exhausted = 0, m_foreign = 0;
};

/// What was lost, by cause, since the start and since the last report. Thread-safe.
class DropLedger {
public:
    enum class Cause {
        CuptiBufferFull,    // records CUPTI dropped (no buffer, or buffers full)
        NoTimestamp,        // records CUPTI could not time (start = end = 0)
        MarkerWithoutStart, // NVTX range ends whose start was never seen
        MarkerOverflow,     // open NVTX ranges forgotten because too many were open
        NotDelivered,       // converted records the recorder did not receive
        kCount
    };

    void add(Cause cause, uint64_t records);
    /// Buffer requests CUPTI made while the pool was exhausted (not records; reported in
    /// the reason text).
    void addPoolExhausted(uint64_t requests, size_t poolBytes);

    /// Moves the records lost since the last call into the batch: dropped_records (the
    /// count) and drop_reason (per cause, in words). No-op when nothing was lost.
    void report(pb::Batch& batch);
    [[nodiscard]] uint64_t total() const;
    [[nodiscard]] uint64_t total(Cause cause) const;
    /// One line for stderr: every cause with its total, empty when nothing was lost.
    [[nodiscard]] std::string summary() const;

private:
    static constexpr size_t kCauses = static_cast<size_t>(Cause::kCount);
    mutable std::mutex m_mutex;
    uint64_t m_pending[kCauses] = {}, m_total[kCauses] = {};
    uint64_t m_poolPending = 0, m_poolTotal = 0;
    size_t m_poolBytes = 0;
};

} // namespace stallscope::capture::cupti
