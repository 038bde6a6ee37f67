#include "stallscope/model/diagnostics.h"

namespace stallscope::model {

const DiagnosticInfo& diagnosticInfo(DiagnosticKind kind) {
    static constexpr std::array<DiagnosticInfo, static_cast<size_t>(DiagnosticKind::Count)> kInfo{{
        {"missing_field", Severity::Error, "events without a required field (skipped)"},
        {"wrong_type", Severity::Error, "fields with the wrong JSON type"},
        {"not_a_number", Severity::Warning, "non-numeric values where a number belongs"},
        {"number_out_of_range", Severity::Error,
         "numbers beyond the representable range (skipped)"},
        {"negative_duration", Severity::Warning, "negative durations (kept with duration 0)"},
        {"missing_duration", Severity::Warning,
         "complete events without a duration (kept with duration 0)"},
        {"event_not_object", Severity::Error,
         "array elements that are not event objects (skipped)"},
        {"unsupported_phase", Severity::Info,
         "events of a phase Stallscope does not model (counted, not shown)"},
        {"unmatched_end", Severity::Warning, "end events without a matching begin (skipped)"},
        {"unterminated_begin", Severity::Warning,
         "begin events that never end (closed at the end of the trace)"},
        {"crossing_slices", Severity::Info,
         "slices that start inside another slice of the same row and end after it"},
        {"unbound_flow", Severity::Info, "flow arrows with no slice at one end (not drawn)"},
        {"duplicate_correlation", Severity::Warning, "launch calls sharing a correlation id"},
        {"invalid_utf8", Severity::Warning, "bytes that are not UTF-8 (replaced by '?')"},
        {"truncated_input", Severity::Error, "the input ends early: the last event is incomplete"},
        {"corrupt_compression", Severity::Error,
         "the compressed stream is damaged: the rest is lost"},
        {"unterminated_array", Severity::Info, "the event array has no closing bracket"},
        {"unknown_top_level_key", Severity::Info, "top-level keys kept as raw metadata"},
        {"invalid_metadata", Severity::Warning, "metadata values that could not be read"},
        {"time_clamped", Severity::Warning,
         "times beyond the year 2116 or before 1824 (clamped there)"},
        {"invalid_escape", Severity::Warning,
         "string escapes that are not UTF-16 (replaced by '?')"},
        {"overlapping_gpu_work", Severity::Info,
         "GPU work starting before the previous work on its stream ends (programmatic "
         "dependent launch, or timestamps of different engines): kept, drawn a lane lower, "
         "busy time counted once"},
        {"source_not_read", Severity::Info,
         "records of the profiler's file that Stallscope does not read (counted)"},
        {"source_lacks", Severity::Info, "what the profiler's file does not record"},
    }};
    return kInfo[static_cast<size_t>(kind)];
}

void Diagnostics::add(DiagnosticKind kind, uint64_t byteOffset, std::string_view detail) {
    Entry& e = m_entries[static_cast<size_t>(kind)];
    ++e.count;
    if (e.examples.size() < kMaxExamples) e.examples.push_back({byteOffset, std::string(detail)});
}

void Diagnostics::addCount(DiagnosticKind kind, uint64_t count) {
    m_entries[static_cast<size_t>(kind)].count += count;
}

void Diagnostics::merge(const Diagnostics& other) {
    for (size_t i = 0; i < m_entries.size(); ++i) {
        Entry& e = m_entries[i];
        const Entry& o = other.m_entries[i];
        e.count += o.count;
        for (const auto& ex : o.examples) {
            if (e.examples.size() >= kMaxExamples) break;
            e.examples.push_back(ex);
        }
    }
}

uint64_t Diagnostics::total() const {
    uint64_t t = 0;
    for (const auto& e : m_entries) t += e.count;
    return t;
}

} // namespace stallscope::model
