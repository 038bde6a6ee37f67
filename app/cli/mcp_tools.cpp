// The MCP server's tools: the table tools/list gives, argument checks, the bound on every
// result, and the tools read from each trace's analysis JSON (open_trace, list_findings,
// explain_finding, idle_breakdown, top_kernels, top_operators). Field names are those of
// `analyze --json` (docs/analysis-json.md).
#include "mcp_tools.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/base/utf8.h"

#include <algorithm>
#include <cmath>

namespace stallscope::cli::mcp {

namespace dom = simdjson::dom;
using base::JsonWriter;

// ---- arguments ---------------------------------------------------------------------------

void Call::invalid(const std::string& message) const {
    throw RpcError(kInvalidParams, std::string(m_tool) + ": " + message);
}

bool Call::has(std::string_view key) const {
    return m_args.at_key(key).error() == simdjson::SUCCESS;
}

dom::element Call::element(std::string_view key) const {
    return m_args.at_key(key).value();
}

std::string Call::string(std::string_view key, bool required) const {
    dom::element e;
    if (m_args.at_key(key).get(e)) {
        if (required) invalid("\"" + std::string(key) + "\" is required");
        return {};
    }
    std::string_view v;
    if (e.get(v)) invalid("\"" + std::string(key) + "\" must be a string");
    return std::string(v);
}

int64_t Call::integer(std::string_view key, int64_t fallback, int64_t min, int64_t max) const {
    dom::element e;
    if (m_args.at_key(key).get(e)) return fallback;
    int64_t v = 0;
    double d = 0;
    if (!e.get(v)) {
    } else if (!e.get(d) && std::floor(d) == d && std::abs(d) < 9e18)
        v = int64_t(d);
    else
        invalid("\"" + std::string(key) + "\" must be an integer");
    if (v < min || v > max)
        invalid("\"" + std::string(key) + "\" must be from " + std::to_string(min) + " to " +
                std::to_string(max));
    return v;
}

bool Call::boolean(std::string_view key, bool fallback) const {
    dom::element e;
    if (m_args.at_key(key).get(e)) return fallback;
    bool v = false;
    if (e.get(v)) invalid("\"" + std::string(key) + "\" must be true or false");
    return v;
}

// ---- bounded output ----------------------------------------------------------------------

void copyBounded(JsonWriter& w, dom::element e, const Caps& caps) {
    switch (e.type()) {
    case dom::element_type::ARRAY: {
        w.beginArray();
        size_t n = 0;
        for (dom::element x : dom::array(e)) {
            if (n++ == caps.array()) break;
            copyBounded(w, x, caps);
        }
        w.endArray();
        break;
    }
    case dom::element_type::OBJECT:
        w.beginObject();
        for (auto [key, value] : dom::object(e)) {
            w.key(key);
            copyBounded(w, value, caps);
            if (value.is_array() && dom::array(value).size() > caps.array())
                w.key(std::string(key) + "_omitted")
                    .value(uint64_t(dom::array(value).size() - caps.array()));
        }
        w.endObject();
        break;
    case dom::element_type::STRING:
        w.value(base::truncateUtf8(std::string_view(e), caps.text()));
        break;
    default: w.raw(simdjson::minify(e)); break;
    }
}

void writePage(JsonWriter& w, size_t offset, size_t returned, size_t total) {
    w.key("page").beginObject();
    w.key("offset").value(uint64_t(offset));
    w.key("returned").value(uint64_t(returned));
    w.key("total").value(uint64_t(total));
    w.key("next_offset");
    if (offset + returned < total)
        w.value(uint64_t(offset + returned));
    else
        w.null();
    w.endObject();
}

size_t selectTrace(const Opened& o, const Call& c) {
    if (o.ws.traces.empty())
        throw std::runtime_error(o.path + ": no trace's detail is loaded" +
                                 (o.ws.detailNote.empty() ? "" : " (" + o.ws.detailNote + ")"));
    if (c.has("rank")) {
        const int64_t rank = c.integer("rank", -1, -1, INT32_MAX);
        for (size_t i = 0; i < o.ws.traces.size(); ++i)
            if (o.ws.traces[i].entry.rank == rank) return i;
        std::string ranks;
        for (const auto& t : o.ws.traces) ranks += " " + std::to_string(t.entry.rank);
        c.invalid("no rank " + std::to_string(rank) + " in " + o.path + " (ranks:" + ranks + ")");
    }
    const workspace::AnalysedTrace* rep = o.ws.representative(0);
    return rep ? size_t(rep - o.ws.traces.data()) : 0;
}

namespace {

struct Selected {
    Opened& opened;
    size_t index;
    dom::element analysis;
};

Selected select(Session& s, const Call& c, std::string_view key = "path") {
    Opened& o = s.open(c.string(key, true));
    const size_t i = selectTrace(o, c);
    return {o, i, o.analysis[i]};
}

std::vector<dom::element> arrayOf(dom::element parent, std::string_view key) {
    std::vector<dom::element> out;
    dom::array a;
    if (!parent[key].get(a))
        for (dom::element x : a) out.push_back(x);
    return out;
}

int64_t intOf(dom::element e, std::string_view key) {
    int64_t v = 0;
    return e[key].get(v) ? 0 : v;
}

std::string_view textOf(dom::element e, std::string_view key) {
    std::string_view v;
    return e[key].get(v) ? std::string_view() : v;
}

/// Copies the listed fields of `e` that it has, bounded.
void fields(JsonWriter& w, dom::element e, std::initializer_list<std::string_view> keys,
            const Caps& caps) {
    for (std::string_view k : keys) {
        dom::element v;
        if (e[k].get(v)) continue;
        w.key(k);
        copyBounded(w, v, caps);
    }
}

/// The idle causes of one device, largest first, those with time only.
std::vector<std::pair<std::string_view, dom::element>> causesOf(dom::element analysis,
                                                                std::string_view device) {
    std::vector<std::pair<std::string_view, dom::element>> out;
    dom::object causes;
    if (analysis["idle_details"][device]["causes"].get(causes)) return out;
    for (auto [name, c] : causes)
        if (intOf(c, "ns") > 0) out.emplace_back(name, c);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return intOf(a.second, "ns") > intOf(b.second, "ns");
    });
    return out;
}

