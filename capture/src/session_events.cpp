#include "session_events.h"

#include "occupancy.h"

#include "stallscope/base/json_writer.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace stallscope::capture::detail {

using model::EventKind;
using pb::Activity;

namespace {

constexpr std::array<std::string_view, 11> kCopyKinds{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
constexpr std::array<std::string_view, 8> kMemoryKinds{"Unknown", "Pageable", "Pinned",        "Device",
                                                       "Array",   "Managed",  "Device Static", "Managed Static"};

size_t clampIndex(int v, size_t n) { return v >= 0 && static_cast<size_t>(v) < n ? static_cast<size_t>(v) : 0; }

void appendInt(std::string& out, int64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
}

/// A double as JSON: shortest text that reads back as the same double; non-finite as 0.
void appendDouble(std::string& out, double v) {
    if (!(v == v) || v > 1e300 || v < -1e300) v = 0;
    char buf[40];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
}

/// Builds one event object: {"ph", "cat", "name", "pid", "tid", "ts"[, "dur"], "args"}.
class EventText {
public:
    EventText(std::string& out, int64_t base) : m_out(out), m_base(base) {}

    void begin(char ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t start) {
        m_out += "{\"ph\": \"";
        m_out += ph;
        m_out += "\", \"cat\": ";
        appendJsonString(m_out, cat);
        m_out += ", \"name\": ";
        appendJsonString(m_out, name);
        m_out += ", \"pid\": ";
        appendInt(m_out, pid);
        m_out += ", \"tid\": ";
        appendInt(m_out, tid);
        m_out += ", \"ts\": ";
        appendMicros(m_out, start - m_base);
    }
    void duration(int64_t dur) {
        m_out += ", \"dur\": ";
        appendMicros(m_out, dur);
    }
    void raw(std::string_view json) { m_out += json; }
    void key(std::string_view k) {
        m_out += m_args ? ", " : ", \"args\": {";
        m_args = true;
        appendJsonString(m_out, k);
        m_out += ": ";
    }
    void arg(std::string_view k, int64_t v) { key(k), appendInt(m_out, v); }
    void argDouble(std::string_view k, double v) { key(k), appendDouble(m_out, v); }
    void argString(std::string_view k, std::string_view v) { key(k), appendJsonString(m_out, v); }
    void argTriple(std::string_view k, int64_t x, int64_t y, int64_t z) {
        key(k);
        m_out += '[';
        appendInt(m_out, x), m_out += ", ", appendInt(m_out, y), m_out += ", ", appendInt(m_out, z);
        m_out += ']';
    }
    void end() { m_out += m_args ? "}}" : ", \"args\": {}}"; }

private:
    std::string& m_out;
    int64_t m_base;
    bool m_args = false;
};

/// "[[8, 3, 224, 224], []]": a JSON list of integers and such lists (written into the
/// event's args as it is, so it must be valid JSON: "[1 2]" or "[[1]2]" are not).
class ShapeList {
public:
    static bool valid(std::string_view s) {
        ShapeList p(s);
        p.blanks();
        if (!p.list(0)) return false;
        p.blanks();
        return p.m_at == s.size();
    }

private:
    explicit ShapeList(std::string_view s) : m_s(s) {}
    void blanks() {
        while (m_at < m_s.size() && m_s[m_at] == ' ') ++m_at;
    }
    bool eat(char c) {
        blanks();
        if (m_at < m_s.size() && m_s[m_at] == c) return ++m_at, true;
        return false;
    }
    bool integer() {
        blanks();
        if (m_at < m_s.size() && m_s[m_at] == '-') ++m_at;
        const size_t digits = m_at;
        while (m_at < m_s.size() && m_s[m_at] >= '0' && m_s[m_at] <= '9') ++m_at;
        return m_at > digits;
    }
    bool list(int depth) {
        if (depth > 16 || !eat('[')) return false;
        if (eat(']')) return true;
        do {
            blanks();
            const bool ok = m_at < m_s.size() && m_s[m_at] == '[' ? list(depth + 1) : integer();
            if (!ok) return false;
        } while (eat(','));
        return eat(']');
    }

    std::string_view m_s;
    size_t m_at = 0;
};

/// The category as written and the row an activity goes to.
struct Placement {
    std::string_view category;
    bool gpuRow = false;
    bool instant = false;
};

bool place(const Activity& a, Placement& p) {
    switch (a.kind()) {
    case Activity::KERNEL: p = {"kernel", true}; return true;
    case Activity::MEMCPY: p = {"gpu_memcpy", true}; return true;
    case Activity::MEMSET: p = {"gpu_memset", true}; return true;
    case Activity::SYNCHRONIZATION: p = {"cuda_sync", true}; return true;
    case Activity::RUNTIME: p = {"cuda_runtime"}; return true;
    case Activity::DRIVER: p = {"cuda_driver"}; return true;
    case Activity::NVTX_RANGE: p = {"user_annotation"}; return true;
    case Activity::NVTX_MARK: p = {"cpu_instant_event", false, true}; return true;
    case Activity::OVERHEAD: p = {"overhead"}; return true;
    case Activity::CPU_OP: p = {"cpu_op"}; return true;
    case Activity::USER_ANNOTATION: p = {"user_annotation"}; return true;
    default: return false;
    }
}

/// Kernel args; returns the model's `extra` word.
uint64_t kernelArgs(EventText& t, const EncodeInput& in) {
    const Activity& a = *in.activity;
    t.arg("queued", 0);
    t.arg("device", a.device());
    t.arg("context", a.context());
    t.arg("stream", a.stream());
    if (in.correlation) t.arg("correlation", in.correlation);
    t.arg("registers per thread", a.registers_per_thread());
    t.arg("shared memory", int64_t(a.static_shared_memory()) + a.dynamic_shared_memory());
    const KernelFigures f = kernelFigures(a, in.device);
    float bps = -1, occ = -1;
    if (f.blocksPerSm >= 0) {
        // What the importer reads back: the text of the number, as a float.
        std::string num;
        appendDouble(num, f.blocksPerSm);
        bps = std::strtof(num.c_str(), nullptr);
        t.key("blocks per SM"), t.raw(num);
        t.argDouble("warps per SM", f.warpsPerSm);
    }
    t.argTriple("grid", a.grid_x(), a.grid_y(), a.grid_z());
    t.argTriple("block", a.block_x(), a.block_y(), a.block_z());
    if (f.occupancyPct >= 0) {
        t.arg("est. achieved occupancy %", f.occupancyPct);
        occ = static_cast<float>(f.occupancyPct);
    }
    return bps >= 0 || occ >= 0 ? model::SliceExtra::packKernel(bps, occ) : model::SliceExtra::kNone;
}

/// Copy and memset args; returns the bytes.
uint64_t copyArgs(EventText& t, const EncodeInput& in, int64_t dur) {
    const Activity& a = *in.activity;
    t.arg("device", a.device());
    t.arg("context", a.context());
    t.arg("stream", a.stream());
    if (in.correlation) t.arg("correlation", in.correlation);
    t.arg("bytes", static_cast<int64_t>(a.bytes()));
    if (dur > 0) t.argDouble("memory bandwidth (GB/s)", double(a.bytes()) / double(dur));
    if (a.kind() == Activity::MEMCPY && a.copy_kind() == Activity::PTOP) t.arg("dst device", a.dst_device());
    return a.bytes();
}

void syncArgs(EventText& t, const EncodeInput& in, std::string_view name) {
    const Activity& a = *in.activity;
    t.argString("cuda_sync_kind", name);
    t.arg("stream", a.stream());
    if (in.correlation) t.arg("correlation", in.correlation);
    t.arg("device", a.device());
    t.arg("context", a.context());
}

void cpuArgs(EventText& t, const EncodeInput& in) {
    const Activity& a = *in.activity;
    if (a.kind() == Activity::CPU_OP) {
        if (a.sequence_number() >= 0) t.arg("Sequence number", a.sequence_number());
        if (!a.input_shapes().empty()) {
            if (ShapeList::valid(a.input_shapes())) t.key("Input Dims"), t.raw(a.input_shapes());
            else t.argString("Input Dims", a.input_shapes());
        }
    }
    if (in.correlation) t.arg("correlation", in.correlation);
}

std::string_view eventName(const Activity& a, std::string_view given) {
    if (a.kind() == Activity::MEMCPY && (given.empty() || a.copy_kind() != Activity::COPY_UNKNOWN))
        return memcpyName(a.copy_kind(), a.src_kind(), a.dst_kind());
    if (a.kind() == Activity::MEMSET && given.empty())
        return memsetName(a.dst_kind() != Activity::MEMORY_UNKNOWN ? a.dst_kind() : a.src_kind());
    if (a.kind() == Activity::SYNCHRONIZATION && given.empty()) return "Stream Sync";
    return given;
}

} // namespace

void appendJsonString(std::string& out, std::string_view s) { base::JsonWriter::escape(out, s); }

void appendMicros(std::string& out, int64_t ns) {
    const bool neg = ns < 0;
    const uint64_t a = neg ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
    char buf[32];
    const int n = std::snprintf(buf, sizeof buf, "%s%llu.%03llu", neg ? "-" : "",
                                static_cast<unsigned long long>(a / 1000), static_cast<unsigned long long>(a % 1000));
    out.append(buf, static_cast<size_t>(n));
}

std::string_view memoryKindName(int k) { return kMemoryKinds[clampIndex(k, kMemoryKinds.size())]; }

std::string_view memcpyName(int copyKind, int srcKind, int dstKind) {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (auto c : kCopyKinds)
            for (auto s : kMemoryKinds)
                for (auto d : kMemoryKinds)
                    v.push_back("Memcpy " + std::string(c) + " (" + std::string(s) + " -> " + std::string(d) + ")");
        return v;
    }();
    const size_t n = kMemoryKinds.size();
    return names[(clampIndex(copyKind, kCopyKinds.size()) * n + clampIndex(srcKind, n)) * n + clampIndex(dstKind, n)];
}

