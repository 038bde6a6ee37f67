#pragma once
// One capture activity -> one Kineto-style trace event: its JSON text (as torch.profiler
// writes it: the same categories, rows and args) and its row for the model. Both come from
// the same values, so the model a session builds equals the one the importer reads back
// from the written file.
#include "stallscope_capture.pb.h"

#include "stallscope/model/event_kind.h"
#include "stallscope/model/trace.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace stallscope::capture::detail {

/// An event on its way to the model: a slice or an instant, and where its text is.
struct PendingEvent {
    bool instant = false;
    bool gpuRow = false;          // pid is a device, tid a stream
    bool launchSide = false;      // a runtime/driver call (flow start when it launched work)
    model::EventKind kind = model::EventKind::Other;
    std::string_view name;        // stable storage: a source's string table or a literal
    std::string_view category;
    int64_t pid = 0, tid = 0;
    int64_t start = 0, dur = 0;
    uint32_t correlation = model::SliceTable::kNoCorrelation;
    uint64_t extra = model::SliceExtra::kNone;
    uint64_t srcOffset = 0;       // in the batch text until written, then in the log
    uint32_t srcLength = 0;
};

struct EncodeInput {
    const pb::Activity* activity = nullptr;
    std::string_view name;        // the activity's name (resolved from the string table)
    std::string_view category;    // a category override (Activity.category_id), or empty
    uint32_t correlation = 0;     // 0: none (already renumbered when needed)
    int64_t defaultPid = 0;       // the source's process, for activities without a pid
    int64_t baseNs = 0;           // the file's baseTimeNanoseconds
    const pb::Device* device = nullptr;  // properties of activity.device(), when known
};

/// Appends ",\n" and the event's JSON to `text` and describes the event in `ev` (srcOffset
/// relative to `text`). False with `problem` set when the activity cannot be used.
bool encodeActivity(const EncodeInput& in, std::string& text, PendingEvent& ev, std::string& problem);

/// "Memcpy HtoD (Pageable -> Device)" (Kineto's names); views into a static table.
std::string_view memcpyName(int copyKind, int srcKind, int dstKind);
std::string_view memsetName(int memoryKind);
std::string_view memoryKindName(int memoryKind);

/// Appends a JSON string (escaped; the text must be valid UTF-8).
void appendJsonString(std::string& out, std::string_view s);
/// Appends `ns - base` as microseconds with three decimals.
void appendMicros(std::string& out, int64_t ns);

} // namespace stallscope::capture::detail
