#pragma once
// A text buffer with one spare byte before the text and room after it, so the block
// parser can frame it as "[" + text + "]" + padding for simdjson without copying.
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace stallscope::importers {

class FramedText {
public:
    static constexpr size_t kHead = 1;
    static constexpr size_t kTail = 1 + 64;  // ']' + SIMDJSON_PADDING (checked in the parser)

    /// `headroom` bytes before the text let a caller prepend a short prefix in place.
    explicit FramedText(size_t capacity, size_t headroom = 0)
        : m_buf(new char[kHead + headroom + capacity + kTail]), m_capacity(capacity),
          m_headroom(kHead + headroom), m_start(m_headroom) {}

    char* data() { return m_buf.get() + m_start; }
    [[nodiscard]] const char* data() const { return m_buf.get() + m_start; }
    [[nodiscard]] size_t size() const { return m_size; }
    [[nodiscard]] size_t capacity() const { return m_capacity; }
    void setSize(size_t n) { m_size = n; }
    [[nodiscard]] std::string_view view() const { return {data(), m_size}; }

    /// Puts `prefix` in front of the text without moving it; false when it does not fit.
    bool prepend(std::string_view prefix) {
        if (prefix.size() + kHead > m_start) return false;
        m_start -= prefix.size();
        std::memcpy(data(), prefix.data(), prefix.size());
        m_size += prefix.size();
        return true;
    }
    /// Back to an empty buffer of the original capacity (for reuse).
    void reset() {
        m_start = m_headroom;
        m_size = 0;
    }

private:
    std::unique_ptr<char[]> m_buf;  // not zero-initialised: only [0, size) is meaningful
    size_t m_capacity;
    size_t m_headroom;
    size_t m_start;
    size_t m_size = 0;
};

} // namespace stallscope::importers
