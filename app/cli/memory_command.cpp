// stallscope-cli memory: where the memory of a trace recorded with profile_memory=True goes
// (analysis/memory.h): peaks, headroom, what was live at the peak, per-operator increase and
// the advice, as text or JSON.
#include "command.h"
#include "memory_compare.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/analysis/memory.h"
#include "stallscope/base/json_writer.h"
#include "stallscope/base/text_format.h"
#include "stallscope/workspace/workspace.h"

#include <algorithm>
#include <iomanip>

namespace stallscope::cli {

extern const Command kMemoryCommand; // defined at the end of this file

namespace {

using base::formatBytes;
using base::formatCount;
using base::formatDuration;

struct MemoryOptions {
    bool json = false;
    bool events = false;
    bool compare = false;
    unsigned top = 10;
    unsigned threads = 0;
    std::vector<std::string> paths;
};

std::string bytes(int64_t b) {
    // 0 - b in unsigned arithmetic: INT64_MIN has no positive int64_t.
    return b < 0 ? "-" + formatBytes(uint64_t(0) - uint64_t(b)) : formatBytes(uint64_t(b));
}

/// Where a block live at the peak was allocated: the snapshot stack's frame of the program,
/// or the trace's frame and operator.
std::string whereText(const model::Trace& t, const analysis::MemoryEventRow& e) {
    if (const model::AllocatorSnapshot* snap = t.allocatorSnapshot()) {
        const auto f = snap->userFrame(e.stack);
        return f ? snap->frameText(*f) : "(no Python frame)";
    }
    std::string s;
    if (e.frame.valid()) s = std::string(t.str(t.slices().name[e.frame.index()]));
    if (e.op.valid())
        s += (s.empty() ? "" : " › ") + std::string(t.str(t.slices().name[e.op.index()]));
    return s.empty() ? "-" : s;
}

void writeLargest(std::ostream& out, const model::Trace& t, const analysis::DeviceMemory& d,
                  size_t top) {
    if (d.largestAtPeak.empty()) return;
    out << "  largest blocks live at the allocated peak:\n";
    for (size_t i = 0; i < d.largestAtPeak.size() && i < top; ++i) {
        const analysis::MemoryEventRow& e = d.rows[d.largestAtPeak[i]];
        out << "    " << std::setw(10) << bytes(e.bytes) << "  " << whereText(t, e) << "\n";
    }
}

/// An allocator snapshot's state when it was taken, and its out-of-memory events.
void writeAllocator(std::ostream& out, const model::Trace& t, const analysis::DeviceMemory& d) {
    if (!d.allocator) return;
    const analysis::AllocatorState& a = *d.allocator;
    out << "  allocator when the snapshot was taken: " << bytes(a.reserved) << " reserved in "
        << formatCount(a.segments) << " segments (" << formatCount(a.largeSegments) << " large"
        << (a.expandableSegments ? ", " + formatCount(a.expandableSegments) + " expandable" : "")
        << "), " << bytes(a.allocated) << " allocated in " << formatCount(a.blocksAllocated)
        << " blocks";
    if (a.blocksPendingFree) out << " (+" << formatCount(a.blocksPendingFree) << " pending free)";
    out << "\n    free in segments " << bytes(a.inactiveBytes) << " in "
        << formatCount(a.blocksInactive) << " blocks: " << bytes(a.emptySegmentBytes) << " in "
        << formatCount(a.emptySegments) << " segments holding no allocation, "
        << bytes(a.fragmentBytes) << " between allocations (largest " << bytes(a.largestFragment)
        << ")\n";
    out << "    expandable_segments: "
        << (a.expandableSetting ? (*a.expandableSetting ? "True" : "False") : "not recorded")
        << "\n";
    const model::AllocatorSnapshot* snap = t.allocatorSnapshot();
    for (const analysis::MemoryOom& o : d.ooms) {
        out << "  OUT OF MEMORY: " << bytes(o.requested) << " requested";
        if (o.deviceFree >= 0) out << " with " << bytes(o.deviceFree) << " free on the device";
        const auto f = snap->userFrame(o.stack);
        out << (f ? " at " + snap->frameText(*f) : "") << "\n";
    }
}

void writeText(std::ostream& out, const model::TraceEntry& e, const analysis::AnalysisResult& r,
               const analysis::MemoryAnalysis& m, const MemoryOptions& o) {
    const model::Trace& t = *e.trace;
    out << "memory: " << e.path << (e.rank >= 0 ? " (rank " + std::to_string(e.rank) + ")" : "")
        << "\n";
    if (m.empty()) {
        out << "  no allocator events in this trace: record with "
               "torch.profiler.profile(profile_memory=True)"
            << (t.memorySamples().empty() ? "" : " (none in the analysed window)") << "\n";
    }
    const int64_t origin = r.window.startNs;
    for (const analysis::DeviceMemory& d : m.devices) {
        out << "\n" << d.label;
        if (d.capacity > 0) out << " · " << formatBytes(uint64_t(d.capacity)) << " of memory";
        out << "\n";
        out << "  events " << formatCount(d.events) << ": " << formatCount(d.allocations)
            << " allocations (" << bytes(d.allocatedBytes) << "), " << formatCount(d.frees)
            << " frees (" << bytes(d.freedBytes) << ")\n";
        if (d.peakAllocated >= 0) {
            out << "  peak allocated " << bytes(d.peakAllocated) << " at +"
                << formatDuration(d.peakAllocatedAt - origin)
                << (d.peakStep >= 0 ? " (step #" + std::to_string(d.peakStep) + ")" : "");
            if (d.capacity > 0)
                out << " · " << std::fixed << std::setprecision(1)
                    << 100.0 * double(d.peakAllocated) / double(d.capacity) << " % of the device";
            out << "\n";
        }
        if (d.peakReserved > 0)
            out << "  peak reserved " << bytes(d.peakReserved) << " at +"
                << formatDuration(d.peakReservedAt - origin) << " (allocated then "
                << bytes(d.allocatedAtPeakReserved) << ")\n";
        if (d.peakAllocated >= 0) {
            out << "  live at the allocated peak: " << bytes(d.liveAttributed)
                << " allocated during the trace";
            if (d.liveBeforeTrace > 0)
                out << ", " << bytes(d.liveBeforeTrace)
                    << " allocated before it began (not attributable)";
            out << "\n";
            for (auto [title, groups] : {std::pair{"by operator", &d.liveByOperator},
                                         std::pair{"by Python frame", &d.liveByFrame},
                                         std::pair{"by category", &d.liveByCategory}}) {
                if (groups->empty()) continue;
                out << "    " << title << ":\n";
                for (size_t i = 0; i < groups->size() && i < o.top; ++i)
                    out << "      " << std::setw(10) << bytes((*groups)[i].bytes) << "  "
                        << std::setw(5) << (*groups)[i].blocks << " blocks  " << (*groups)[i].name
                        << "\n";
                if (groups->size() > o.top)
                    out << "      … " << groups->size() - o.top << " more (--top N)\n";
            }
        }
        if (!d.operators.empty()) {
            out << "  operators (self: their own allocations and frees; total: at any depth "
                   "inside them):\n";
            out << "    " << std::left << std::setw(44) << "operator" << std::right << std::setw(7)
                << "calls" << std::setw(8) << "allocs" << std::setw(12) << "allocated"
                << std::setw(12) << "self +" << std::setw(12) << "total +"
                << "\n";
            for (size_t i = 0; i < d.operators.size() && i < o.top; ++i) {
                const analysis::MemoryOperatorRow& op = d.operators[i];
                std::string name = op.name;
                if (name.size() > 43) name = name.substr(0, 42) + "…";
                out << "    " << std::left << std::setw(44) << name << std::right << std::setw(7)
                    << op.calls << std::setw(8) << op.allocations << std::setw(12)
                    << bytes(op.allocatedBytes) << std::setw(12) << bytes(op.selfIncrease)
                    << std::setw(12) << bytes(op.totalIncrease) << "\n";
            }
            if (d.operators.size() > o.top)
                out << "    … " << d.operators.size() - o.top << " more (--top N)\n";
        }
        writeLargest(out, t, d, o.top);
        writeAllocator(out, t, d);
        for (const analysis::MemoryAdvice& a : d.advice)
            out << "  ▸ " << a.text << "\n    Fix: " << a.fix << "\n";
        if (o.events) {
            out << "  events (time from the window's start, bytes, allocated, reserved, "
                   "operator):\n";
            for (const analysis::MemoryEventRow& ev : d.rows) {
                out << "    +" << formatDuration(ev.ts - origin) << "  " << std::setw(10)
                    << bytes(ev.bytes) << "  " << std::setw(10) << bytes(ev.totalAllocated) << "  "
                    << std::setw(10) << bytes(ev.totalReserved) << "  "
                    << (ev.op.valid() ? t.str(t.slices().name[ev.op.index()]) : "-") << "\n";
            }
        }
    }
    for (const auto& n : m.notes) out << "  note: " << n << "\n";
}

int runMemory(const MemoryOptions& o, std::ostream& out, std::ostream& err) {
    int rc = 0;
    base::JsonWriter w(true);
    if (o.json) w.beginArray();
    workspace::LoadOptions lo;
    lo.threads = o.threads;
    for (const auto& path : o.paths) {
        auto r = workspace::open(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            rc = 1;
            continue;
        }
        for (const auto& p : r.value().session.problems)
            err << "stallscope-cli: " << path << ": skipped " << p << "\n";
        for (const workspace::AnalysedTrace& at : r.value().traces) {
            const analysis::MemoryAnalysis m =
                analysis::analyzeMemory(*at.entry.trace, *at.analysis);
            if (o.json) {
                w.beginObject();
                w.key("path").value(at.entry.path);
                w.key("rank").value(at.entry.rank);
                w.key("window_start_ns").value(at.analysis->window.startNs);
                w.key("window_end_ns").value(at.analysis->window.endNs);
                w.key("memory");
                analysis::writeMemoryJson(w, *at.entry.trace, m, o.top, o.events);
                w.endObject();
            } else {
                writeText(out, at.entry, *at.analysis, m, o);
                out << "\n";
            }
        }
    }
    if (o.json) {
        w.endArray();
        out << w.str() << "\n";
    }
    return rc;
}

/// Two recordings of one change, device by device (memory_compare.h).
int runCompare(const MemoryOptions& o, std::ostream& out, std::ostream& err) {
    workspace::LoadOptions lo;
    lo.threads = o.threads;
    std::vector<workspace::Workspace> loaded;
    std::vector<analysis::MemoryAnalysis> memory;
    for (const auto& path : o.paths) {
        auto r = workspace::open(path, lo);
        if (!r) {
            err << "stallscope-cli: " << path << ": " << r.error().message << "\n";
            return 1;
        }
        if (r.value().traces.size() != 1) {
            err << "stallscope-cli: " << path << ": --compare takes one trace or snapshot per "
                << "side (this holds " << r.value().traces.size() << ")\n";
            return 1;
        }
        const workspace::AnalysedTrace& at = r.value().traces.front();
        memory.push_back(analysis::analyzeMemory(*at.entry.trace, *at.analysis));
        loaded.push_back(std::move(r.value()));
    }
    const auto side = [&](size_t i) {
        return MemorySide{o.paths[i], loaded[i].traces.front().entry.trace.get(), &memory[i]};
    };
    writeMemoryComparison(out, side(0), side(1), o.json, o.top);
    return 0;
}

int memoryMain(Args& args, std::ostream& out, std::ostream& err) {
    MemoryOptions o;
    while (args.more()) {
        const std::string a = args.take();
        if (a == "--json")
            o.json = true;
        else if (a == "--events")
            o.events = true;
        else if (a == "--compare")
            o.compare = true;
        else if (a == "--top") {
            if (!args.unsignedValue(o.top, 1000000) || o.top == 0)
                return usageError(kMemoryCommand, "--top needs a number of rows (1 or more)", err);
        } else if (a == "--threads") {
            if (!args.unsignedValue(o.threads, kMaxThreads))
                return usageError(kMemoryCommand,
                                  "--threads needs a number from 0 (one per core) to 1024", err);
        } else if (a.size() > 1 && a[0] == '-')
            return usageError(kMemoryCommand, "unknown option " + a, err);
        else
            o.paths.push_back(a);
    }
    if (o.paths.empty()) return usageError(kMemoryCommand, "memory needs at least one PATH", err);
    if (o.compare && o.paths.size() != 2)
        return usageError(kMemoryCommand, "--compare needs two paths: BEFORE AFTER", err);
    return o.compare ? runCompare(o, out, err) : runMemory(o, out, err);
}

} // namespace

extern const Command kMemoryCommand{
    "memory",
    "  memory [--json] [--top N] [--events] PATH...\n"
    "  memory --compare [--json] [--top N] BEFORE AFTER\n"
    "                                        where the GPU memory goes (traces recorded with\n"
    "                                        profile_memory=True): peaks, headroom, what was\n"
    "                                        live at the peak, per-operator increase, advice;\n"
    "                                        allocator snapshots and memory timelines too;\n"
    "                                        --compare: two of one change, before -> after\n",
    memoryMain};

} // namespace stallscope::cli
