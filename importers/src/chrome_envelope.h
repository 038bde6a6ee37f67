#pragma once
// The parts of a Chrome-trace file around the event array: the top-level object's
// other keys (deviceProperties, distributedInfo, baseTimeNanoseconds, ...), which may
// come before or after "traceEvents", and the bare-array form.
#include "stallscope/importers/result.h"
#include "stallscope/model/trace.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace stallscope::importers {

struct EnvelopeHeader {
    bool bareArray = false;
    uint64_t eventsBegin = 0;  // offset just after the '[' that opens the events
};

enum class HeaderStatus { Found, NeedMore, Failed };

struct HeaderOutcome {
    HeaderStatus status = HeaderStatus::NeedMore;
    EnvelopeHeader header;
    Error error;
};

/// Looks for the event array in the first bytes of the input. `complete` says `text` is
/// the whole input. Top-level keys before "traceEvents" are stored in `md`.
HeaderOutcome parseEnvelopeHeader(std::string_view text, bool complete, model::TraceMetadata& md,
                                  model::Diagnostics& diags);

/// Parses what follows the event array's ']' (", \"key\": value, ... }").
/// Problems become diagnostics: the events are already safe.
void parseEnvelopeSuffix(std::string_view text, uint64_t offset, bool bareArray,
                         model::TraceMetadata& md, model::Diagnostics& diags);

} // namespace stallscope::importers
