// PyTorch CUDA allocator snapshots (torch.cuda.memory._dump_snapshot pickles, the HTML
// pages of torch.cuda._memory_viz that embed one, and torch.cuda.memory_snapshot()'s list of
// segments) read as a trace of memory events: the pickle through the restricted reader
// (pickle_reader.h: builtins only, nothing constructed or called), its values into
// model::AllocatorSnapshot, and its history replayed into model::MemorySample so that the
// memory analysis, the Memory panel and the CLI read it as they read a profile_memory trace.
//
// The replay (docs/analysis.md "Allocator snapshots"), per device, in the order of
// device_traces: allocated memory rises at `alloc` and falls at `free_completed` (`free` in
// older layouts); reserved memory rises at `segment_alloc` / `segment_map` and falls at
// `segment_free` / `segment_unmap`. What was allocated before the history began is what the
// history frees without having allocated it, plus the blocks active in the segments at the
// end that the history did not allocate; what was reserved before is the segments' total at
// the end less the history's net segment change.
#include "memory_snapshot_importer.h"

#include "byte_stream.h"
#include "content_signatures.h"
#include "pickle_header.h"
#include "pickle_reader.h"

#include "stallscope/base/utf8.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"
#include "stallscope/model/allocator_snapshot.h"
#include "stallscope/model/time_math.h"
#include "stallscope/model/trace_builder.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <unordered_map>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

using model::AllocatorSnapshot;
using model::DiagnosticKind;
using model::satAdd;
using model::satMul;
using model::satSub;
using model::SnapshotAction;
using pickle::Document;
using pickle::Kind;
using Id = Document::Id;

SnapshotAction actionOf(std::string_view a) {
    static const std::pair<std::string_view, SnapshotAction> table[] = {
        {"alloc", SnapshotAction::Alloc},
        {"free_requested", SnapshotAction::FreeRequested},
        {"free_completed", SnapshotAction::FreeCompleted},
        {"free", SnapshotAction::FreeCompleted},
        {"segment_alloc", SnapshotAction::SegmentAlloc},
        {"segment_free", SnapshotAction::SegmentFree},
        {"segment_map", SnapshotAction::SegmentMap},
        {"segment_unmap", SnapshotAction::SegmentUnmap},
        {"oom", SnapshotAction::Oom},
        {"snapshot", SnapshotAction::Snapshot},
    };
    for (const auto& [name, action] : table)
        if (name == a) return action;
    return SnapshotAction::Other;
}

model::BlockState stateOf(std::string_view s) {
    if (s == "active_allocated") return model::BlockState::ActiveAllocated;
    if (s == "active_pending_free") return model::BlockState::ActivePendingFree;
    if (s == "inactive") return model::BlockState::Inactive;
    return model::BlockState::Other;
}

/// The snapshot's values into the model, each malformed field counted, never guessed.
class Interpreter {
public:
    Interpreter(const Document& doc, AllocatorSnapshot& snap, model::Diagnostics& diag)
        : m_doc(doc), m_snap(snap), m_diag(diag) {}

    std::optional<Error> run() {
        const Id root = m_doc.root();
        if (m_doc.kind(root) == Kind::List) { // torch.cuda.memory_snapshot(): segments only
            m_snap.segmentsOnly = true;
            segments(root);
            return std::nullopt;
        }
        if (m_doc.kind(root) != Kind::Dict)
            return Error{ErrorKind::InvalidStructure,
                         "pickle: the top-level value is a " +
                             std::string(pickle::kindName(m_doc.kind(root))) +
                             ", not an allocator snapshot (a dict with \"segments\" and "
                             "\"device_traces\")"};
        const auto segs = m_doc.get(root, "segments");
        const auto traces = m_doc.get(root, "device_traces");
        if (!segs && !traces)
            return Error{ErrorKind::InvalidStructure,
                         "pickle: a dict without \"segments\" or \"device_traces\": not an "
                         "allocator snapshot (torch.cuda.memory._dump_snapshot)"};
        if (segs) segments(*segs);
        if (traces) deviceTraces(*traces);
        if (auto s = m_doc.get(root, "allocator_settings")) settings(*s);
        if (auto a = m_doc.get(root, "external_annotations")) annotations(*a);
        return std::nullopt;
    }

private:
    int64_t integer(Id dict, std::string_view key, int64_t fallback, bool required,
                    std::string_view where) {
        const auto v = m_doc.get(dict, key);
        if (!v) {
            if (required)
                m_diag.add(DiagnosticKind::MissingField, model::Diagnostics::kNoOffset,
                           std::string(where) + " without \"" + std::string(key) + "\"");
            return fallback;
        }
        if (auto i = m_doc.integer(*v)) return *i;
        if (m_doc.kind(*v) != Kind::None)
            m_diag.add(DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                       std::string(where) + " \"" + std::string(key) + "\" is a " +
                           std::string(pickle::kindName(m_doc.kind(*v))) + ", not an int");
        return fallback;
    }

