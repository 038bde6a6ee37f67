#include "stallscope/reports/annotated_trace.h"

#include "stallscope/base/atomic_file.h"
#include "stallscope/base/json_writer.h"
#include "stallscope/base/utf8.h"
#include "stallscope/model/time_math.h"

#include <algorithm>
#include <system_error>
#include <vector>

namespace stallscope::reports {

using base::AtomicFile;

namespace fs = std::filesystem;
using base::JsonWriter;

namespace {

constexpr size_t kChunk = size_t(1) << 20;

/// Untrusted text with each byte that is not UTF-8 replaced by '?' (JsonWriter escapes
/// quotes, backslashes and control characters but passes other bytes through).
std::string cleanText(std::string_view s) {
    std::string clean(s);
    base::replaceInvalidUtf8InPlace(clean.data(), clean.size());
    return clean;
}

void appendString(std::string& out, std::string_view s) { JsonWriter::escape(out, cleanText(s)); }

/// One above the largest integer pid, so the findings process never shares a row with the
/// trace's own processes (string pids cannot collide with an integer); when INT64_MAX is
/// taken, the smallest positive pid that is free.
int64_t findingsPid(const model::Trace& t) {
    int64_t top = 0;
    std::vector<int64_t> used;
    for (const auto& p : t.processes())
        if (!p.key.isString()) {
            top = std::max(top, p.key.number);
            used.push_back(p.key.number);
        }
    if (top < INT64_MAX) return top + 1;
    std::sort(used.begin(), used.end());
    int64_t pid = 1;
    for (const int64_t u : used)
        if (u == pid) ++pid;  // sorted: each match moves past one taken pid
    return pid;
}

struct Addition {
    std::string text; // events separated by ",\n", no separator before or after
    uint64_t events = 0;
    uint64_t skipped = 0; // ranges whose times the file cannot hold
    void push(const JsonWriter& w) {
        if (events++) text += ",\n";
        text += w.str();
    }
};

/// A metadata ('M') event with one arg: a name (std::string_view) or a sort index (int64_t).
template <class V>
JsonWriter metadataEvent(int64_t pid, int64_t tid, int64_t tsNs, std::string_view name,
                         std::string_view argKey, V value) {
    JsonWriter w(false);
    w.beginObject().key("ph").value("M").key("name").value(name);
    w.key("pid").value(pid).key("tid").value(tid).key("ts").micros(tsNs);
    w.key("args").beginObject().key(argKey).value(value).endObject();
    w.endObject();
    return w;
}

JsonWriter findingSlice(const analysis::Finding& f, int64_t relativeStart, int64_t length, int64_t pid,
                        int64_t tid) {
    JsonWriter w(false);
    w.beginObject().key("ph").value("X").key("cat").value(kFindingsCategory);
    w.key("name").value(cleanText(f.title));
    w.key("pid").value(pid).key("tid").value(tid);
    w.key("ts").micros(relativeStart).key("dur").micros(length);
    w.key("args").beginObject();
    w.key("finding").value(cleanText(f.id));
    w.key("kind").value(analysis::findingKindName(f.kind));
    w.key("severity").value(analysis::severityName(f.severity));
    w.key("saving_ms").value(static_cast<double>(f.savingNs) / 1e6, 6);
    w.key("saving_share").value(f.savingShare, 4);
    w.key("fix").value(cleanText(f.fix));
    w.key("snippet").value(cleanText(f.snippet));
    w.endObject().endObject();
    return w;
}

/// The findings process: its name and sort index (-1: above the trace's rows), then per
/// finding with ranges a thread named by the finding's id holding one slice per range.
/// `baseNs` is subtracted from the model's absolute times (the file's ts may be relative
/// to baseTimeNanoseconds).
Addition findingsEvents(const model::Trace& t, const analysis::AnalysisResult& a, int64_t pid,
                        int64_t baseNs) {
    Addition add;
    const int64_t metaTs = model::satSub(t.startNs(), baseNs);
    add.push(metadataEvent(pid, 0, metaTs, "process_name", "name", kFindingsProcessName));
    add.push(metadataEvent(pid, 0, metaTs, "process_sort_index", "sort_index", int64_t(-1)));
    int64_t tid = 0;
    for (const auto& f : a.findings) {
        if (f.ranges.empty()) continue;
        ++tid;
        const std::string id = cleanText(f.id);
        add.push(metadataEvent(pid, tid, metaTs, "thread_name", "name", std::string_view(id)));
        add.push(metadataEvent(pid, tid, metaTs, "thread_sort_index", "sort_index", tid));
        for (const auto& r : f.ranges) {
            // The file's ts is relative to its baseTimeNanoseconds and an importer reads
            // ts + dur as int64 ns: a range that cannot be written so is left out (counted).
            int64_t rel = 0, relEnd = 0;
            const int64_t length = r.end > r.start ? model::satSub(r.end, r.start) : 0;
            if (__builtin_sub_overflow(r.start, baseNs, &rel) || __builtin_add_overflow(rel, length, &relEnd)) {
                ++add.skipped;
                continue;
            }
            add.push(findingSlice(f, rel, length, pid, tid));
        }
    }
    return add;
}

// ---------------------------------------------------------------- copying the source

enum class Copy { Ok, SourceChanged, WriteFailed };

/// Copies the source text to the output in chunks, remembering the last byte that is not
/// blank: before the end of the event array that is '[' (an empty array), ',' (an
/// unterminated bare array may end with one) or the end of an event, which is what
/// decides whether a comma must precede the added events. (No string can be open there:
/// the importer recorded the offset between events.)
class TextCopier {
public:
    TextCopier(model::TextReader& src, AtomicFile& out)
        : m_src(src), m_out(out), m_buf(kChunk) {}

