#include "stallscope_cupti_links.h"

#include <cupti_activity.h>

namespace stallscope::capture::cupti {

namespace {

// Lower rank wins.
int kindRank(uint32_t kind) {
    switch (kind) {
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0:
        return 0;
    case CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN:
        return 1;
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1:
        return 2;
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2:
        return 3;
    default:
        return 4;
    }
}

} // namespace

void ExternalCorrelations::add(uint32_t correlationId, uint32_t externalKind, uint64_t externalId) {
    if (correlationId == 0 || externalId == 0) return;
    const int rank = kindRank(externalKind);
    auto [it, inserted] = m_map.try_emplace(correlationId, Entry{externalId, rank});
    if (!inserted) {
        if (rank < it->second.rank) it->second = Entry{externalId, rank};
        return;
    }
    m_order.push_back(correlationId);
    while (m_map.size() > m_capacity && !m_order.empty()) {
        m_map.erase(m_order.front());
        m_order.pop_front();
    }
}

uint64_t ExternalCorrelations::find(uint32_t correlationId) const {
    auto it = m_map.find(correlationId);
    return it == m_map.end() ? 0 : it->second.id;
}

int32_t ContextDevices::device(uint32_t contextId) const {
    auto it = m_map.find(contextId);
    return it == m_map.end() ? -1 : static_cast<int32_t>(it->second);
}

uint32_t cuptiThreadKey(unsigned long pthreadSelf) {
    return static_cast<uint32_t>(pthreadSelf & 0xFFFFFFFFul);
}

void ThreadRegistry::add(uint32_t cuptiId, int64_t osTid, std::string name) {
    std::lock_guard lock(m_mutex);
    m_map[cuptiId] = osTid;
    m_new.push_back(Thread{cuptiId, osTid, std::move(name)});
}

std::vector<ThreadRegistry::Thread> ThreadRegistry::takeNew() {
    std::lock_guard lock(m_mutex);
    std::vector<Thread> out;
    out.swap(m_new);
    return out;
}

ThreadRegistry::Map ThreadRegistry::snapshot() const {
    std::lock_guard lock(m_mutex);
    return m_map;
}

} // namespace stallscope::capture::cupti