void findingSummary(JsonWriter& w, dom::element f, size_t index, const Caps& caps) {
    w.beginObject();
    w.key("index").value(uint64_t(index));
    fields(w, f,
           {"id", "kind", "device", "severity", "title", "idle_ns", "saving_ns", "saving_pct"},
           caps);
}

/// The ranks compared, in brief: the straggler and each rank's window, utilisation, wait in
/// collectives and largest idle cause (the whole of it is `analyze --ranks --json`).
void ranksCompared(JsonWriter& w, const analysis::CrossRankResult& r, const Caps& caps) {
    JsonWriter full(false);
    analysis::writeCrossRankJson(full, r);
    dom::parser parser;
    dom::element e;
    if (parser.parse(full.str().data(), full.str().size()).get(e)) return;
    w.key("ranks_compared").beginObject();
    for (auto [key, value] : dom::object(e))
        if (!value.is_array() && !value.is_object()) {
            w.key(key);
            copyBounded(w, value, caps);
        }
    const std::vector<dom::element> ranks = arrayOf(e, "ranks");
    w.key("ranks").beginArray();
    for (size_t i = 0; i < ranks.size() && i < caps.rows(64); ++i) {
        w.beginObject();
        fields(w, ranks[i],
               {"rank", "window_ns", "utilization", "wait_ns", "top_cause", "top_cause_ns",
                "late_ns", "top_finding"},
               caps);
        w.endObject();
    }
    w.endArray();
    if (ranks.size() > caps.rows(64))
        w.key("ranks_omitted").value(uint64_t(ranks.size() - caps.rows(64)));
    w.endObject();
}

