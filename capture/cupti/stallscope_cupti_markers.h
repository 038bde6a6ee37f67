#pragma once
// NVTX ranges from CUPTI MARKER records. CUPTI reports a push/pop or start/end range as two
// records with the same id: a START (with the message, domain and thread) and an END (the
// time; name is NULL). They can arrive in different buffers and flushes, so open ranges
// wait here until their end comes; a range left open (a long epoch range) waits as long as
// it takes. Bounded: past `capacity` open ranges the oldest is forgotten and counted.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

namespace stallscope::capture::cupti {

struct OpenMarker {
    std::string name; // "domain: message" outside the default domain
    int64_t startNs = 0;
    int64_t pid = 0;
    int64_t tid = 0;
};

class MarkerPairer {
public:
    explicit MarkerPairer(size_t capacity = 65536) : m_capacity(capacity) {}

    /// Returns how many open ranges were forgotten to make room (0 or 1).
    size_t start(uint32_t id, OpenMarker marker);
    /// The START this END closes; nullopt when none is open with that id.
    std::optional<OpenMarker> end(uint32_t id);
    [[nodiscard]] size_t open() const { return m_open.size(); }

    /// The name a marker is shown with: the message, prefixed by its domain when it has one.
    static std::string displayName(const char* message, const char* domain);

private:
    size_t m_capacity;
    std::unordered_map<uint32_t, OpenMarker> m_open;
    std::deque<uint32_t> m_order; // START order, for forgetting the oldest (lazily pruned)
};

} // namespace stallscope::capture::cupti