    std::string_view str(Id dict, std::string_view key) {
        const auto v = m_doc.get(dict, key);
        return v ? m_doc.text(*v) : std::string_view{};
    }

    uint32_t frame(Id f) {
        if (m_doc.kind(f) != Kind::Dict) return UINT32_MAX;
        if (auto it = m_frameOf.find(f); it != m_frameOf.end()) return it->second;
        model::SnapshotFrame fr{std::string(str(f, "name")), std::string(str(f, "filename")),
                                integer(f, "line", 0, false, "a frame")};
        std::string key = fr.name + '\0' + fr.filename + '\0' + std::to_string(fr.line);
        auto [it, added] = m_frameByValue.emplace(std::move(key), m_snap.frames.size());
        if (added) m_snap.frames.push_back(std::move(fr));
        m_frameOf.emplace(f, it->second);
        return it->second;
    }

    /// The stack id of a value's "frames" list (0 when it has none).
    uint32_t stackOf(Id owner) {
        auto frames = m_doc.get(owner, "frames");
        if (!frames) { // the 2.0 layout: a block's frames are in its last history entry
            const auto history = m_doc.get(owner, "history");
            if (history && !m_doc.items(*history).empty())
                frames = m_doc.get(m_doc.items(*history).back(), "frames");
        }
        if (!frames || !m_doc.isList(*frames) || m_doc.items(*frames).empty()) return 0;
        if (auto it = m_stackOf.find(*frames); it != m_stackOf.end()) return it->second;
        // Each entry has its own list, of the same (memoised) frame values: a stack is known
        // by its values' ids, without reading its frames again.
        const std::span<const Id> items = m_doc.items(*frames);
        uint64_t h = 1469598103934665603ull;
        for (Id f : items) h = (h ^ f) * 1099511628211ull;
        std::vector<std::pair<uint32_t, Id>>& same = m_stackByIds[h];
        for (const auto& [id, list] : same)
            if (std::ranges::equal(m_doc.items(list), items)) {
                m_stackOf.emplace(*frames, id);
                return id;
            }
        for (Id f : items)
            if (const uint32_t i = frame(f); i != UINT32_MAX) m_snap.stackFrames.push_back(i);
        m_snap.stackBegin.push_back(static_cast<uint32_t>(m_snap.stackFrames.size()));
        const auto id = static_cast<uint32_t>(m_snap.stackCount() - 1);
        m_stackOf.emplace(*frames, id);
        same.emplace_back(id, *frames);
        return id;
    }

    void segments(Id list) {
        if (!m_doc.isList(list)) {
            m_diag.add(DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                       "\"segments\" is not a list");
            return;
        }
        for (Id s : m_doc.items(list)) {
            if (m_doc.kind(s) != Kind::Dict) {
                m_diag.add(DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                           "a segment that is not a dict: skipped");
                continue;
            }
            model::SnapshotSegment seg;
            seg.device = static_cast<int32_t>(integer(s, "device", 0, true, "a segment"));
            seg.address = static_cast<uint64_t>(integer(s, "address", 0, true, "a segment"));
            seg.totalSize = integer(s, "total_size", 0, true, "a segment");
            seg.allocatedSize = integer(s, "allocated_size", 0, false, "a segment");
            seg.activeSize = integer(s, "active_size", 0, false, "a segment");
            seg.requestedSize = integer(s, "requested_size", 0, false, "a segment");
            seg.stream = integer(s, "stream", 0, false, "a segment");
            seg.large = str(s, "segment_type") != "small";
            seg.expandable = integer(s, "is_expandable", 0, false, "a segment") != 0;
            seg.stack = stackOf(s);
            seg.blockBegin = static_cast<uint32_t>(m_snap.blocks.size());
            uint64_t at = seg.address; // older layouts give sizes only: blocks are contiguous
            if (const auto blocks = m_doc.get(s, "blocks"); blocks && m_doc.isList(*blocks))
                for (Id b : m_doc.items(*blocks)) {
                    if (m_doc.kind(b) != Kind::Dict) continue;
                    model::SnapshotBlock blk;
                    blk.size = integer(b, "size", 0, true, "a block");
                    blk.address =
                        static_cast<uint64_t>(integer(b, "address", int64_t(at), false, "a block"));
                    blk.requestedSize = integer(b, "requested_size", blk.size, false, "a block");
                    blk.state = stateOf(str(b, "state"));
                    blk.stack = stackOf(b);
                    at = blk.address + static_cast<uint64_t>(std::max<int64_t>(0, blk.size));
                    m_snap.blocks.push_back(blk);
                }
            seg.blockEnd = static_cast<uint32_t>(m_snap.blocks.size());
            m_snap.segments.push_back(seg);
        }
    }

