#pragma once
// Interned strings with 32-bit ids. Views stay valid for the pool's lifetime
// (storage grows in blocks that never move).
#include "stallscope/model/ids.h"

#include <memory>
#include <string_view>
#include <vector>

namespace stallscope::model {

class StringPool {
public:
    StringPool();
    StringPool(StringPool&&) noexcept = default;
    StringPool& operator=(StringPool&&) noexcept = default;
    StringPool(const StringPool&) = delete;
    StringPool& operator=(const StringPool&) = delete;

    /// Returns the id of `s`, adding it when new. Id 0 is always the empty string.
    StringId intern(std::string_view s);
    /// Returns the id of `s` or an invalid id; never adds.
    [[nodiscard]] StringId find(std::string_view s) const;
    /// The text of `id`; an invalid id reads as the empty string.
    [[nodiscard]] std::string_view view(StringId id) const {
        return id.valid() ? m_views[id.index()] : std::string_view();
    }
    [[nodiscard]] size_t size() const { return m_views.size(); }
    /// Bytes held (text blocks, views, hash table).
    [[nodiscard]] size_t memoryBytes() const;
    /// Forgets every string (ids restart at 1) but keeps one storage block and the table,
    /// so a pool reused for many small batches does not allocate again.
    void clear();

    static uint64_t hash(std::string_view s);

private:
    std::string_view store(std::string_view s);
    void grow();

    std::vector<std::string_view> m_views;
    std::vector<uint32_t> m_hashes;        // low 32 bits of each string's hash, by id
    std::vector<uint32_t> m_slots;         // open addressing: id + 1, 0 = empty
    std::vector<std::unique_ptr<char[]>> m_blocks;     // kBlockBytes each, the last one filling
    std::vector<std::unique_ptr<char[]>> m_bigStrings; // strings too large for a block
    size_t m_blockUsed = 0;
    size_t m_textBytes = 0;
};

} // namespace stallscope::model
