#include "info_command.h"
#include "command.h"

#include "stallscope/analysis/trace_summary.h"
#include "stallscope/base/json_writer.h"
#include "stallscope/base/text_format.h"
#include "stallscope/workspace/workspace.h"

#include <chrono>
#include <cstdio>

namespace stallscope::cli {

extern const Command kInfoCommand; // defined at the end of this file

using base::formatBytes;
using base::formatCount;
using base::formatDuration;
using base::formatTimestamp;

using base::JsonWriter;

using analysis::TraceSummary;

namespace {

std::string severityName(model::Severity s) {
    switch (s) {
    case model::Severity::Info: return "info";
    case model::Severity::Warning: return "warning";
    case model::Severity::Error: return "error";
    }
    return "info";
}

void writeDiagnosticsJson(JsonWriter& w, const model::Diagnostics& d) {
    w.key("diagnostics").beginObject();
    for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<model::DiagnosticKind>(k);
        if (!d.count(kind)) continue;
        const auto& info = model::diagnosticInfo(kind);
        w.key(info.id).beginObject();
        w.key("count").value(d.count(kind));
        w.key("severity").value(severityName(info.severity));
        w.key("summary").value(info.summary);
        w.key("examples").beginArray();
        for (const auto& ex : d.examples(kind)) {
            w.beginObject();
            if (ex.byteOffset != model::Diagnostics::kNoOffset) w.key("byte").value(ex.byteOffset);
            w.key("detail").value(ex.detail);
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endObject();
}

void writeTraceJson(JsonWriter& w, const model::TraceEntry& e, const TraceSummary& s,
                    const model::Trace& t) {
    w.beginObject();
    w.key("path").value(e.path);
    w.key("label").value(e.label);
    w.key("rank").value(e.rank);
    w.key("span_index").value(e.span);
    w.key("format").value(s.format);
    w.key("compressed").value(s.compressed);
    if (!s.host.empty()) w.key("host").value(s.host);
    w.key("events").value(s.events);
    w.key("by_phase").beginObject();
    for (const auto& [ph, n] : s.byPhase) w.key(ph).value(n);
    w.endObject();
    w.key("by_category").beginObject();
    for (const auto& [cat, n] : s.byCategory) w.key(cat).value(n);
    w.endObject();
    w.key("gpu").beginObject();
    w.key("kernel").value(s.kernels);
    w.key("memcpy").value(s.memcpys);
    w.key("memset").value(s.memsets);
    w.endObject();
    w.key("profiler_steps").value(s.profilerSteps);
    w.key("devices").beginObject();
    for (const auto& d : s.devices) {
        if (!d.hasWork) continue;
        w.key(std::to_string(d.device)).beginObject();
        w.key("busy_us").micros(d.busyNs);
        w.key("span_us").micros(d.lastNs - d.firstNs);
        w.key("kernels").value(d.kernels);
        w.key("memcpys").value(d.memcpys);
        w.key("memsets").value(d.memsets);
        w.key("streams").value(d.streams);
        w.endObject();
    }
    w.endObject();
    w.key("device_properties").beginArray();
    for (const auto& d : t.metadata().devices) {
        w.beginObject();
        w.key("id").value(d.id);
        w.key("name").value(d.name);
        w.key("compute_capability").value(std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor));
        w.key("sms").value(d.numSms);
        w.key("memory_bytes").value(d.totalGlobalMem);
        w.endObject();
    }
    w.endArray();
    w.key("span").beginObject();
    w.key("start_ns").value(s.startNs);
    w.key("end_ns").value(s.endNs);
    w.key("duration_us").micros(s.endNs - s.startNs);
    w.endObject();
    w.key("processes").value(s.processes);
    w.key("cpu_threads").value(s.cpuThreads);
    w.key("gpu_streams").value(s.gpuStreams);
    w.key("distributed");
    if (t.metadata().distributed.present) {
        w.beginObject();
        w.key("rank").value(s.rank);
        w.key("world_size").value(s.worldSize);
        w.key("backend").value(s.backend);
        w.endObject();
    } else {
        w.null();
    }
    writeDiagnosticsJson(w, t.diagnostics());
    const double secs = t.importStats().seconds;
    w.key("import").beginObject();
    w.key("seconds").value(secs, 4);
    w.key("input_bytes").value(s.inputBytes);
    w.key("json_bytes").value(s.textBytes);
    w.key("json_mb_per_s").value(secs > 0 ? s.textBytes / secs / 1e6 : 0.0, 1);
    w.key("model_bytes").value(static_cast<uint64_t>(s.modelBytes));
    w.key("model_events").value(static_cast<uint64_t>(s.modelEvents));
    w.key("bytes_per_event").value(s.modelEvents ? double(s.modelBytes) / s.modelEvents : 0.0, 1);
    w.endObject();
    w.endObject();
}

std::string joinCounts(const std::map<std::string, uint64_t>& m) {
    std::vector<std::pair<uint64_t, std::string>> v;
    for (const auto& [k, n] : m) v.emplace_back(n, k);
    std::sort(v.rbegin(), v.rend());
    std::string out;
    for (const auto& [n, k] : v) {
        if (!out.empty()) out += " · ";
        out += (k.empty() ? "\"\"" : k) + " " + formatCount(n);
    }
    return out;
}

void writeTraceText(std::ostream& o, const model::TraceEntry& e, const TraceSummary& s,
                    const model::Trace& t) {
    char line[256];
    o << e.path << "\n";
    auto row = [&](const char* label, const std::string& value) {
        std::snprintf(line, sizeof line, "  %-12s ", label);
        o << line << value << "\n";
    };
    row("format", s.format + (s.compressed ? " (gzip)" : ""));
    row("span", formatDuration(s.endNs - s.startNs) + "  from " + formatTimestamp(s.startNs));
    if (s.rank >= 0 || e.rank > 0)
        row("rank", std::to_string(e.rank) + (s.worldSize > 0 ? " of " + std::to_string(s.worldSize) : "") +
                        (s.backend.empty() ? "" : " (" + s.backend + ")"));
    if (const model::AllocatorSnapshot* snap = t.allocatorSnapshot()) {
        // An allocator snapshot: its state and history, not trace events.
        int64_t reserved = 0;
        for (const auto& seg : snap->segments) reserved += seg.totalSize;
        row("allocator", formatBytes(static_cast<uint64_t>(reserved)) + " reserved in " +
                             formatCount(snap->segments.size()) + " segments, " +
                             formatCount(snap->blocks.size()) + " blocks");
        row("history", snap->segmentsOnly ? std::string("none (a list of segments: "
                                                        "torch.cuda.memory_snapshot())")
                                          : formatCount(snap->entries.size()) + " entries, " +
                                                formatCount(snap->stackCount()) + " stacks of " +
                                                formatCount(snap->frames.size()) + " frames");
        row("memory", formatCount(t.memorySamples().size()) +
                          " allocator events (stallscope-cli memory for the figures)");
        const double secs = t.importStats().seconds;
        char imp[160];
        std::snprintf(imp, sizeof imp, "%.3f s, %.0f MB/s of pickle (%s), model %s", secs,
                      secs > 0 ? double(s.textBytes) / secs / 1e6 : 0.0,
                      formatBytes(s.textBytes).c_str(), formatBytes(s.modelBytes).c_str());
        row("import", imp);
        return;
    }
    bool anyDevice = false;
    for (const auto& d : s.devices) {
        if (!d.hasWork) continue;
        anyDevice = true;
        std::string v = "GPU " + std::to_string(d.device);
        if (d.hasProperties)
            v += "  " + d.name + "  (sm_" + std::to_string(d.computeMajor) + std::to_string(d.computeMinor) +
                 ", " + std::to_string(d.numSms) + " SMs, " + formatBytes(static_cast<uint64_t>(d.totalGlobalMem)) + ")";
        const int64_t span = d.lastNs - d.firstNs;
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", span > 0 ? 100.0 * d.busyNs / span : 0.0);
        v += "\n" + std::string(15, ' ') + "busy " + formatDuration(d.busyNs) + " of " +
             formatDuration(span) + " (" + pct +
             " of its first to last GPU work; analyze: of its window), " +
             std::to_string(d.streams) + " stream" + (d.streams == 1 ? "" : "s") + ", " +
             formatCount(d.kernels) + " kernels, " + formatCount(d.memcpys) + " copies, " +
             formatCount(d.memsets) + " memsets";
        row("device", v);
    }
    if (!anyDevice)
        row("device", t.metadata().devices.empty() ? "no GPU work and no deviceProperties (CPU-only trace)"
                                                   : "no GPU work (" + std::to_string(t.metadata().devices.size()) +
                                                         " GPUs listed in deviceProperties)");
    if (!s.host.empty()) row("host", s.host);
    row("rows", std::to_string(s.processes) + " processes, " + std::to_string(s.cpuThreads) + " CPU threads, " +
                    std::to_string(s.gpuStreams) + " GPU streams");
    row("steps", s.profilerSteps ? formatCount(s.profilerSteps) + " ProfilerStep ranges" : "no ProfilerStep ranges");
    row("events", formatCount(s.events) + "  (" + joinCounts(s.byPhase) + ")");
    if (!s.byCategory.empty()) row("categories", joinCounts(s.byCategory));
    row("GPU work", formatCount(s.kernels) + " kernels · " + formatCount(s.memcpys) + " memcpy · " +
                        formatCount(s.memsets) + " memset");
    const auto& d = t.diagnostics();
    if (d.empty()) {
        row("diagnostics", "none");
    } else {
        std::string v;
        for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
            const auto kind = static_cast<model::DiagnosticKind>(k);
            if (!d.count(kind)) continue;
            const auto& info = model::diagnosticInfo(kind);
            if (!v.empty()) v += "\n" + std::string(15, ' ');
            v += formatCount(d.count(kind)) + " " + std::string(info.summary);
            if (!d.examples(kind).empty()) {
                const auto& ex = d.examples(kind).front();
                v += " — e.g. ";
                if (ex.byteOffset != model::Diagnostics::kNoOffset) v += "byte " + std::to_string(ex.byteOffset) + ": ";
                v += ex.detail.substr(0, 80);
            }
        }
        row("diagnostics", v);
    }
    const double secs = t.importStats().seconds;
    char imp[200];
    std::snprintf(imp, sizeof imp, "%.3f s, %.0f MB/s of JSON (%s%s), model %s = %.1f bytes/event", secs,
                  secs > 0 ? s.textBytes / secs / 1e6 : 0.0, formatBytes(s.textBytes).c_str(),
                  s.compressed ? (", " + formatBytes(s.inputBytes) + " gzip").c_str() : "",
                  formatBytes(s.modelBytes).c_str(), s.modelEvents ? double(s.modelBytes) / s.modelEvents : 0.0);
    if (t.metadata().translated)
        std::snprintf(imp, sizeof imp,
                      "%.3f s, a %s file read as %s of Kineto JSON, model %s = %.1f bytes/event",
                      secs, formatBytes(s.inputBytes).c_str(), formatBytes(s.textBytes).c_str(),
                      formatBytes(s.modelBytes).c_str(),
                      s.modelEvents ? double(s.modelBytes) / s.modelEvents : 0.0);
    row("import", imp);
}

} // namespace

