#include "stallscope/model/string_pool.h"

#include <algorithm>
#include <cstring>

namespace stallscope::model {

namespace {
constexpr size_t kBlockBytes = 256 * 1024;

inline uint64_t load64(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t r = static_cast<__uint128_t>(a) * b;
    return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}
} // namespace

uint64_t StringPool::hash(std::string_view s) {
    // 8 bytes at a time multiply-xorshift (wyhash-style constants); names are long
    // templated kernel signatures, so per-byte hashing would dominate interning.
    constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = k0 ^ (s.size() * k1);
    const char* p = s.data();
    size_t n = s.size();
    while (n >= 8) {
        h = mix(h ^ load64(p), k1);
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    if (n) std::memcpy(&tail, p, n);
    return mix(h ^ tail, k0 ^ n);
}

StringPool::StringPool() {
    m_slots.assign(1024, 0);
    intern(std::string_view());
}

std::string_view StringPool::store(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > kBlockBytes / 4) {
        std::unique_ptr<char[]> big(new char[s.size()]);
        std::memcpy(big.get(), s.data(), s.size());
        std::string_view v(big.get(), s.size());
        m_bigStrings.push_back(std::move(big));
        m_textBytes += s.size();
        return v;
    }
    if (m_blocks.empty() || m_blockUsed + s.size() > kBlockBytes) {
        m_blocks.emplace_back(new char[kBlockBytes]);  // not zeroed: only written bytes are read
        m_blockUsed = 0;
        m_textBytes += kBlockBytes;
    }
    char* dst = m_blocks.back().get() + m_blockUsed;
    std::memcpy(dst, s.data(), s.size());
    m_blockUsed += s.size();
    return {dst, s.size()};
}

void StringPool::grow() {
    std::vector<uint32_t> slots(m_slots.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (uint32_t id = 0; id < m_views.size(); ++id) {
        size_t i = m_hashes[id] & mask;
        while (slots[i] != 0) i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    m_slots.swap(slots);
}

StringId StringPool::find(std::string_view s) const {
    const uint32_t h = static_cast<uint32_t>(hash(s));
    const size_t mask = m_slots.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const uint32_t slot = m_slots[i];
        if (slot == 0) return {};
        const uint32_t id = slot - 1;
        if (m_hashes[id] == h && m_views[id] == s) return StringId(id);
    }
}

StringId StringPool::intern(std::string_view s) {
    const uint32_t h = static_cast<uint32_t>(hash(s));
    size_t mask = m_slots.size() - 1;
    size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
        const uint32_t slot = m_slots[i];
        if (slot == 0) break;
        const uint32_t id = slot - 1;
        if (m_hashes[id] == h && m_views[id] == s) return StringId(id);
    }
    const uint32_t id = static_cast<uint32_t>(m_views.size());
    m_views.push_back(store(s));
    m_hashes.push_back(h);
    m_slots[i] = id + 1;
    if ((m_views.size() + 1) * 2 > m_slots.size()) grow();
    return StringId(id);
}

void StringPool::clear() {
    if (m_blocks.size() > 1) m_blocks.resize(1);
    m_bigStrings.clear();
    m_textBytes = m_blocks.size() * kBlockBytes;
    m_blockUsed = 0;
    m_views.clear();
    m_hashes.clear();
    std::fill(m_slots.begin(), m_slots.end(), 0u);
    intern(std::string_view());
}

size_t StringPool::memoryBytes() const {
    return m_textBytes + m_views.capacity() * sizeof(std::string_view) +
           m_hashes.capacity() * sizeof(uint32_t) + m_slots.capacity() * sizeof(uint32_t);
}

} // namespace stallscope::model