    void deviceTraces(Id list) {
        if (!m_doc.isList(list)) {
            m_diag.add(DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                       "\"device_traces\" is not a list");
            return;
        }
        int32_t device = 0;
        size_t all = 0;
        for (Id entries : m_doc.items(list)) all += m_doc.items(entries).size();
        m_snap.entries.reserve(all);
        for (Id entries : m_doc.items(list)) {
            for (Id e : m_doc.items(entries)) {
                if (m_doc.kind(e) != Kind::Dict) {
                    m_diag.add(DiagnosticKind::WrongType, model::Diagnostics::kNoOffset,
                               "a device_traces entry that is not a dict: skipped");
                    continue;
                }
                model::SnapshotEntry x;
                x.device = device;
                const std::string_view action = str(e, "action");
                x.action = actionOf(action);
                if (x.action == SnapshotAction::Other) {
                    m_diag.add(DiagnosticKind::UnsupportedPhase, model::Diagnostics::kNoOffset,
                               "device_traces action \"" +
                                   base::truncateUtf8(base::sanitizeUtf8(action), 40) +
                                   "\" is not read");
                    continue;
                }
                const bool sized = x.action != SnapshotAction::Snapshot;
                x.addr = static_cast<uint64_t>(integer(e, "addr", 0, sized, "an entry"));
                x.size = integer(e, "size", 0, sized, "an entry");
                x.stream = integer(e, "stream", 0, false, "an entry");
                x.timeUs = integer(e, "time_us", -1, false, "an entry");
                x.deviceFree = integer(e, "device_free", -1, false, "an entry");
                x.stack = stackOf(e);
                m_snap.entries.push_back(x);
            }
            ++device;
        }
    }

    void settings(Id s) {
        if (const auto v = m_doc.get(s, "expandable_segments"))
            m_snap.expandableSegments = m_doc.integer(*v).value_or(0) != 0;
        m_snap.allocConf = base::sanitizeUtf8(str(s, "PYTORCH_CUDA_ALLOC_CONF"));
    }

    void annotations(Id list) {
        for (Id a : m_doc.items(list)) {
            if (m_doc.kind(a) != Kind::Dict) continue;
            m_snap.annotations.push_back({static_cast<int32_t>(integer(a, "device", 0, false, "")),
                                          std::string(str(a, "stage")), std::string(str(a, "name")),
                                          integer(a, "time_us", -1, false, "")});
        }
    }

    const Document& m_doc;
    AllocatorSnapshot& m_snap;
    model::Diagnostics& m_diag;
    std::unordered_map<Id, uint32_t> m_frameOf, m_stackOf;
    std::unordered_map<std::string, uint32_t> m_frameByValue;
    std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, Id>>> m_stackByIds;
};

bool isActive(model::BlockState s) {
    return s == model::BlockState::ActiveAllocated || s == model::BlockState::ActivePendingFree;
}

