#include "stallscope_cupti_markers.h"

namespace stallscope::capture::cupti {

size_t MarkerPairer::start(uint32_t id, OpenMarker marker) {
    auto [it, inserted] = m_open.insert_or_assign(id, std::move(marker));
    (void)it;
    if (inserted) m_order.push_back(id);
    size_t forgotten = 0;
    while (m_open.size() > m_capacity && !m_order.empty()) {
        const uint32_t oldest = m_order.front();
        m_order.pop_front();
        forgotten += m_open.erase(oldest);
    }
    // Ids closed behind a long-open range stay in m_order; drop them once they outnumber
    // the open ones (amortised O(1) per START).
    if (m_order.size() > 2 * m_open.size() + 64) {
        std::deque<uint32_t> kept;
        for (uint32_t o : m_order)
            if (m_open.contains(o)) kept.push_back(o);
        m_order.swap(kept);
    }
    return forgotten;
}

std::optional<OpenMarker> MarkerPairer::end(uint32_t id) {
    auto it = m_open.find(id);
    if (it == m_open.end()) return std::nullopt;
    OpenMarker m = std::move(it->second);
    m_open.erase(it);
    while (!m_order.empty() && !m_open.contains(m_order.front())) m_order.pop_front();
    return m;
}

std::string MarkerPairer::displayName(const char* message, const char* domain) {
    std::string name = message != nullptr && message[0] != '\0' ? message : "<unnamed NVTX range>";
    if (domain != nullptr && domain[0] != '\0') name = std::string(domain) + ": " + name;
    return name;
}

} // namespace stallscope::capture::cupti