std::string_view memsetName(int k) {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (auto m : kMemoryKinds) v.push_back("Memset (" + std::string(m) + ")");
        return v;
    }();
    return names[clampIndex(k, names.size())];
}

bool encodeActivity(const EncodeInput& in, std::string& text, PendingEvent& ev, std::string& problem) {
    const Activity& a = *in.activity;
    Placement p;
    if (!place(a, p)) {
        problem = "an activity of unknown kind " + std::to_string(static_cast<int>(a.kind()));
        return false;
    }
    // Times the file can hold: ts relative to baseTimeNanoseconds and the duration must be
    // int64 ns, or the importer would read another time back (or none).
    int64_t relative = 0, dur = 0;
    if (__builtin_sub_overflow(a.start_ns(), in.baseNs, &relative) ||
        (a.end_ns() > a.start_ns() && __builtin_sub_overflow(a.end_ns(), a.start_ns(), &dur))) {
        problem = "an activity at a time out of range (start " + std::to_string(a.start_ns()) + " ns, end " +
                  std::to_string(a.end_ns()) + " ns)";
        return false;
    }
    ev = PendingEvent{};
    ev.instant = p.instant;
    ev.gpuRow = p.gpuRow;
    ev.category = in.category.empty() ? p.category : in.category;
    ev.kind = model::kindFromCategory(ev.category, true);
    ev.launchSide = model::isLaunchSide(ev.kind);
    ev.name = eventName(a, in.name);
    ev.pid = p.gpuRow ? std::max(a.device(), 0) : a.kind() == Activity::OVERHEAD ? -1
                                                  : (a.pid() != 0 ? a.pid() : in.defaultPid);
    ev.tid = p.gpuRow ? a.stream() : a.tid();
    ev.start = a.start_ns();
    ev.dur = dur;
    if (in.correlation) ev.correlation = in.correlation;

    text += ",\n";
    ev.srcOffset = text.size();
    EventText t(text, in.baseNs);
    t.begin(p.instant ? 'i' : 'X', ev.category, ev.name, ev.pid, ev.tid, ev.start);
    if (p.instant) t.raw(", \"s\": \"t\"");
    else t.duration(ev.dur);
    if (a.external_id() != 0) t.arg("External id", static_cast<int64_t>(a.external_id()));
    uint64_t extra = a.external_id() != 0 ? a.external_id() : model::SliceExtra::kNone;
    switch (a.kind()) {
    case Activity::KERNEL: extra = kernelArgs(t, in); break;
    case Activity::MEMCPY:
    case Activity::MEMSET: extra = copyArgs(t, in, ev.dur); break;
    case Activity::SYNCHRONIZATION: syncArgs(t, in, ev.name); break;
    default: cpuArgs(t, in); break;
    }
    t.end();
    ev.srcLength = static_cast<uint32_t>(text.size() - ev.srcOffset);
    // The importer's rule for the extra word goes by the kind the category names.
    if (ev.kind != EventKind::Kernel && ev.kind != EventKind::Memcpy && ev.kind != EventKind::Memset)
        extra = a.external_id() != 0 ? a.external_id() : model::SliceExtra::kNone;
    else if ((ev.kind == EventKind::Memcpy || ev.kind == EventKind::Memset) &&
             a.kind() != Activity::MEMCPY && a.kind() != Activity::MEMSET)
        extra = model::SliceExtra::kNone;
    else if (ev.kind == EventKind::Kernel && a.kind() != Activity::KERNEL)
        extra = model::SliceExtra::kNone;
    ev.extra = extra;
    return true;
}

} // namespace stallscope::capture::detail