std::string openTrace(Session& s, const Call& c, const Caps& caps) {
    const Selected sel = select(s, c);
    const workspace::AnalysedTrace& at = sel.opened.ws.traces[sel.index];
    const dom::element a = sel.analysis;
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(sel.opened.path);
    w.key("rank").value(int64_t(at.entry.rank));
    if (!at.entry.label.empty()) w.key("label").value(at.entry.label);
    w.key("traces").value(uint64_t(sel.opened.ws.traces.size()));
    if (sel.opened.ws.traces.size() > 1) {
        w.key("ranks").beginArray();
        for (size_t i = 0; i < sel.opened.ws.traces.size() && i < caps.rows(16); ++i)
            w.value(int64_t(sel.opened.ws.traces[i].entry.rank));
        w.endArray();
    }
    w.key("events").value(uint64_t(at.entry.trace->eventCount()));
    fields(w, a, {"window", "steps", "warmup", "host_only"}, caps);
    w.key("devices").beginArray();
    dom::object devices;
    if (!a["devices"].get(devices))
        for (auto [key, d] : devices) {
            w.beginObject();
            w.key("device").value(key);
            fields(w, d, {"name", "utilization", "busy_ns", "idle_ns", "window_ns"}, caps);
            w.key("largest_idle_causes").beginArray();
            size_t n = 0;
            for (const auto& [cause, detail] : causesOf(a, key)) {
                if (n++ == 3) break;
                w.beginObject().key("cause").value(cause);
                fields(w, detail, {"ns", "share_of_window"}, caps);
                w.endObject();
            }
            w.endArray().endObject();
        }
    w.endArray();
    const std::vector<dom::element> findings = arrayOf(a, "findings");
    w.key("findings").beginObject().key("count").value(uint64_t(findings.size()));
    w.key("largest").beginArray();
    for (size_t i = 0; i < findings.size() && i < caps.rows(5); ++i) {
        findingSummary(w, findings[i], i, caps);
        w.endObject();
    }
    w.endArray().endObject();
    fields(w, a, {"notes"}, caps);
    if (sel.opened.ws.ranks.ranks.size() >= 2) ranksCompared(w, sel.opened.ws.ranks, caps);
    w.key("next").value("list_findings and explain_finding for the findings with their "
                        "evidence; idle_breakdown, top_kernels, top_operators, events_in_range, "
                        "memory_at_peak, compare_traces");
    w.endObject();
    return w.str();
}

std::string listFindings(Session& s, const Call& c, const Caps& caps) {
    const Selected sel = select(s, c);
    const size_t offset = size_t(c.integer("offset", 0, 0, INT32_MAX));
    const size_t limit = caps.rows(size_t(c.integer("limit", 10, 1, 50)));
    const std::string kind = c.string("kind");
    std::vector<std::pair<size_t, dom::element>> rows;
    size_t i = 0;
    for (dom::element f : arrayOf(sel.analysis, "findings")) {
        if (kind.empty() || textOf(f, "kind") == kind) rows.emplace_back(i, f);
        ++i;
    }
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(sel.opened.path);
    size_t returned = 0;
    w.key("findings").beginArray();
    for (size_t k = offset; k < rows.size() && returned < limit; ++k, ++returned) {
        const dom::element f = rows[k].second;
        findingSummary(w, f, rows[k].first, caps);
        const std::vector<dom::element> evidence = arrayOf(f, "evidence");
        w.key("evidence_count").value(uint64_t(evidence.size()));
        w.key("evidence").beginArray();
        for (size_t e = 0; e < evidence.size() && e < 3; ++e) copyBounded(w, evidence[e], caps);
        w.endArray();
        w.key("fix").value(base::truncateUtf8(textOf(f, "fix"), caps.text() / 3));
        w.endObject();
    }
    w.endArray();
    writePage(w, offset, returned, rows.size());
    w.endObject();
    return w.str();
}

dom::element findFinding(const Selected& sel, const Call& c, size_t& index) {
    const std::vector<dom::element> findings = arrayOf(sel.analysis, "findings");
    if (!c.has("finding")) c.invalid("\"finding\" is required (an index or an id)");
    const dom::element which = c.element("finding");
    if (which.is_string()) {
        for (size_t i = 0; i < findings.size(); ++i)
            if (textOf(findings[i], "id") == std::string_view(which)) return findings[index = i];
        c.invalid("no finding \"" + std::string(std::string_view(which)) + "\" in " +
                  sel.opened.path);
    }
    const int64_t i = c.integer("finding", 0, 0, INT32_MAX);
    if (size_t(i) >= findings.size())
        c.invalid("finding " + std::to_string(i) + " does not exist (" +
                  std::to_string(findings.size()) + " findings)");
    return findings[index = size_t(i)];
}