/// The history replayed into memory samples, device by device (see the file's comment).
void replay(const AllocatorSnapshot& snap, model::TraceBuilder& b) {
    std::map<int32_t, std::vector<const model::SnapshotEntry*>> byDevice;
    std::map<int32_t, int64_t> reservedAtEnd, activeAtEnd;
    std::map<int32_t, std::unordered_map<uint64_t, int64_t>> activeBlocks;
    for (const model::SnapshotSegment& s : snap.segments) {
        reservedAtEnd[s.device] = satAdd(reservedAtEnd[s.device], s.totalSize);
        byDevice[s.device];
        for (uint32_t i = s.blockBegin; i < s.blockEnd; ++i)
            if (isActive(snap.blocks[i].state))
                activeBlocks[s.device][snap.blocks[i].address] = snap.blocks[i].size;
    }
    for (const model::SnapshotEntry& e : snap.entries) byDevice[e.device].push_back(&e);
    bool untimed = false;
    int64_t lastTs = 0;
    for (const auto& [device, entries] : byDevice) {
        // What was live and reserved before the history began.
        std::unordered_map<uint64_t, int64_t> live;
        int64_t before = 0, netReserved = 0;
        for (const model::SnapshotEntry* e : entries) {
            switch (e->action) {
            case SnapshotAction::Alloc: live[e->addr] = e->size; break;
            case SnapshotAction::FreeCompleted:
                if (live.erase(e->addr) == 0) before = satAdd(before, e->size);
                break;
            case SnapshotAction::SegmentAlloc:
            case SnapshotAction::SegmentMap: netReserved = satAdd(netReserved, e->size); break;
            case SnapshotAction::SegmentFree:
            case SnapshotAction::SegmentUnmap: netReserved = satSub(netReserved, e->size); break;
            default: break;
            }
        }
        for (const auto& [addr, size] : activeBlocks[device])
            if (!live.count(addr)) before = satAdd(before, size);
        int64_t reserved = std::max<int64_t>(0, satSub(reservedAtEnd[device], netReserved));
        int64_t allocated = before;

        const model::ProcessId process = b.process(model::RowKey{device, {}});
        b.processInfo(process).name = b.intern("GPU " + std::to_string(device) + " allocator");
        b.processInfo(process).gpuDevice = device;
        model::MemorySample m;
        m.deviceType = 1;
        m.deviceId = static_cast<int16_t>(device);
        m.process = process;
        for (const model::SnapshotEntry* e : entries) {
            int64_t bytes = 0;
            switch (e->action) {
            case SnapshotAction::Alloc: bytes = e->size; break;
            case SnapshotAction::FreeCompleted: bytes = satSub(0, e->size); break;
            case SnapshotAction::SegmentAlloc:
            case SnapshotAction::SegmentMap: reserved = satAdd(reserved, e->size); break;
            case SnapshotAction::SegmentFree:
            case SnapshotAction::SegmentUnmap: reserved = satSub(reserved, e->size); break;
            default: continue; // free_requested, oom, snapshot: no change of the totals
            }
            allocated = satAdd(allocated, bytes);
            if (e->timeUs >= 0)
                lastTs = std::max(lastTs, satMul(e->timeUs, int64_t(1000)));
            else
                untimed = true, lastTs = satAdd(lastTs, int64_t(1000));
            m.ts = lastTs;
            m.bytes = bytes;
            m.totalAllocated = allocated;
            m.totalReserved = reserved;
            m.addr = e->addr;
            m.stack = e->stack;
            b.appendMemory(m);
        }
        if (entries.empty()) { // no history: the state at the snapshot, as one point
            m.ts = lastTs;
            m.bytes = 0;
            m.totalAllocated = allocated;
            m.totalReserved = reserved;
            b.appendMemory(m);
        }
    }
    if (untimed)
        b.diagnostics().add(DiagnosticKind::MissingField, model::Diagnostics::kNoOffset,
                            "history entries without time_us: placed 1 us after the one before");
}

/// Standard base64 (RFC 4648), whitespace skipped; false on any other character.
bool decodeBase64(std::string_view in, std::string& out) {
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else if (c == '=')
            break;
        else if (c == '\n' || c == '\r' || c == ' ')
            continue;
        else
            return false;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xff));
        }
    }
    return true;
}

