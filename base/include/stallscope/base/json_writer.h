#pragma once
// A small streaming JSON writer (output only) with correct string escaping, so names
// from other people's traces can never break the document.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::base {

class JsonWriter {
public:
    explicit JsonWriter(bool pretty = true) : m_pretty(pretty) {}

    JsonWriter& beginObject();
    JsonWriter& endObject();
    JsonWriter& beginArray();
    JsonWriter& endArray();
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(int64_t v);
    JsonWriter& value(uint64_t v);
    JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
    JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
    JsonWriter& value(double v, int decimals = 6);
    JsonWriter& value(bool v);
    JsonWriter& null();
    /// Nanoseconds written as microseconds with exactly three decimals (exact, no double).
    JsonWriter& micros(int64_t ns);
    /// Pre-formatted JSON (a number text, a raw args value).
    JsonWriter& raw(std::string_view json);

    [[nodiscard]] const std::string& str() const { return m_out; }

    static void escape(std::string& out, std::string_view s);

private:
    void separator();
    void newline();

    std::string m_out;
    std::vector<bool> m_first;  // per open container: no element yet
    bool m_pretty;
    bool m_afterKey = false;
};

/// "12.345" from 12345 ns.
std::string formatMicros(int64_t ns);

} // namespace stallscope::base
