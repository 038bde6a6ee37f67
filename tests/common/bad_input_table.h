#pragma once
// The bad-input table: files that are not (quite) traces, and what each must give: a
// clear error (kind + a fragment of the message) or a counted diagnostic with the
// events that survive. Shared by the importer's test and the GUI's (the same files
// opened in the main window must give a message there and keep the previous document).
#include "gzip_text.h"

#include "stallscope/importers/result.h"
#include "stallscope/model/diagnostics.h"

#include <string>
#include <vector>

// Raw strings with delimiters are hidden from moc (Qt 6.4's moc cannot tokenize them).
#ifndef Q_MOC_RUN
namespace stallscope::test {

struct BadInput {
    std::string name;
    std::string bytes;
    bool ok = false;                      // imports (with diagnostics) rather than failing
    importers::ErrorKind error = importers::ErrorKind::UnknownFormat;  // when !ok
    model::DiagnosticKind diagnostic = model::DiagnosticKind::Count;   // when ok (Count: none expected)
    std::string fragment;                 // in the error message / the first examples
    int slices = 0;                       // when ok: slices kept (-1: some)
};

namespace bad_input_detail {

using importers::ErrorKind;
using model::DiagnosticKind;

inline std::string manyEvents(int n) {
    std::string s = "{\"traceEvents\": [\n";
    for (int i = 0; i < n; ++i) {
        s += "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(i % 50) +
             "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(1000 + i * 10) +
             ", \"dur\": 5, \"args\": {\"External id\": " + std::to_string(i) + "}}";
        s += i + 1 < n ? ",\n" : "\n";
    }
    return s + "]}\n";
}

inline std::string deepArgs(int depth) {
    return "[{\"ph\": \"X\", \"name\": \"deep\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"x\": " +
           std::string(depth, '[') + std::string(depth, ']') + "}}]";
}

inline constexpr const char* kOne = R"J({"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1})J";

} // namespace bad_input_detail

