#pragma once
// Error values (no exceptions across library boundaries): what failed, where, and why.
// The importers return them for fatal input problems; other layers use the same type.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace stallscope::base {

enum class ErrorKind {
    NotFound,        // the path does not exist
    Unreadable,      // I/O error, permission
    Empty,           // zero bytes
    UnknownFormat,   // content is not a format Stallscope reads
    InvalidJson,     // JSON syntax error
    InvalidStructure,// valid JSON, wrong shape (no traceEvents array, wrong top-level type)
    Truncated,       // the input ends before anything usable was read
    CorruptGzip,     // not a valid gzip stream
    TooLarge,        // a single event or header beyond the supported size
    NoTraces,        // a folder without trace files
    Cancelled,       // the caller asked to stop
    OverMemoryBudget,// the model would need more memory than ImportOptions::memoryBudgetBytes
};

const char* errorKindName(ErrorKind kind);

struct Error {
    ErrorKind kind = ErrorKind::UnknownFormat;
    std::string message;          // what, where, what was expected
    uint64_t byteOffset = UINT64_MAX;
};

template <class T>
class Result {
public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    [[nodiscard]] bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() { return std::get<0>(m_v); }
    const T& value() const { return std::get<0>(m_v); }
    T& operator*() { return value(); }
    T* operator->() { return &value(); }
    const Error& error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

} // namespace stallscope::base