    /// Copies the text up to offset `end` (exclusive).
    Copy copyTo(uint64_t end) {
        while (m_pos < end) {
            if (m_at == m_len && !fill()) return Copy::SourceChanged;
            const size_t n = static_cast<size_t>(std::min<uint64_t>(m_len - m_at, end - m_pos));
            const std::string_view piece(m_buf.data() + m_at, n);
            if (!m_out.write(piece)) return Copy::WriteFailed;
            if (const size_t k = piece.find_last_not_of(" \t\r\n"); k != std::string_view::npos)
                m_last = piece[k];
            m_at += n;
            m_pos += n;
        }
        return Copy::Ok;
    }
    /// Copies what is left; the source must end exactly where the import saw it end.
    Copy copyRest(uint64_t expectedEnd) {
        const Copy c = copyTo(expectedEnd);
        if (c != Copy::Ok) return c;
        if (m_at < m_len || fill() || !m_src.complete()) return Copy::SourceChanged;
        return Copy::Ok;
    }
    /// The next byte, or -1 at the end of the text.
    int peek() {
        if (m_at == m_len && !fill()) return -1;
        return static_cast<unsigned char>(m_buf[m_at]);
    }
    [[nodiscard]] char lastSignificant() const { return m_last; }

private:
    bool fill() {
        m_len = m_src.read(m_buf.data(), m_buf.size());
        m_at = 0;
        return m_len > 0;
    }

