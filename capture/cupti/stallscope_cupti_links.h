#pragma once
// The bookkeeping that ties records together across buffers and flushes:
//
//  * ExternalCorrelations: CUPTI's EXTERNAL_CORRELATION records say "API call with
//    correlation id C ran inside external id E" (E pushed by PyTorch's profiler or our
//    LibTorch recorder with cuptiActivityPushExternalCorrelationId). Every activity with
//    correlation C then carries external_id E — the runtime call and the GPU work it
//    launched. When several kinds name the same call, CUSTOM0 (operators) wins over
//    UNKNOWN, CUSTOM1 (user annotations), CUSTOM2 and OPENACC. Bounded: the oldest ids go.
//  * ContextDevices: context id -> device id, learnt from CONTEXT records and from every
//    kernel/copy/memset (which carry both); synchronisation records only carry a context.
//  * ThreadRegistry: CUPTI's threadId is the low 32 bits of pthread_self() (Kineto maps it
//    the same way), not the OS thread id every other source (Kineto's JSON, our recorder,
//    /proc) uses. The injection
//    registers each thread that calls CUDA (from a CUPTI callback on that thread) with
//    both ids and its name; activities carry the OS id. An id never registered is kept
//    as is (CUPTI builds that report the OS id need no mapping).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace stallscope::capture::cupti {

class ExternalCorrelations {
public:
    explicit ExternalCorrelations(size_t capacity = 1u << 20) : m_capacity(capacity) {}

    /// `externalKind` is a CUpti_ExternalCorrelationKind.
    void add(uint32_t correlationId, uint32_t externalKind, uint64_t externalId);
    /// 0 when the correlation id has no external id.
    [[nodiscard]] uint64_t find(uint32_t correlationId) const;
    [[nodiscard]] size_t size() const { return m_map.size(); }

private:
    struct Entry {
        uint64_t id;
        int rank;
    };
    size_t m_capacity;
    std::unordered_map<uint32_t, Entry> m_map;
    std::deque<uint32_t> m_order;
};

class ContextDevices {
public:
    void add(uint32_t contextId, uint32_t deviceId) { m_map[contextId] = deviceId; }
    /// -1 when unknown.
    [[nodiscard]] int32_t device(uint32_t contextId) const;

private:
    std::unordered_map<uint32_t, uint32_t> m_map;
};

/// CUPTI's thread key for a pthread_t: its low 32 bits (what CUPTI reports as threadId).
uint32_t cuptiThreadKey(unsigned long pthreadSelf);

class ThreadRegistry {
public:
    struct Thread {
        uint32_t cuptiId;
        int64_t osTid;
        std::string name;
    };
    using Map = std::unordered_map<uint32_t, int64_t>;

    /// Thread-safe; a second registration of the same CUPTI id updates it.
    void add(uint32_t cuptiId, int64_t osTid, std::string name);
    /// Threads registered since the last call (for ThreadName messages).
    std::vector<Thread> takeNew();
    /// CUPTI id -> OS tid, for one flush's conversion.
    [[nodiscard]] Map snapshot() const;

private:
    mutable std::mutex m_mutex;
    Map m_map;
    std::vector<Thread> m_new;
};

} // namespace stallscope::capture::cupti