std::string explainFinding(Session& s, const Call& c, const Caps& caps) {
    const Selected sel = select(s, c);
    size_t index = 0;
    const dom::element f = findFinding(sel, c, index);
    const size_t offset = size_t(c.integer("evidence_offset", 0, 0, INT32_MAX));
    const size_t limit = caps.rows(size_t(c.integer("evidence_limit", 20, 1, 200)));
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(sel.opened.path);
    w.key("index").value(uint64_t(index));
    for (auto [key, value] : dom::object(f)) {
        if (key == "evidence") continue;
        w.key(key);
        if (value.is_string()) // the explanation and the fix whole, unless they cannot fit
            w.value(base::truncateUtf8(std::string_view(value), caps.text() * 4));
        else
            copyBounded(w, value, caps);
        if (value.is_array() && dom::array(value).size() > caps.array())
            w.key(std::string(key) + "_omitted")
                .value(uint64_t(dom::array(value).size() - caps.array()));
    }
    const std::vector<dom::element> evidence = arrayOf(f, "evidence");
    w.key("evidence").beginArray();
    size_t returned = 0;
    for (size_t e = offset; e < evidence.size() && returned < limit; ++e, ++returned)
        copyBounded(w, evidence[e], caps);
    w.endArray();
    w.key("evidence_page").beginObject();
    writePage(w, offset, returned, evidence.size());
    w.endObject();
    w.endObject();
    return w.str();
}

std::string idleBreakdown(Session& s, const Call& c, const Caps& caps) {
    const Selected sel = select(s, c);
    const std::string only =
        c.has("device") ? std::to_string(c.integer("device", 0, 0, 4096)) : std::string();
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(sel.opened.path);
    fields(w, sel.analysis, {"window"}, caps);
    w.key("devices").beginArray();
    dom::object details;
    bool any = false;
    if (!sel.analysis["idle_details"].get(details))
        for (auto [key, d] : details) {
            if (!only.empty() && key != only) continue;
            any = true;
            w.beginObject().key("device").value(key);
            dom::element device;
            if (!sel.analysis["devices"][key].get(device))
                fields(w, device, {"name", "utilization", "window_ns", "busy_ns"}, caps);
            fields(w, d, {"idle_ns", "explained_ns", "gaps"}, caps);
            w.key("causes").beginArray();
            Caps inner = caps;
            inner.shrink = std::max(caps.shrink, 2u); // largest gaps and names: 3 each
            for (const auto& [cause, detail] : causesOf(sel.analysis, key)) {
                w.beginObject().key("cause").value(cause);
                fields(w, detail,
                       {"ns", "share_of_window", "share_of_idle", "gaps", "largest", "top"}, inner);
                w.endObject();
            }
            w.endArray().endObject();
        }
    w.endArray();
    if (!only.empty() && !any) c.invalid("no device " + only + " in " + sel.opened.path);
    w.key("causes_meaning")
        .value("docs/analysis.md: each idle nanosecond of a device is charged to one cause; "
               "\"largest\" are the gaps holding the most of it, \"top\" the calls or "
               "operators it was spent in");
    w.endObject();
    return w.str();
}

std::string tableTool(Session& s, const Call& c, const Caps& caps, std::string_view table,
                      std::initializer_list<std::string_view> sorts) {
    const Selected sel = select(s, c);
    const size_t offset = size_t(c.integer("offset", 0, 0, INT32_MAX));
    const size_t limit = caps.rows(size_t(c.integer("limit", 10, 1, 100)));
    std::string sortBy = c.string("sort_by");
    if (sortBy.empty()) sortBy = std::string(*sorts.begin());
    if (std::find(sorts.begin(), sorts.end(), sortBy) == sorts.end()) {
        std::string names;
        for (std::string_view n : sorts) names += (names.empty() ? "" : ", ") + std::string(n);
        c.invalid("\"sort_by\" must be one of " + names);
    }
    const std::string filter = c.string("name_contains");
    std::vector<dom::element> rows;
    int64_t sum = 0;
    dom::element stats;
    if (sel.analysis["stats"].get(stats)) throw std::runtime_error("the analysis has no tables");
    for (dom::element r : arrayOf(stats, table)) {
        const std::string_view name = textOf(r, table == "kernels_by_operator" ? "kernel" : "name");
        if (!filter.empty() && name.find(filter) == std::string_view::npos) continue;
        rows.push_back(r);
        sum += intOf(r, "total_ns");
    }
    std::stable_sort(rows.begin(), rows.end(), [&](dom::element a, dom::element b) {
        return intOf(a, sortBy) > intOf(b, sortBy);
    });
    JsonWriter w(false);
    w.beginObject();
    w.key("path").value(sel.opened.path);
    w.key("table").value(table);
    w.key("sorted_by").value(sortBy);
    w.key("total_ns_of_all_rows").value(sum);
    w.key("rows").beginArray();
    size_t returned = 0;
    for (size_t k = offset; k < rows.size() && returned < limit; ++k, ++returned)
        copyBounded(w, rows[k], caps);
    w.endArray();
    writePage(w, offset, returned, rows.size());
    w.endObject();
    return w.str();
}

