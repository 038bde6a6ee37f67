#include "memory_compare.h"

#include "stallscope/base/json_writer.h"
#include "stallscope/base/text_format.h"

#include <iomanip>
#include <map>
#include <vector>

namespace stallscope::cli {

namespace {

using analysis::DeviceMemory;
using analysis::MemoryLiveGroup;

std::string bytes(int64_t b) {
    return b < 0 ? "-" + base::formatBytes(uint64_t(0) - uint64_t(b))
                 : base::formatBytes(uint64_t(b));
}

/// One figure of a device, before and after (-1: not said on that side).
struct Figure {
    const char* key;  // JSON
    const char* name; // text
    int64_t before = -1, after = -1;
};

std::vector<Figure> figures(const DeviceMemory* b, const DeviceMemory* a) {
    auto pick = [](const DeviceMemory* d, auto f) { return d ? f(*d) : int64_t(-1); };
    auto state = [](const DeviceMemory* d, auto f) {
        return d && d->allocator ? f(*d->allocator) : int64_t(-1);
    };
    using AS = analysis::AllocatorState;
    return {
        {"peak_allocated_bytes", "peak allocated", pick(b, [](auto& d) { return d.peakAllocated; }),
         pick(a, [](auto& d) { return d.peakAllocated; })},
        {"peak_reserved_bytes", "peak reserved", pick(b, [](auto& d) { return d.peakReserved; }),
         pick(a, [](auto& d) { return d.peakReserved; })},
        {"allocated_bytes", "bytes allocated (sum of allocations)",
         pick(b, [](auto& d) { return d.allocatedBytes; }),
         pick(a, [](auto& d) { return d.allocatedBytes; })},
        {"allocations", "allocations", pick(b, [](auto& d) { return int64_t(d.allocations); }),
         pick(a, [](auto& d) { return int64_t(d.allocations); })},
        {"snapshot_reserved_bytes", "reserved when the snapshot was taken",
         state(b, [](const AS& s) { return s.reserved; }),
         state(a, [](const AS& s) { return s.reserved; })},
        {"snapshot_allocated_bytes", "allocated when the snapshot was taken",
         state(b, [](const AS& s) { return s.allocated; }),
         state(a, [](const AS& s) { return s.allocated; })},
        {"snapshot_empty_segment_bytes", "in segments holding no allocation",
         state(b, [](const AS& s) { return s.emptySegmentBytes; }),
         state(a, [](const AS& s) { return s.emptySegmentBytes; })},
        {"snapshot_fragment_bytes", "free between allocations (fragments)",
         state(b, [](const AS& s) { return s.fragmentBytes; }),
         state(a, [](const AS& s) { return s.fragmentBytes; })},
    };
}

/// The groups of both sides by name, largest after (then before) first.
struct GroupRow {
    std::string name;
    int64_t before = 0, after = 0;
};

std::vector<GroupRow> groups(const std::vector<MemoryLiveGroup>* b,
                             const std::vector<MemoryLiveGroup>* a) {
    std::map<std::string, GroupRow> by;
    if (b)
        for (const MemoryLiveGroup& g : *b) by[g.name].name = g.name, by[g.name].before = g.bytes;
    if (a)
        for (const MemoryLiveGroup& g : *a) by[g.name].name = g.name, by[g.name].after = g.bytes;
    std::vector<GroupRow> out;
    for (auto& [name, row] : by) out.push_back(row);
    std::stable_sort(out.begin(), out.end(), [](const GroupRow& x, const GroupRow& y) {
        return std::max(x.before, x.after) > std::max(y.before, y.after);
    });
    return out;
}

const DeviceMemory* deviceOf(const analysis::MemoryAnalysis& m, int type, int32_t device) {
    for (const DeviceMemory& d : m.devices)
        if (d.deviceType == type && d.device == device) return &d;
    return nullptr;
}

/// The largest blocks live at the peak of one side: "2.1 GB forward (model.py:42)".
std::vector<std::string> largest(const model::Trace& t, const DeviceMemory* d, size_t top) {
    std::vector<std::string> out;
    if (!d) return out;
    for (size_t i = 0; i < d->largestAtPeak.size() && i < top; ++i) {
        const analysis::MemoryEventRow& e = d->rows[d->largestAtPeak[i]];
        std::string where;
        if (const model::AllocatorSnapshot* snap = t.allocatorSnapshot()) {
            const auto f = snap->userFrame(e.stack);
            where = f ? snap->frameText(*f) : "(no Python frame)";
        } else if (e.op.valid()) {
            where = std::string(t.str(t.slices().name[e.op.index()]));
        }
        out.push_back(bytes(e.bytes) + " " + where);
    }
    return out;
}

std::string valueText(const Figure& f, bool after) {
    const int64_t v = after ? f.after : f.before;
    return std::string_view(f.key) == "allocations" ? base::formatCount(uint64_t(v)) : bytes(v);
}

std::string change(int64_t b, int64_t a) {
    if (b < 0 || a < 0) return "";
    if (b == 0) return a == 0 ? "  (same)" : "";
    char pct[32];
    std::snprintf(pct, sizeof pct, "  (%+.1f %%)", 100.0 * double(a - b) / double(b));
    return pct;
}

} // namespace

void writeMemoryComparison(std::ostream& out, const MemorySide& before, const MemorySide& after,
                           bool json, size_t top) {
    // Devices of either side, GPUs by id then the host.
    std::map<std::pair<int, int32_t>, std::string> devices;
    for (const auto* m : {before.memory, after.memory})
        for (const DeviceMemory& d : m->devices)
            devices[{d.deviceType == 1 ? 0 : 1, d.device}] = d.label;
    base::JsonWriter w(true);
    if (json) {
        w.beginObject();
        w.key("before").value(before.path);
        w.key("after").value(after.path);
        w.key("devices").beginArray();
    } else {
        out << "memory: " << before.path << " -> " << after.path << "\n";
    }
    for (const auto& [key, label] : devices) {
        const int type = key.first == 0 ? 1 : 0;
        const DeviceMemory* b = deviceOf(*before.memory, type, key.second);
        const DeviceMemory* a = deviceOf(*after.memory, type, key.second);
        const auto figs = figures(b, a);
        const std::pair<const char*, std::vector<GroupRow>> tables[] = {
            {"live_by_frame", groups(b ? &b->liveByFrame : nullptr, a ? &a->liveByFrame : nullptr)},
            {"live_by_operator",
             groups(b ? &b->liveByOperator : nullptr, a ? &a->liveByOperator : nullptr)},
            {"live_by_category",
             groups(b ? &b->liveByCategory : nullptr, a ? &a->liveByCategory : nullptr)}};
        if (json) {
            w.beginObject();
            w.key("label").value(label);
            for (const Figure& f : figs) {
                w.key(f.key).beginArray();
                w.value(f.before);
                w.value(f.after);
                w.endArray();
            }
            for (const auto& [name, rows] : tables) {
                w.key(name).beginArray();
                for (size_t i = 0; i < rows.size() && i < top; ++i) {
                    w.beginObject();
                    w.key("name").value(rows[i].name);
                    w.key("before_bytes").value(rows[i].before);
                    w.key("after_bytes").value(rows[i].after);
                    w.endObject();
                }
                w.endArray();
            }
            w.endObject();
            continue;
        }
        out << "\n" << label << (b ? "" : " (only after)") << (a ? "" : " (only before)") << "\n";
        for (const Figure& f : figs) {
            if (f.before < 0 && f.after < 0) continue;
            out << "  " << std::left << std::setw(40) << f.name << std::right << std::setw(11)
                << (f.before < 0 ? "-" : valueText(f, false)) << "  ->" << std::setw(11)
                << (f.after < 0 ? "-" : valueText(f, true)) << change(f.before, f.after) << "\n";
        }
        for (const auto& [name, rows] : tables) {
            if (rows.empty()) continue;
            out << "  live at the peak by " << (name + 8) << " (before -> after):\n";
            for (size_t i = 0; i < rows.size() && i < top; ++i)
                out << "    " << std::setw(10) << bytes(rows[i].before) << " -> " << std::setw(10)
                    << bytes(rows[i].after) << "  " << rows[i].name << "\n";
            if (rows.size() > top) out << "    … " << rows.size() - top << " more (--top N)\n";
        }
        for (const auto& [side, d, t] :
             {std::tuple{"before", b, before.trace}, std::tuple{"after", a, after.trace}}) {
            const auto rows = largest(*t, d, std::min<size_t>(top, 5));
            if (rows.empty()) continue;
            out << "  largest blocks live at the peak, " << side << ":\n";
            for (const std::string& r : rows) out << "    " << r << "\n";
        }
    }
    if (json) {
        w.endArray();
        w.endObject();
        out << w.str() << "\n";
    }
}

} // namespace stallscope::cli
