#pragma once
// Error values (no exceptions across library boundaries): what failed, where, and why.
// Functions that produce a value return Result<T>; those that only succeed or fail (a
// report written, a file committed) return Status. The importers, the loader and the
// report writers use them; lower-level callbacks (model::EventSource, the capture
// protocol's socket helpers) keep a bool and a message.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace stallscope::base {

enum class ErrorKind {
    NotFound,         // the path does not exist
    Unreadable,       // I/O error, permission
    Empty,            // zero bytes
    UnknownFormat,    // content is not a format Stallscope reads
    InvalidJson,      // JSON syntax error
    InvalidStructure, // valid JSON, wrong shape (no traceEvents array, wrong top-level type)
    Truncated,        // the input ends before anything usable was read
    CorruptGzip,      // not a valid gzip stream
    TooLarge,         // a single event or header beyond the supported size
    NoTraces,         // a folder without trace files
    Cancelled,        // the caller asked to stop
    OverMemoryBudget, // the model would need more memory than ImportOptions::memoryBudgetBytes
    Unwritable,       // an output could not be created, written or committed
    InvalidArgument,  // the call cannot be done with these inputs (nothing to report, ...)
    Unsupported,      // not in this build or not for this format (PDF without Qt, ...)
    StartFailed,      // a program, socket or device a recording needs could not be started
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

/// Success, or an Error: the Result of an operation without a value.
class [[nodiscard]] Status {
public:
    Status() = default; // success
    Status(Error error) : m_error(std::move(error)), m_failed(true) {}

    [[nodiscard]] bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    /// The error (only when !ok()).
    [[nodiscard]] const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

} // namespace stallscope::base
