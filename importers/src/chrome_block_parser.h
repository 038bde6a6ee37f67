#pragma once
// Parses one block of the traceEvents array (text cut at a line boundary) with
// simdjson on-demand, extracting each event's fields into an EventBatch.
// A block is parsed as "[" + text + "]": complete events are taken, an event cut by
// the block's end is reported as Truncated so the caller carries it to the next block.
#include "event_batch.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace stallscope::importers {

class ChromeBlockParser {
public:
    static constexpr uint64_t kNone = UINT64_MAX;

    enum class End {
        Consumed,     // every byte of the text belonged to complete events
        Truncated,    // the text ends inside an event; `stop` is where it begins
        ArrayClosed,  // the event array's ']' is inside the text; `afterArray` follows it
        SyntaxError,  // invalid JSON at `errorOffset`
        NoStart,      // speculative parse found no line starting an event
    };

    struct Outcome {
        End end = End::Consumed;
        uint64_t firstElement = kNone;  // absolute offset of the first event parsed
        uint64_t lastElementEnd = kNone; // absolute offset just after the last element parsed
        uint64_t stop = 0;              // absolute offset of the first unparsed byte
        uint64_t afterArray = 0;
        uint64_t errorOffset = 0;
        std::string error;
    };

    ChromeBlockParser();
    ~ChromeBlockParser();
    ChromeBlockParser(const ChromeBlockParser&) = delete;
    ChromeBlockParser& operator=(const ChromeBlockParser&) = delete;

    /// `text` starts `baseOffset` bytes into the input. With `knownStart` the text begins
    /// at an event boundary (possibly after whitespace/commas); otherwise parsing starts at
    /// the first line whose first non-blank character is '{' (validated by the caller).
    /// A string left open at the end of `text` (no line break to cut at) is reported as
    /// Truncated at the start: the caller retries with more text, or reports truncation.
    Outcome parse(std::string_view text, uint64_t baseOffset, bool knownStart, EventBatch& out);
    /// The same on a mutable buffer, without copying: text[-1] and text[len] are written and
    /// restored, text[len + 1 .. len + 1 + SIMDJSON_PADDING) must be readable (FramedText).
    /// Invalid UTF-8 is replaced in place and counted in `textDiagnostics`.
    Outcome parseInPlace(char* text, size_t len, uint64_t baseOffset, bool knownStart, EventBatch& out,
                         model::Diagnostics& textDiagnostics);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Position of the ']' that closes an array whose elements `text` starts with (brackets
/// and braces counted outside strings), or npos.
size_t findArrayClose(std::string_view text);

/// Position of the first line start (at or after `from`) whose first non-blank byte is
/// '{', or npos. Position 0 counts as a line start.
size_t findEventLineStart(std::string_view text, size_t from = 0);

} // namespace stallscope::importers
