// The MCP server's tools read from the trace and the workspace rather than the analysis JSON:
// events_in_range (the model's slices), memory_at_peak (analysis/memory.h, written as `memory
// --json` writes it), compare_traces (`diff --json`'s document) and list_traces.
#include "diff_command.h"
#include "mcp_tools.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/analysis/memory.h"
#include "stallscope/base/utf8.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace stallscope::cli::mcp {

namespace dom = simdjson::dom;
namespace fs = std::filesystem;
using base::JsonWriter;

namespace {

/// "python 1234 / thread 5" or "GPU 0 / stream 7": the process's and the row's names.
std::string laneName(const model::Trace& t, model::TrackId id) {
    const model::TrackInfo& track = t.track(id);
    const model::ProcessInfo& p = t.process(track.process);
    auto keyText = [&](const model::RowKey& k) {
        return k.isString() ? std::string(t.str(k.text)) : std::to_string(k.number);
    };
    const std::string process = track.kind == model::TrackKind::GpuStream && p.gpuDevice >= 0
                                    ? "GPU " + std::to_string(p.gpuDevice)
                                : p.name.valid() ? std::string(t.str(p.name))
                                                 : "process " + keyText(p.key);
    const std::string row =
        track.name.valid() ? std::string(t.str(track.name)) : "thread " + keyText(track.key);
    return process + " / " + row;
}

const workspace::AnalysedTrace& traceOf(Session& s, const Call& c, std::string_view key,
                                        std::string* path = nullptr) {
    Opened& o = s.open(c.string(key, true));
    if (path) *path = o.path;
    return o.ws.traces[selectTrace(o, c)];
}

struct Hit {
    uint32_t slice;
    int64_t start, dur;
};

} // namespace

std::string dumpParsedBounded(const std::string& json, const Caps& caps) {
    dom::parser parser;
    dom::element e;
    if (parser.parse(json.data(), json.size()).get(e))
        throw std::runtime_error("internal: a document could not be read back");
    JsonWriter w(false);
    copyBounded(w, e, caps);
    return w.str();
}

std::string eventsInRange(Session& s, const Call& c, const Caps& caps) {
    std::string path;
    const workspace::AnalysedTrace& at = traceOf(s, c, "path", &path);
    const model::Trace& t = *at.entry.trace;
    const int64_t from = c.integer("start_ns", 0, INT64_MIN, INT64_MAX);
    const int64_t to = c.integer("end_ns", 0, INT64_MIN, INT64_MAX);
    if (!c.has("start_ns") || !c.has("end_ns"))
        c.invalid("\"start_ns\" and \"end_ns\" are required");
    if (to < from) c.invalid("\"end_ns\" is before \"start_ns\"");
    const std::string filter = c.string("name_contains");
    std::string side = c.string("side");
    if (side.empty()) side = "all";
    if (side != "all" && side != "gpu" && side != "cpu")
        c.invalid("\"side\" must be all, gpu or cpu");
    std::string order = c.string("order");
    if (order.empty()) order = "start";
    if (order != "start" && order != "longest") c.invalid("\"order\" must be start or longest");
    const int64_t minDur = c.integer("min_dur_ns", 0, 0, INT64_MAX);
    const size_t offset = size_t(c.integer("offset", 0, 0, INT32_MAX));
    const size_t limit = caps.rows(size_t(c.integer("limit", 20, 1, 200)));

    const model::SliceTable& sl = t.slices();
    std::vector<Hit> hits;
    std::map<std::string, uint64_t> perLane;
    for (model::TrackId track : t.displayOrder()) {
        const bool gpu = t.track(track).kind == model::TrackKind::GpuStream;
        if ((side == "gpu" && !gpu) || (side == "cpu" && gpu)) continue;
        const auto [begin, end] = t.sliceRange(track);
        uint64_t n = 0;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(track, from); i < end && i >= begin; ++i) {
            if (sl.start[i] > to) break;
            if (sl.end(i) < from || sl.dur[i] < minDur) continue;
            if (!filter.empty() && t.str(sl.name[i]).find(filter) == std::string_view::npos)
                continue;
            hits.push_back({i, sl.start[i], sl.dur[i]});
            ++n;
        }
        if (n) perLane[laneName(t, track)] += n;
    }
    const size_t want = std::min(hits.size(), offset + limit);
    const auto before = [&](const Hit& a, const Hit& b) {
        if (order == "longest" && a.dur != b.dur) return a.dur > b.dur;
        return a.start != b.start ? a.start < b.start : a.slice < b.slice;
    };
    std::partial_sort(hits.begin(), hits.begin() + std::ptrdiff_t(want), hits.end(), before);

    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(path);
    w.key("start_ns").value(from);
    w.key("end_ns").value(to);
    w.key("matching").value(uint64_t(hits.size()));
    std::vector<std::pair<std::string, uint64_t>> lanes(perLane.begin(), perLane.end());
    std::stable_sort(lanes.begin(), lanes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    w.key("rows").beginArray();
    for (size_t k = 0; k < lanes.size() && k < caps.rows(20); ++k)
        w.beginObject()
            .key("row")
            .value(base::truncateUtf8(lanes[k].first, caps.text() / 4))
            .key("events")
            .value(lanes[k].second)
            .endObject();
    w.endArray();
    if (lanes.size() > caps.rows(20))
        w.key("rows_omitted").value(uint64_t(lanes.size() - caps.rows(20)));
    w.key("events").beginArray();
    size_t returned = 0;
    for (size_t k = offset; k < want; ++k, ++returned) {
        const uint32_t i = hits[k].slice;
        w.beginObject();
        w.key("name").value(base::truncateUtf8(t.str(sl.name[i]), caps.text() / 4));
        w.key("kind").value(model::kindName(sl.kind[i]));
        w.key("start_ns").value(sl.start[i]);
        w.key("dur_ns").value(sl.dur[i]);
        w.key("row").value(base::truncateUtf8(laneName(t, sl.track[i]), caps.text() / 4));
        w.key("depth").value(uint64_t(sl.depth[i]));
        w.endObject();
    }
    w.endArray();
    writePage(w, offset, returned, hits.size());
    w.endObject();
    return w.str();
}