int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err) {
    int rc = 0;
    JsonWriter w(true);
    if (options.json) w.beginArray();
    workspace::LoadOptions lo;
    lo.threads = options.threads;
    lo.analyse = false; // what the trace holds, not why the GPU idles
    for (const auto& path : options.paths) {
        auto r = workspace::open(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            rc = 1;
            continue;
        }
        const model::Session& session = r.value().session;
        for (const auto& p : session.problems) err << "stallscope-cli: " << path << ": skipped " << p << "\n";
        for (const auto& e : session.traces) {
            const TraceSummary s = analysis::summarize(*e.trace);
            if (options.json) writeTraceJson(w, e, s, *e.trace);
            else {
                writeTraceText(out, e, s, *e.trace);
                out << "\n";
            }
        }
    }
    if (options.json) {
        w.endArray();
        out << w.str() << "\n";
    }
    return rc;
}

namespace {
int infoMain(Args& args, std::ostream& out, std::ostream& err) {
    InfoOptions o;
    while (args.more()) {
        const std::string a = args.take();
        if (a == "--json")
            o.json = true;
        else if (a == "--threads") {
            // A bound, not the machine's cores: a thread each is a stack each (100,000 of
            // them cannot be started).
            if (!args.unsignedValue(o.threads, kMaxThreads))
                return usageError(kInfoCommand,
                                  "--threads needs a number from 0 (one per core) to 1024", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(kInfoCommand, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.empty()) return usageError(kInfoCommand, "info needs at least one PATH", err);
    return runInfo(o, out, err);
}
} // namespace

extern const Command kInfoCommand{
    "info",
    "  info [--json] [--threads N] PATH...   what a trace holds: format, span, devices, ranks,\n"
    "                                        rows, steps, event counts, diagnostics, import "
    "speed\n",
    infoMain};

} // namespace stallscope::cli