std::string topKernels(Session& s, const Call& c, const Caps& caps) {
    if (c.boolean("by_operator", false))
        return tableTool(s, c, caps, "kernels_by_operator", {"total_ns", "count", "max_ns"});
    return tableTool(s, c, caps, "kernels", {"total_ns", "count", "max_ns"});
}

std::string topOperators(Session& s, const Call& c, const Caps& caps) {
    return tableTool(s, c, caps, "operators", {"total_ns", "self_ns", "gpu_ns", "count"});
}

// ---- the table ---------------------------------------------------------------------------

struct Tool {
    std::string_view name, title, description;
    std::string_view properties; // the input schema's "properties" object, JSON
    std::string_view required;   // its "required" array, JSON
    std::string (*run)(Session&, const Call&, const Caps&);
};

#define STALLSCOPE_PATH_RANK                                                                       \
    "\"path\":{\"type\":\"string\",\"description\":\"a trace file or folder (list_traces)\"},"     \
    "\"rank\":{\"type\":\"integer\",\"description\":\"the rank, for a folder or file of "          \
    "several (default: the representative one)\"}"
#define STALLSCOPE_PAGE(N, MAX)                                                                    \
    "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"default\":0},"                               \
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":" #MAX ",\"default\":" #N "}"

const std::vector<Tool>& tools() {
    static const std::vector<Tool> list{
        {"list_traces", "Readable traces",
         "The trace files and folders this server may read (named on its command line or "
         "under an allowed folder), and which are open.",
         "{" STALLSCOPE_PAGE(50, 200) "}", "[]", listTraces},
        {"open_trace", "Open a trace",
         "Opens a PyTorch profiler trace (Kineto JSON, gzip, TensorBoard folder, ranks, Nsight "
         "or rocprof exports, memory snapshot) and summarises it: window, steps, devices with "
         "their utilisation and largest idle causes, the largest findings.",
         "{" STALLSCOPE_PATH_RANK "}", "[\"path\"]", openTrace},
        {"list_findings", "List findings",
         "The findings (why the GPU idles or runs slow), largest saving first: title, cost, "
         "saving, the first evidence events and the fix, a page at a time.",
         "{" STALLSCOPE_PATH_RANK ",\"kind\":{\"type\":\"string\",\"description\":\"only this "
         "kind (data_loading, host_sync, ...)\"}," STALLSCOPE_PAGE(10, 50) "}",
         "[\"path\"]", listFindings},
        {"explain_finding", "Explain a finding",
         "One finding whole: explanation, fix, snippet, what the GPU waited for, the claims "
         "behind each figure, and its evidence events a page at a time.",
         "{" STALLSCOPE_PATH_RANK ",\"finding\":{\"type\":[\"integer\",\"string\"],"
         "\"description\":\"its index or id (list_findings)\"},\"evidence_offset\":{\"type\":"
         "\"integer\",\"minimum\":0},\"evidence_limit\":{\"type\":\"integer\",\"minimum\":1,"
         "\"maximum\":200}}",
         "[\"path\",\"finding\"]", explainFinding},
        {"idle_breakdown", "Idle time by cause",
         "Each device's idle time charged to causes (data loading, host sync, launch overhead, "
         "...), largest first, with the gaps holding most of each and the calls it was spent "
         "in.",
         "{" STALLSCOPE_PATH_RANK ",\"device\":{\"type\":\"integer\",\"minimum\":0}}", "[\"path\"]",
         idleBreakdown},
        {"top_kernels", "Top kernels",
         "GPU kernels by total time (or count, longest), optionally per launching operator.",
         "{" STALLSCOPE_PATH_RANK ",\"sort_by\":{\"enum\":[\"total_ns\",\"count\",\"max_ns\"]},"
         "\"name_contains\":{\"type\":\"string\"},\"by_operator\":{\"type\":\"boolean\"}"
         "," STALLSCOPE_PAGE(10, 100) "}",
         "[\"path\"]", topKernels},
        {"top_operators", "Top operators",
         "PyTorch operators by CPU time (inclusive or self) or the GPU time they launched.",
         "{" STALLSCOPE_PATH_RANK ",\"sort_by\":{\"enum\":[\"total_ns\",\"self_ns\",\"gpu_ns\","
         "\"count\"]},\"name_contains\":{\"type\":\"string\"}," STALLSCOPE_PAGE(10, 100) "}",
         "[\"path\"]", topOperators},
        {"events_in_range", "Events in a time range",
         "The events overlapping [start_ns, end_ns] (the trace's clock, as findings' evidence "
         "gives it): counts per row, then the events by start or longest first.",
         "{" STALLSCOPE_PATH_RANK ",\"start_ns\":{\"type\":\"integer\"},\"end_ns\":{\"type\":"
         "\"integer\"},\"name_contains\":{\"type\":\"string\"},\"side\":{\"enum\":[\"all\","
         "\"gpu\",\"cpu\"]},\"min_dur_ns\":{\"type\":\"integer\",\"minimum\":0},\"order\":"
         "{\"enum\":[\"start\",\"longest\"]}," STALLSCOPE_PAGE(20, 200) "}",
         "[\"path\",\"start_ns\",\"end_ns\"]", eventsInRange},
        {"memory_at_peak", "Memory at the peak",
         "Per device the allocator's peak, what was live at it (by operator and call stack), "
         "headroom and advice; for traces recorded with profile_memory=True or allocator "
         "snapshots.",
         "{" STALLSCOPE_PATH_RANK "}", "[\"path\"]", memoryAtPeak},
        {"compare_traces", "Compare two traces",
         "Two runs compared: step time against its noise, idle by cause, findings resolved / "
         "new / persisting, operators and kernels that changed most.",
         "{\"before\":{\"type\":\"string\"},\"after\":{\"type\":\"string\"}}",
         "[\"before\",\"after\"]", compareTraces},
    };
    return list;
}