std::string memoryAtPeak(Session& s, const Call& c, const Caps& caps) {
    std::string path;
    const workspace::AnalysedTrace& at = traceOf(s, c, "path", &path);
    const model::Trace& t = *at.entry.trace;
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(path);
    if (t.memorySamples().empty() && !t.allocatorSnapshot()) {
        w.key("memory").null();
        w.key("reason").value(
            "this trace holds no memory events: record with "
            "torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True) or "
            "open an allocator snapshot (torch.cuda.memory._dump_snapshot)");
        w.endObject();
        return w.str();
    }
    const analysis::MemoryAnalysis m = analysis::analyzeMemory(t, *at.analysis);
    JsonWriter full(false);
    analysis::writeMemoryJson(full, t, m, caps.rows(10), false);
    w.key("memory").raw(dumpParsedBounded(full.str(), caps));
    w.endObject();
    return w.str();
}

std::string compareTraces(Session& s, const Call& c, const Caps& caps) {
    std::string before, after;
    const workspace::AnalysedTrace& b = traceOf(s, c, "before", &before);
    const workspace::AnalysedTrace& a = traceOf(s, c, "after", &after);
    for (const auto* x : {&b, &a})
        if (x->entry.trace->slices().size() == 0)
            throw std::runtime_error(x->entry.path +
                                     " holds no events to compare (a memory recording: "
                                     "compare those with `stallscope-cli memory --compare`)");
    const analysis::RunDiff d = analysis::diffRuns(*b.entry.trace, *b.analysis, *a.entry.trace,
                                                   *a.analysis, s.options().analysis);
    JsonWriter full(false);
    writeDiffJson(full, before, *b.entry.trace, *b.analysis, after, *a.entry.trace, *a.analysis, d,
                  nullptr, nullptr);
    return dumpParsedBounded(full.str(), caps);
}

std::string listTraces(Session& s, const Call& c, const Caps& caps) {
    const size_t offset = size_t(c.integer("offset", 0, 0, INT32_MAX));
    const size_t limit = caps.rows(size_t(c.integer("limit", 50, 1, 200)));
    struct Entry {
        std::string path;
        std::string what;
        uint64_t bytes = 0;
    };
    std::vector<Entry> entries;
    std::vector<std::string> folders = s.paths().folders();
    for (const std::string& n : s.paths().named()) {
        std::error_code ec;
        if (fs::is_directory(n, ec)) {
            entries.push_back({n, "folder named on the command line", 0});
            folders.push_back(n);
        } else
            entries.push_back({n, "file named on the command line", fs::file_size(n, ec)});
    }
    constexpr size_t kScanned = 5000; // files looked at under the allowed folders
    size_t scanned = 0;
    for (const std::string& f : folders) {
        std::error_code ec;
        fs::recursive_directory_iterator it(f, fs::directory_options::skip_permission_denied, ec);
        for (; !ec && it != fs::recursive_directory_iterator() && scanned < kScanned;
             it.increment(ec)) {
            if (it.depth() > 6) it.disable_recursion_pending();
            if (!it->is_regular_file(ec) || it->path().filename().string().starts_with("."))
                continue;
            ++scanned;
            entries.push_back({it->path().string(), "file under " + f, it->file_size(ec)});
        }
    }
    const std::vector<std::string> opened = s.openedPaths();
    JsonWriter w(false);
    w.beginObject();
    w.key("allowed_folders").beginArray();
    for (const std::string& f : s.paths().folders()) w.value(f);
    w.endArray();
    w.key("paths").beginArray();
    size_t returned = 0;
    for (size_t k = offset; k < entries.size() && returned < limit; ++k, ++returned) {
        w.beginObject();
        w.key("path").value(base::truncateUtf8(entries[k].path, caps.text()));
        w.key("what").value(entries[k].what);
        if (entries[k].bytes) w.key("bytes").value(entries[k].bytes);
        w.key("open").value(std::find(opened.begin(), opened.end(), entries[k].path) !=
                            opened.end());
        w.endObject();
    }
    w.endArray();
    writePage(w, offset, returned, entries.size());
    if (scanned == kScanned)
        w.key("note").value("the first " + std::to_string(kScanned) +
                            " files under the allowed folders are listed");
    w.endObject();
    return w.str();
}

} // namespace stallscope::cli::mcp