inline std::vector<BadInput> badInputTable() {
    using namespace bad_input_detail;
    std::vector<BadInput> out;
    auto fail = [&out](const char* name, const std::string& b, ErrorKind k, const char* frag) {
        out.push_back({name, b, false, k, DiagnosticKind::Count, frag, 0});
    };
    auto diag = [&out](const char* name, const std::string& b, DiagnosticKind d, const char* frag, int slices) {
        out.push_back({name, b, true, ErrorKind::UnknownFormat, d, frag, slices});
    };
    const std::string good = manyEvents(200);
    const std::string gz = test::gzipText(good);

    fail("empty file", "", ErrorKind::Empty, "empty");
    fail("one byte: not JSON", "x", ErrorKind::UnknownFormat, "not a trace");
    fail("one byte: open object", "{", ErrorKind::InvalidStructure, "traceEvents");
    diag("one byte: open array", "[", DiagnosticKind::UnterminatedArray, "closing", 0);
    fail("whitespace only", " \n\t ", ErrorKind::InvalidStructure, "whitespace");
    fail("text", "hello world", ErrorKind::UnknownFormat, "byte 0");
    fail("top level string", "\"traceEvents\"", ErrorKind::UnknownFormat, "not a trace");
    fail("top level number", "42", ErrorKind::UnknownFormat, "not a trace");
    fail("traceEvents not an array", R"J({"traceEvents": 5})J", ErrorKind::InvalidStructure, "must be an array");
    fail("object without traceEvents", R"J({"schemaVersion": 1})J", ErrorKind::InvalidStructure, "no \"traceEvents\"");
    fail("truncated inside the first event", R"J({"traceEvents": [{"ph": "X", "na)J",
         ErrorKind::Truncated, "first event");
    diag("truncated JSON", good.substr(0, good.size() / 2), DiagnosticKind::TruncatedInput, "inside an event", -1);
    diag("truncated gzip", gz.substr(0, gz.size() * 6 / 10), DiagnosticKind::TruncatedInput, "", -1);
    fail("gzip of garbage", std::string("\x1f\x8b\x08\x00garbage-garbage-garbage", 27), ErrorKind::CorruptGzip,
         "gzip");
    fail("syntax error inside an event", R"J([{"ph": "X",, "ts": 1}])J", ErrorKind::InvalidJson, "byte");
    fail("raw control character in a string", std::string("[{\"ph\": \"X\", \"name\": \"a\x01b\", \"ts\": 1}]"),
         ErrorKind::InvalidJson, "invalid JSON");
    diag("missing ts", R"J([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "dur": 1}, )J" + std::string(kOne) + "]",
         DiagnosticKind::MissingField, "ts", 1);
    diag("missing ph", R"J([{"name": "a", "ts": 1}, )J" + std::string(kOne) + "]", DiagnosticKind::MissingField, "ph", 1);
    diag("ph of the wrong type", R"J([{"ph": 5, "name": "a", "ts": 1}, )J" + std::string(kOne) + "]",
         DiagnosticKind::WrongType, "ph", 1);
    diag("name of the wrong type", R"J([{"ph": "X", "name": {"a": 1}, "pid": 1, "tid": 1, "ts": 1, "dur": 1}])J",
         DiagnosticKind::WrongType, "name", 1);
    diag("pid of the wrong type", R"J([{"ph": "X", "name": "a", "pid": [1], "tid": 1, "ts": 1, "dur": 1}])J",
         DiagnosticKind::WrongType, "pid", 1);
    diag("missing dur", R"J([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1}])J", DiagnosticKind::MissingDuration,
         "dur", 1);
    diag("negative duration", R"J([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": -5}])J",
         DiagnosticKind::NegativeDuration, "-5000", 1);
    diag("ts beyond int64 ns", R"J([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 99999999999999999999, "dur": 1}, )J" +
         std::string(kOne) + "]", DiagnosticKind::NumberOutOfRange, "ts", 1);
    diag("dur beyond range", R"J([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1e400}])J",
         DiagnosticKind::NumberOutOfRange, "dur", 1);
    diag("pid beyond int64 becomes a named row", R"J([{"ph": "X", "name": "a", "pid": 99999999999999999999, "tid": 1, "ts": 1, "dur": 1}])J",
         DiagnosticKind::Count, "", 1);
    diag("non-UTF-8 name", std::string("[{\"ph\": \"X\", \"name\": \"bad\xff\xfe\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]"),
         DiagnosticKind::InvalidUtf8, "replaced", 1);
    // JSON escapes that are not UTF-16 (a lone surrogate, "\x"): the event stays, the
    // escapes become '?' (was: the whole import failed on one name).
    diag(
        "lone surrogate and unknown escape in names",
        R"J([{"ph": "X", "name": "bad \udc80 low", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, )J"
        R"J({"ph": "X", "name": "\ud83d\ude00 pair ok, \ud800 high alone, \x", "pid": 1, "tid": 1, "ts": 3, "dur": 1}, )J" +
            std::string(kOne) + "]",
        DiagnosticKind::InvalidEscape, "invalid escape", 3);
    diag("elements that are not objects", "[1, \"two\", [3], null, " + std::string(kOne) + "]",
         DiagnosticKind::EventNotObject, "", 1);
    diag("unsupported phase", R"J([{"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 1}, )J" + std::string(kOne) + "]",
         DiagnosticKind::UnsupportedPhase, "\"P\"", 1);
    diag("unmatched E", R"J([{"ph": "E", "pid": 1, "tid": 1, "ts": 5}, )J" + std::string(kOne) + "]",
         DiagnosticKind::UnmatchedEnd, "", 1);
    diag("unsorted events", R"J([{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 9, "dur": 1}, )J" + std::string(kOne) + "]",
         DiagnosticKind::Count, "", 2);
    diag("object never closed", R"J({"traceEvents": [)J" + std::string(kOne) + "]", DiagnosticKind::TruncatedInput,
         "trace object", 1);
    diag("event array never closed", R"J({"traceEvents": [)J" + std::string(kOne) + ",\n", DiagnosticKind::TruncatedInput,
         "traceEvents array", 1);
    // An unclosed string after the array's ']' on its own line: the events are kept and
    // the envelope reports the text (was: cut at the line break, the ']' was missed and
    // the array counted as truncated).
    diag("unclosed string after the closed array",
         R"J({"traceEvents": [)J"
         "\n" +
             std::string(kOne) + "\n]\"",
         DiagnosticKind::InvalidMetadata, "after the event array", 1);
    diag("gzip with trailing garbage", gz + "trailing", DiagnosticKind::Count, "", 200);
    // Nesting inside args is kept raw, not walked: the event loads (args read back
    // later report the depth; see deepArgsReadBack).
    diag("deep nesting in args", deepArgs(5000), DiagnosticKind::Count, "", 1);
    // An array without a single event object is someone else's JSON, not an empty trace.
    fail("deep nesting as an event", "[" + std::string(5000, '[') + std::string(5000, ']') + "]",
         ErrorKind::InvalidStructure, "the only element of the array is not an event object");
    fail("an array of numbers and strings", R"J([1, "two", null, true])J",
         ErrorKind::InvalidStructure,
         "byte 1: not a trace: none of the 4 elements of the array is an event object");
    fail("traceEvents of numbers", R"J({"traceEvents": [1, 2]})J", ErrorKind::InvalidStructure,
         "none of the 2 elements of the traceEvents array is an event object");
    return out;
}

} // namespace stallscope::test
#endif