    model::TextReader& m_src;
    AtomicFile& m_out;
    std::vector<char> m_buf;
    size_t m_at = 0, m_len = 0; // unread bytes of m_buf: [m_at, m_len)
    uint64_t m_pos = 0;         // text offset of m_buf[m_at]
    char m_last = 0;
};

/// Why the original text cannot be copied, or empty when it can.
std::string cannotCopyReason(const model::Trace& t) {
    const auto& md = t.metadata();
    if (md.sourcePath.empty() || !md.reopenText) return "the trace was read from memory, not from a file";
    std::error_code ec;
    const auto size = fs::file_size(md.sourcePath, ec);
    if (ec) return md.sourcePath + " is gone (" + ec.message() + ")";
    if (size != t.importStats().inputBytes) return md.sourcePath + " changed since it was opened";
    const auto& d = t.diagnostics();
    if (md.eventsArrayClosed && !md.bareArray &&
        (d.count(model::DiagnosticKind::TruncatedInput) ||
         d.count(model::DiagnosticKind::CorruptCompression)))
        return "the text after the event array is incomplete";
    return {};
}

/// Original bytes [0, arrayEnd) + the added events + original bytes [arrayEnd, end).
/// An array without its ']' (a bare array may omit it; truncated input) gets the events
/// and the closing brackets appended after its last complete event; a bare array is
/// closed after the events (nothing may follow it, so trailing bytes are left out).
Copy spliceSource(const model::Trace& t, const Addition& add, AtomicFile& out) {
    const auto& md = t.metadata();
    std::string why;
    const std::unique_ptr<model::TextReader> src = md.reopenText(why);
    if (!src) return Copy::SourceChanged;
    TextCopier copier(*src, out);
    if (const Copy c = copier.copyTo(md.eventsArrayEnd); c != Copy::Ok) return c;
    if (md.eventsArrayClosed && copier.peek() != ']') return Copy::SourceChanged;
    const char last = copier.lastSignificant();
    std::string middle = last == '[' || last == ',' ? "\n" : ",\n"; // '[': empty array
    middle += add.text;
    middle += '\n';
    const bool appendClose = !md.eventsArrayClosed || md.bareArray;
    if (appendClose) middle += md.bareArray ? "]\n" : "]}\n";
    if (!out.write(middle)) return Copy::WriteFailed;
    if (appendClose) return Copy::Ok;
    return copier.copyRest(t.importStats().textBytes);
}

// ---------------------------------------------------------------- writing from the model

void appendRowKey(std::string& out, const model::Trace& t, const model::RowKey& k) {
    if (k.isString())
        appendString(out, t.str(k.text));
    else
        out += std::to_string(k.number);
}

void appendNameMetadata(std::string& out, const model::Trace& t, const model::ProcessInfo& p,
                        const model::TrackInfo* track, std::string_view name,
                        std::string_view arg) {
    out += "{\"ph\": \"M\", \"name\": \"";
    out += name;
    out += "\", \"pid\": ";
    appendRowKey(out, t, p.key);
    out += ", \"tid\": ";
    if (track)
        appendRowKey(out, t, track->key);
    else
        out += '0';
    out += ", \"ts\": " + base::formatMicros(t.startNs());
    out += ", \"args\": {\"";
    out += name.ends_with("sort_index") ? "sort_index" : "name";
    out += "\": ";
    out += arg;
    out += "}},\n";
}

void appendRowMetadata(std::string& out, const model::Trace& t) {
    std::string arg;
    for (const auto& p : t.processes()) {
        arg.clear();
        appendString(arg, t.str(p.name));
        if (p.name.valid()) appendNameMetadata(out, t, p, nullptr, "process_name", arg);
        if (p.hasSortIndex)
            appendNameMetadata(out, t, p, nullptr, "process_sort_index",
                               std::to_string(p.sortIndex));
    }
    for (const auto& tr : t.tracks()) {
        const auto& p = t.process(tr.process);
        arg.clear();
        appendString(arg, t.str(tr.name));
        if (tr.name.valid()) appendNameMetadata(out, t, p, &tr, "thread_name", arg);
        if (tr.hasSortIndex)
            appendNameMetadata(out, t, p, &tr, "thread_sort_index", std::to_string(tr.sortIndex));
    }
}

void appendSlice(std::string& out, const model::Trace& t, size_t i) {
    const model::SliceTable& s = t.slices();
    const model::TrackInfo& tr = t.track(s.track[i]);
    out += "{\"ph\": \"X\", ";
    if (const auto cat = t.str(s.category[i]); !cat.empty()) {
        out += "\"cat\": ";
        appendString(out, cat);
        out += ", ";
    }
    out += "\"name\": ";
    appendString(out, t.str(s.name[i]));
    out += ", \"pid\": ";
    appendRowKey(out, t, t.process(tr.process).key);
    out += ", \"tid\": ";
    appendRowKey(out, t, tr.key);
    out += ", \"ts\": " + base::formatMicros(s.start[i]) +
           ", \"dur\": " + base::formatMicros(s.dur[i]);
    out += "},\n";
}

/// A fresh document from the model, for traces whose text cannot be copied: process and
/// thread names and sort indexes, and every slice as an 'X' event (ph, cat, name, pid, tid,
/// ts, dur; absolute times). Args, instants, counters and flows are not in the model's
/// tables in a form that can be written back, so they are left out.
bool writeFromModel(const model::Trace& t, const Addition& add, AtomicFile& out) {
    std::string buf = "{\"traceEvents\": [\n";
    appendRowMetadata(buf, t);
    for (size_t i = 0; i < t.slices().size(); ++i) {
        appendSlice(buf, t, i);
        if (buf.size() >= kChunk) {
            if (!out.write(buf)) return false;
            buf.clear();
        }
    }
    buf += add.text;
    buf += "\n]}\n";
    return out.write(buf);
}

bool endsWithGz(const fs::path& p) {
    const std::string s = p.filename().string();
    return s.size() >= 3 && s.compare(s.size() - 3, 3, ".gz") == 0;
}

} // namespace

base::Status writeAnnotatedTrace(const model::Trace& trace,
                                 const analysis::AnalysisResult& analysis, const fs::path& out,
                                 AnnotatedTraceOutcome* outcome) {
    auto failed = [](const AtomicFile& f) {
        return base::Error{base::ErrorKind::Unwritable, f.error()};
    };
    AnnotatedTraceOutcome result;
    result.findingsPid = findingsPid(trace);
    const auto compression =
        endsWithGz(out) ? AtomicFile::Compression::Gzip : AtomicFile::Compression::None;
    result.fromModelReason = cannotCopyReason(trace);
    if (result.fromModelReason.empty()) {
        const int64_t base = trace.metadata().baseTimeNs.value_or(0);
        const Addition add = findingsEvents(trace, analysis, result.findingsPid, base);
        AtomicFile file;
        if (!file.open(out, compression)) return failed(file);
        const Copy c = spliceSource(trace, add, file);
        if (c == Copy::WriteFailed || (c == Copy::Ok && !file.commit())) return failed(file);
        result.copiedSource = c == Copy::Ok;
        result.addedEvents = add.events;
        result.skippedRanges = add.skipped;
        if (!result.copiedSource)
            result.fromModelReason = trace.metadata().sourcePath + " changed since it was opened";
    }
    if (!result.copiedSource) { // the temporary file of a failed splice is gone by now
        const Addition add = findingsEvents(trace, analysis, result.findingsPid, 0);
        AtomicFile file;
        if (!file.open(out, compression) || !writeFromModel(trace, add, file) || !file.commit())
            return failed(file);
        result.addedEvents = add.events;
        result.skippedRanges = add.skipped;
    }
    if (outcome) *outcome = std::move(result);
    return {};
}

} // namespace stallscope::reports
