#pragma once
// A text buffer with one spare byte before the text and room after it, so the block
// parser can frame it as "[" + text + "]" + padding for simdjson without copying.
#include <cstddef>
#include <memory>
#include <string_view>

namespace stallscope::importers {

class FramedText {
public:
    static constexpr size_t kHead = 1;
    static constexpr size_t kTail = 1 + 64;  // ']' + SIMDJSON_PADDING (checked in the parser)

    explicit FramedText(size_t capacity)
        : m_buf(new char[kHead + capacity + kTail]), m_capacity(capacity) {}

    char* data() { return m_buf.get() + kHead; }
    [[nodiscard]] const char* data() const { return m_buf.get() + kHead; }
    [[nodiscard]] size_t size() const { return m_size; }
    [[nodiscard]] size_t capacity() const { return m_capacity; }
    void setSize(size_t n) { m_size = n; }
    [[nodiscard]] std::string_view view() const { return {data(), m_size}; }

private:
    std::unique_ptr<char[]> m_buf;  // not zero-initialised: only [0, size) is meaningful
    size_t m_capacity;
    size_t m_size = 0;
};

} // namespace stallscope::importers
