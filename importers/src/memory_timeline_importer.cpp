// torch.profiler's memory timeline (`prof.export_memory_timeline_raw(path, device)`, what
// HTA's export_memory_timeline writes): a JSON array of [time_ns, action, bytes, category]
// rows, plain or gzip, read as memory samples with their category so that the memory
// analysis gives the curve, its peak and what each category held at it.
//
// The rows (torch/profiler/_memory_profiler.py, MemoryProfileTimeline.export_memory_timeline_raw):
// action 1 PREEXISTING (time -1: before profiling), 2 CREATE, 3 INCREMENT_VERSION (a pair: the
// old version's bytes negative, the new version's positive), 4 DESTROY (bytes negative);
// category the index in _CATEGORY_TO_COLORS (model::memoryCategoryName). The file does not
// say which device it was exported for.
#include "byte_stream.h"
#include "content_signatures.h"

#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"
#include "stallscope/model/allocator_snapshot.h"
#include "stallscope/model/time_math.h"
#include "stallscope/model/trace_builder.h"

#include <simdjson.h>

#include <chrono>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

constexpr uint64_t kMaxTimelineBytes = uint64_t(1) << 31; // a timeline is rows of four numbers

Result<std::shared_ptr<const model::Trace>> importTimeline(const fs::path& path,
                                                           const ImportOptions&) {
    const auto started = std::chrono::steady_clock::now();
    auto text = readWholeFile(path.string(), kMaxTimelineBytes, "a memory timeline");
    if (!text) return text.error();
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    const simdjson::padded_string padded(text.value());
    if (auto err = parser.parse(padded).get(doc))
        return Error{ErrorKind::InvalidJson, std::string("a memory timeline that is not JSON: ") +
                                                 simdjson::error_message(err)};
    simdjson::dom::array rows;
    if (doc.get_array().get(rows))
        return Error{ErrorKind::InvalidStructure, "a memory timeline that is not an array"};
    model::TraceBuilder b;
    const model::ProcessId process = b.process(model::RowKey{0, {}});
    b.processInfo(process).name = b.intern("memory timeline (the file does not say its device)");
    b.processInfo(process).gpuDevice = 0; // shown as GPU 0: the file does not say which
    model::MemorySample m;
    m.deviceType = 1;
    m.deviceId = 0;
    m.process = process;
    struct Row {
        int64_t t, bytes;
        int64_t category;
    };
    std::vector<Row> read;
    int64_t first = INT64_MAX;
    uint64_t skipped = 0;
    for (simdjson::dom::element row : rows) {
        simdjson::dom::array r;
        int64_t v[4];
        size_t n = 0;
        bool ok = !row.get_array().get(r);
        if (ok)
            for (simdjson::dom::element x : r) {
                if (n == 4 || x.get_int64().get(v[n])) {
                    ok = false;
                    break;
                }
                ++n;
            }
        if (!ok || n != 4) {
            // The plot's JSON (export_memory_timeline to .json): [times, sizes], not rows.
            if (read.empty() && skipped == 0 && rows.size() == 2)
                return Error{ErrorKind::Unsupported,
                             "this is export_memory_timeline's plot data ([times, sizes per "
                             "category]), not its raw events: export with "
                             "prof.export_memory_timeline_raw(path, device) and open that"};
            ++skipped;
            continue;
        }
        if (v[0] >= 0) first = std::min(first, v[0]);
        read.push_back({v[0], v[2], v[3]});
    }
    if (skipped)
        b.diagnostics().add(model::DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                            std::to_string(skipped) +
                                " rows that are not four integers [time_ns, action, bytes, "
                                "category]: skipped");
    if (first == INT64_MAX) first = 0;
    int64_t total = 0;
    for (const Row& r : read) {
        total = model::satAdd(total, r.bytes);
        m.ts = r.t < 0 ? first : r.t; // PREEXISTING (-1): there when profiling began
        m.bytes = r.bytes;
        m.totalAllocated = total;
        m.totalReserved = -1;
        m.category = r.category >= 0 && r.category < 255 ? uint8_t(r.category + 1) : 0;
        b.appendMemory(m);
    }
    model::TraceMetadata& md = b.metadata();
    md.formatName = "PyTorch memory timeline (export_memory_timeline_raw)";
    md.sourcePath = path.string();
    b.stats().entries = rows.size();
    b.stats().textBytes = text.value().size();
    auto trace = b.finish();
    if (!trace) return Error{ErrorKind::Cancelled, "cancelled"};
    const_cast<model::ImportStats&>(trace->importStats()).seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return trace;
}

bool isMemoryTimeline(const ContentProbe& p) {
    return looksArrayOfRows(p.content());
}

} // namespace

extern const FileFormat kFormatMemoryTimeline;
const FileFormat kFormatMemoryTimeline{InputFormat::MemoryTimeline, "PyTorch memory timeline",
                                       isMemoryTimeline, importTimeline};

} // namespace stallscope::importers
