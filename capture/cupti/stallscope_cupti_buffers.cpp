#include "stallscope_cupti_buffers.h"

#include <algorithm>
#include <cstdlib>

namespace stallscope::capture::cupti {

namespace {

constexpr size_t kAlign = 8;

std::string_view causeText(DropLedger::Cause c) {
    switch (c) {
    case DropLedger::Cause::CuptiBufferFull:
        return "dropped by CUPTI (activity buffers full)";
    case DropLedger::Cause::NoTimestamp:
        return "without timestamps from CUPTI";
    case DropLedger::Cause::MarkerWithoutStart:
        return "NVTX range ends without a start";
    case DropLedger::Cause::MarkerOverflow:
        return "NVTX ranges never closed (too many open at once)";
    case DropLedger::Cause::NotDelivered:
        return "not delivered to the recorder";
    case DropLedger::Cause::kCount:
        break;
    }
    return "lost";
}

std::string mib(size_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

} // namespace

BufferPool::BufferPool(size_t bufferBytes, size_t maxBuffers)
    : m_bufferBytes((std::max<size_t>(bufferBytes, kAlign) + kAlign - 1) / kAlign * kAlign),
      m_maxBuffers(std::max<size_t>(maxBuffers, 1)) {}

BufferPool::~BufferPool() {
    for (uint8_t* b : m_all) std::free(b);
}

uint8_t* BufferPool::acquire() {
    std::lock_guard lock(m_mutex);
    if (!m_free.empty()) {
        uint8_t* b = m_free.back();
        m_free.pop_back();
        return b;
    }
    if (m_all.size() >= m_maxBuffers) {
        ++m_exhausted;
        return nullptr;
    }
    auto* b = static_cast<uint8_t*>(std::aligned_alloc(kAlign, m_bufferBytes));
    if (b == nullptr) {
        ++m_exhausted;
        return nullptr;
    }
    m_all.push_back(b);
    return b;
}

void BufferPool::release(uint8_t* buffer) {
    if (buffer == nullptr) return;
    std::lock_guard lock(m_mutex);
    const bool ours = std::find(m_all.begin(), m_all.end(), buffer) != m_all.end();
    const bool alreadyFree = std::find(m_free.begin(), m_free.end(), buffer) != m_free.end();
    if (!ours || alreadyFree) {
        ++m_foreign;
        return;
    }
    m_free.push_back(buffer);
}

size_t BufferPool::allocated() const {
    std::lock_guard lock(m_mutex);
    return m_all.size();
}

size_t BufferPool::inUse() const {
    std::lock_guard lock(m_mutex);
    return m_all.size() - m_free.size();
}

uint64_t BufferPool::exhaustedCount() const {
    std::lock_guard lock(m_mutex);
    return m_exhausted;
}

uint64_t BufferPool::foreignReleases() const {
    std::lock_guard lock(m_mutex);
    return m_foreign;
}

void DropLedger::add(Cause cause, uint64_t records) {
    if (records == 0 || cause == Cause::kCount) return;
    std::lock_guard lock(m_mutex);
    m_pending[static_cast<size_t>(cause)] += records;
    m_total[static_cast<size_t>(cause)] += records;
}

void DropLedger::addPoolExhausted(uint64_t requests, size_t poolBytes) {
    if (requests == 0) return;
    std::lock_guard lock(m_mutex);
    m_poolPending += requests;
    m_poolTotal += requests;
    m_poolBytes = poolBytes;
}

void DropLedger::report(pb::Batch& batch) {
    std::lock_guard lock(m_mutex);
    uint64_t records = 0;
    std::string reason;
    for (size_t i = 0; i < kCauses; ++i) {
        if (m_pending[i] == 0) continue;
        records += m_pending[i];
        if (!reason.empty()) reason += "; ";
        reason += std::to_string(m_pending[i]) + " " + std::string(causeText(Cause(i)));
        m_pending[i] = 0;
    }
    if (m_poolPending > 0) {
        if (!reason.empty()) reason += "; ";
        reason += "buffer pool (" + mib(m_poolBytes) + ") exhausted " +
                  std::to_string(m_poolPending) + " times";
        m_poolPending = 0;
    }
    if (reason.empty()) return;
    batch.set_dropped_records(batch.dropped_records() + records);
    batch.set_drop_reason(batch.drop_reason().empty() ? reason
                                                      : batch.drop_reason() + "; " + reason);
}

uint64_t DropLedger::total() const {
    std::lock_guard lock(m_mutex);
    uint64_t sum = 0;
    for (uint64_t t : m_total) sum += t;
    return sum;
}

uint64_t DropLedger::total(Cause cause) const {
    std::lock_guard lock(m_mutex);
    return cause == Cause::kCount ? 0 : m_total[static_cast<size_t>(cause)];
}

std::string DropLedger::summary() const {
    std::lock_guard lock(m_mutex);
    std::string s;
    for (size_t i = 0; i < kCauses; ++i) {
        if (m_total[i] == 0) continue;
        if (!s.empty()) s += "; ";
        s += std::to_string(m_total[i]) + " records " + std::string(causeText(Cause(i)));
    }
    if (m_poolTotal > 0) {
        if (!s.empty()) s += "; ";
        s += "buffer pool (" + mib(m_poolBytes) + ") exhausted " + std::to_string(m_poolTotal) +
             " times (raise STALLSCOPE_CAPTURE_BUFFER_MB)";
    }
    return s;
}

} // namespace stallscope::capture::cupti
