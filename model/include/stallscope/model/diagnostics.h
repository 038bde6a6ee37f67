#pragma once
// Per-event problems found while importing: counted per kind, with the first few
// examples and their byte offsets, so nothing is dropped silently.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::model {

enum class Severity : uint8_t { Info, Warning, Error };

enum class DiagnosticKind : uint8_t {
    MissingField,         // a required field (ph, ts) is absent: event skipped
    WrongType,            // a field has the wrong JSON type: event skipped or field ignored
    NotANumber,           // "N/A" or another non-numeric string where a number belongs
    NumberOutOfRange,     // a number beyond int64 nanoseconds: event skipped
    NegativeDuration,     // dur < 0: kept with duration 0
    MissingDuration,      // X event without dur: kept with duration 0
    EventNotObject,       // an element of traceEvents that is not an object: skipped
    UnsupportedPhase,     // a phase Stallscope does not model (async b/e/n, samples, ...): counted,
                          // skipped
    UnmatchedEnd,         // an E event with no open B on its thread: skipped
    UnterminatedBegin,    // a B event never closed: ends at the last timestamp of the trace
    CrossingSlices,       // a slice starts inside another on the same row and ends after it
    UnboundFlow,          // a flow endpoint with no slice to attach to, or a flow with one end only
    DuplicateCorrelation, // two launch calls with the same correlation id
    InvalidUtf8,          // bytes that are not UTF-8: replaced by '?'
    TruncatedInput,       // the input ends inside an event or before the event array closes
    CorruptCompression,   // the gzip stream is damaged: data after the damage is lost
    UnterminatedArray,    // the event array has no closing ']' (allowed by the Chrome format)
    UnknownTopLevelKey,   // top-level key that is not understood (kept as raw metadata)
    InvalidMetadata,      // a metadata value Stallscope could not read
    TimeClamped,          // a time beyond ±kModelTimeLimitNs (after the time base): clamped there
    InvalidEscape,        // a JSON escape that is not UTF-16 (lone surrogate, \x): replaced by '?'
    OverlappingGpuWork,   // GPU work that starts inside another on one stream and ends after it
                          // (programmatic dependent launch, or timestamps of different
                          // engines): kept, busy time a union
    SourceNotRead,        // records of another profiler's format that are not read (counted)
    SourceLacks,          // what another profiler's file does not hold (a table, a field)
    Count
};

struct DiagnosticInfo {
    std::string_view id;      // stable, for JSON output and tests
    Severity severity;
    std::string_view summary; // plain words for users
};

const DiagnosticInfo& diagnosticInfo(DiagnosticKind kind);

struct DiagnosticExample {
    uint64_t byteOffset = 0;  // in the (uncompressed) input; UINT64_MAX when not applicable
    std::string detail;
};

class Diagnostics {
public:
    static constexpr size_t kMaxExamples = 5;
    static constexpr uint64_t kNoOffset = UINT64_MAX;

    void add(DiagnosticKind kind, uint64_t byteOffset, std::string_view detail);
    void addCount(DiagnosticKind kind, uint64_t count);
    void merge(const Diagnostics& other);

    [[nodiscard]] uint64_t count(DiagnosticKind kind) const {
        return m_entries[static_cast<size_t>(kind)].count;
    }
    [[nodiscard]] const std::vector<DiagnosticExample>& examples(DiagnosticKind kind) const {
        return m_entries[static_cast<size_t>(kind)].examples;
    }
    [[nodiscard]] uint64_t total() const;
    [[nodiscard]] bool empty() const { return total() == 0; }

private:
    struct Entry {
        uint64_t count = 0;
        std::vector<DiagnosticExample> examples;
    };
    std::array<Entry, static_cast<size_t>(DiagnosticKind::Count)> m_entries;
};

} // namespace stallscope::model