Result<std::shared_ptr<const model::Trace>> importSnapshotStream(ByteStream& in,
                                                                 const fs::path& path,
                                                                 uint64_t inputBytes,
                                                                 const char* container) {
    const auto started = std::chrono::steady_clock::now();
    pickle::ReadStats read;
    auto doc = pickle::readPickle(in, &read);
    if (!doc) return doc.error();
    auto snap = std::make_shared<AllocatorSnapshot>();
    model::TraceBuilder b;
    if (auto e = Interpreter(*doc, *snap, b.diagnostics()).run()) return std::move(*e);
    replay(*snap, b);
    model::TraceMetadata& md = b.metadata();
    md.formatName = std::string("PyTorch allocator snapshot") + container;
    md.sourcePath = path.string();
    md.other.emplace_back("pickle_protocol", std::to_string(read.protocol));
    model::ImportStats& st = b.stats();
    st.entries = snap->entries.size();
    st.inputBytes = inputBytes;
    st.textBytes = read.bytes;
    b.setAllocatorSnapshot(std::move(snap));
    auto trace = b.finish();
    if (!trace) return Error{ErrorKind::Cancelled, "cancelled"};
    const_cast<model::ImportStats&>(trace->importStats()).seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return trace;
}

Result<std::shared_ptr<const model::Trace>> importSnapshot(const fs::path& path,
                                                           const ImportOptions&) {
    auto file = std::make_unique<FileByteStream>(path.string());
    if (file->state() == StreamState::IoError)
        return Error{ErrorKind::Unreadable, file->message(), UINT64_MAX};
    const uint64_t size = file->inputTotal();
    char magic[2] = {0, 0};
    {
        FileByteStream peek(path.string());
        peek.read(magic, 2);
    }
    if (looksGzip(magic, 2)) { // a gzip of the pickle: inflated as it is read
        GzipByteStream gz(std::move(file), false);
        return importSnapshotStream(gz, path, size, " (gzip)");
    }
    return importSnapshotStream(*file, path, size, "");
}

/// A _memory_viz page: the pickle is the base64 text after the first "base64": key.
Result<std::shared_ptr<const model::Trace>> importMemoryVizHtml(const fs::path& path,
                                                                const ImportOptions&) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error{ErrorKind::Unreadable, "cannot open " + path.string(), UINT64_MAX};
    const std::string page((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    constexpr std::string_view kKey = "\"base64\": \"";
    const size_t at = page.find(kKey);
    const size_t end = at == std::string::npos ? at : page.find('"', at + kKey.size());
    if (end == std::string::npos)
        return Error{ErrorKind::InvalidStructure,
                     "a torch.cuda._memory_viz page without an embedded snapshot (no "
                     "\"base64\" file in local_files)"};
    auto bytes = std::make_shared<std::string>();
    if (!decodeBase64(std::string_view(page).substr(at + kKey.size(), end - at - kKey.size()),
                      *bytes))
        return Error{ErrorKind::InvalidStructure, "the snapshot embedded in the page is not base64",
                     at};
    MemoryByteStream in(bytes);
    return importSnapshotStream(in, path, page.size(), " (in a _memory_viz page)");
}

} // namespace

Result<std::shared_ptr<const model::Trace>>
importSnapshotBytes(std::shared_ptr<const std::string> bytes) {
    const uint64_t size = bytes->size();
    const bool gzip = looksGzip(bytes->data(), bytes->size());
    auto mem = std::make_unique<MemoryByteStream>(std::move(bytes));
    if (gzip) {
        GzipByteStream gz(std::move(mem), false);
        return importSnapshotStream(gz, "(in memory)", size, " (gzip)");
    }
    return importSnapshotStream(*mem, "(in memory)", size, "");
}

namespace {

bool isMemorySnapshot(const ContentProbe& p) {
    return isAllocatorSnapshot(readPickleHeader(p.content()));
}

bool isMemoryVizHtml(const ContentProbe& p) {
    return looksHtml(p.content()) && p.content().find("MemoryViz.js") != std::string_view::npos;
}

} // namespace

extern const FileFormat kFormatMemorySnapshot;
extern const FileFormat kFormatMemoryVizHtml;
const FileFormat kFormatMemorySnapshot{InputFormat::MemorySnapshot,
                                       "PyTorch CUDA allocator snapshot", isMemorySnapshot,
                                       importSnapshot};
const FileFormat kFormatMemoryVizHtml{InputFormat::MemoryVizHtml, "torch.cuda._memory_viz HTML",
                                      isMemoryVizHtml, importMemoryVizHtml};

} // namespace stallscope::importers