#undef STALLSCOPE_PATH_RANK
#undef STALLSCOPE_PAGE

} // namespace

void writeToolList(JsonWriter& w) {
    w.beginArray();
    for (const Tool& t : tools()) {
        w.beginObject();
        w.key("name").value(t.name);
        w.key("title").value(t.title);
        w.key("description").value(t.description);
        w.key("inputSchema").beginObject();
        w.key("type").value("object");
        w.key("properties").raw(t.properties);
        w.key("required").raw(t.required);
        w.key("additionalProperties").value(false);
        w.endObject();
        w.key("annotations").beginObject();
        w.key("readOnlyHint").value(true);
        w.key("openWorldHint").value(false);
        w.endObject();
        w.endObject();
    }
    w.endArray();
}

ToolResult callTool(Session& s, std::string_view name, dom::object arguments) {
    const auto t =
        std::find_if(tools().begin(), tools().end(), [&](const Tool& x) { return x.name == name; });
    if (t == tools().end()) throw RpcError(kInvalidParams, "Unknown tool: " + std::string(name));
    dom::parser schema;
    const dom::object properties =
        schema.parse(t->properties.data(), t->properties.size()).get_object().value();
    for (auto [key, value] : arguments) // unknown argument names: said, not ignored
        if (properties.at_key(key).error())
            throw RpcError(kInvalidParams,
                           std::string(name) + ": unknown argument \"" + std::string(key) + "\"");
    const Call call(arguments, name);
    for (unsigned shrink = 0; shrink < 12; ++shrink) {
        std::string text = t->run(s, call, Caps{shrink});
        if (text.size() <= kMaxResultBytes) return {std::move(text), false};
    }
    return {"the result does not fit in " + std::to_string(kMaxResultBytes) +
                " bytes even cut down: ask for less (a smaller range or limit)",
            true};
}

std::string traceSummary(Session& s, const std::string& path) {
    static dom::parser parser;
    JsonWriter args(false);
    args.beginObject().key("path").value(path).endObject();
    const dom::object o = parser.parse(args.str().data(), args.str().size()).get_object().value();
    return callTool(s, "open_trace", o).text;
}

} // namespace stallscope::cli::mcp
