#pragma once
// One recording thread's buffer: a bounded single-producer/single-consumer ring. The
// thread that runs operators appends (no lock, no allocation once the slots' strings have
// grown); the flush thread drains. A full ring drops the record and counts it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace stallscope::torchrec::detail {

struct OpRecord {
    int64_t startNs = 0, endNs = 0;
    int64_t sequenceNumber = -1;
    uint64_t externalId = 0;
    uint32_t depth = 0;            // nesting on its thread when it started
    bool userScope = false;        // USER_ANNOTATION (record_function) rather than CPU_OP
    std::string name;
    std::string shapes;            // "[[8, 3, 32, 32], []]"; empty when not recorded
};

class ThreadBuffer {
public:
    ThreadBuffer(int64_t tid, std::string threadName, size_t capacity)
        : m_tid(tid), m_name(std::move(threadName)), m_slots(roundUp(capacity)), m_mask(m_slots.size() - 1) {}

    /// Producer side. Swaps the record's strings with the slot's, so the caller gets the
    /// slot's old buffers back (no allocation in steady state).
    bool push(OpRecord& r) {
        const uint64_t head = m_head.load(std::memory_order_relaxed);
        if (head - m_tail.load(std::memory_order_acquire) >= m_slots.size()) {
            m_dropped.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        OpRecord& slot = m_slots[head & m_mask];
        slot.startNs = r.startNs;
        slot.endNs = r.endNs;
        slot.sequenceNumber = r.sequenceNumber;
        slot.externalId = r.externalId;
        slot.depth = r.depth;
        slot.userScope = r.userScope;
        slot.name.swap(r.name);
        slot.shapes.swap(r.shapes);
        m_head.store(head + 1, std::memory_order_release);
        return true;
    }

    /// Consumer side: calls fn(const OpRecord&) for at most `limit` records, oldest first;
    /// returns how many.
    template <class Fn>
    size_t drain(Fn&& fn, size_t limit = SIZE_MAX) {
        const uint64_t tail = m_tail.load(std::memory_order_relaxed);
        const uint64_t head = m_head.load(std::memory_order_acquire);
        const uint64_t n = std::min<uint64_t>(head - tail, limit);
        for (uint64_t i = 0; i < n; ++i) fn(m_slots[(tail + i) & m_mask]);
        m_tail.store(tail + n, std::memory_order_release);
        return static_cast<size_t>(n);
    }

    [[nodiscard]] bool empty() const {
        return m_head.load(std::memory_order_acquire) == m_tail.load(std::memory_order_acquire);
    }
    /// Drops counted since the previous call.
    uint64_t takeDropped() { return m_dropped.exchange(0, std::memory_order_relaxed); }

    [[nodiscard]] int64_t tid() const { return m_tid; }
    [[nodiscard]] const std::string& threadName() const { return m_name; }
    bool announced = false;        // ThreadName sent (flush thread only)

private:
    static size_t roundUp(size_t n) {
        size_t p = 16;
        while (p < n) p <<= 1;
        return p;
    }

    const int64_t m_tid;
    const std::string m_name;
    std::vector<OpRecord> m_slots;
    const size_t m_mask;
    alignas(64) std::atomic<uint64_t> m_head{0};
    alignas(64) std::atomic<uint64_t> m_tail{0};
    std::atomic<uint64_t> m_dropped{0};
};

} // namespace stallscope::torchrec::detail
