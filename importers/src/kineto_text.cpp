#include "kineto_text.h"

#include "byte_stream.h"

namespace fs = std::filesystem;

namespace stallscope::importers {

void KinetoText::begin(base::JsonWriter& w, char phase, std::string_view cat, std::string_view name,
                       int64_t pid, int64_t tid, int64_t ns) {
    const char ph[2] = {phase, 0};
    w.beginObject();
    w.key("ph").value(ph);
    if (!cat.empty()) w.key("cat").value(cat);
    w.key("name").value(name);
    w.key("pid").value(pid);
    w.key("tid").value(tid);
    w.key("ts").micros(ns);
}

void KinetoText::end(base::JsonWriter& w, const Args& args) {
    if (args) {
        w.key("args").beginObject();
        args(w);
        w.endObject();
    }
    w.endObject();
    if (m_events++) m_body += ",\n";
    m_body += w.str();
}

void KinetoText::slice(std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
                       int64_t startNs, int64_t durNs, const Args& args) {
    base::JsonWriter w(false);
    begin(w, 'X', cat, name, pid, tid, startNs);
    w.key("dur").micros(durNs < 0 ? 0 : durNs);
    end(w, args);
}

void KinetoText::instant(std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
                         int64_t ns, const Args& args) {
    base::JsonWriter w(false);
    begin(w, 'i', cat, name, pid, tid, ns);
    w.key("s").value("t");
    end(w, args);
}

void KinetoText::processName(int64_t pid, std::string_view name, std::string_view labels) {
    base::JsonWriter w(false);
    begin(w, 'M', {}, "process_name", pid, 0, 0);
    end(w, [&](base::JsonWriter& a) { a.key("name").value(name); });
    if (labels.empty()) return;
    base::JsonWriter l(false);
    begin(l, 'M', {}, "process_labels", pid, 0, 0);
    end(l, [&](base::JsonWriter& a) { a.key("labels").value(labels); });
}

void KinetoText::threadName(int64_t pid, int64_t tid, std::string_view name) {
    base::JsonWriter w(false);
    begin(w, 'M', {}, "thread_name", pid, tid, 0);
    end(w, [&](base::JsonWriter& a) { a.key("name").value(name); });
}

void KinetoText::device(const model::DeviceProperties& d) {
    base::JsonWriter w(false);
    w.beginObject();
    w.key("id").value(d.id);
    w.key("name").value(d.name);
    w.key("totalGlobalMem").value(d.totalGlobalMem);
    w.key("computeMajor").value(d.computeMajor);
    w.key("computeMinor").value(d.computeMinor);
    w.key("numSms").value(d.numSms);
    if (d.maxThreadsPerBlock) w.key("maxThreadsPerBlock").value(d.maxThreadsPerBlock);
    if (d.maxThreadsPerMultiprocessor)
        w.key("maxThreadsPerMultiprocessor").value(d.maxThreadsPerMultiprocessor);
    if (d.regsPerBlock) w.key("regsPerBlock").value(d.regsPerBlock);
    if (d.regsPerMultiprocessor) w.key("regsPerMultiprocessor").value(d.regsPerMultiprocessor);
    if (d.warpSize) w.key("warpSize").value(d.warpSize);
    if (d.sharedMemPerBlock) w.key("sharedMemPerBlock").value(d.sharedMemPerBlock);
    if (d.sharedMemPerMultiprocessor)
        w.key("sharedMemPerMultiprocessor").value(d.sharedMemPerMultiprocessor);
    w.endObject();
    if (!m_devices.empty()) m_devices += ", ";
    m_devices += w.str();
}

void KinetoText::topLevel(std::string_view key, std::string rawJson) {
    base::JsonWriter w;
    w.value(key);
    m_topLevel += w.str() + ": " + rawJson + ",\n";
}

std::string KinetoText::take() {
    std::string out = "{\"schemaVersion\": 1,\n" + m_topLevel;
    if (!m_devices.empty()) out += "\"deviceProperties\": [" + m_devices + "],\n";
    out += "\"traceEvents\": [\n";
    out += m_body;
    out += "\n]}\n";
    m_body.clear();
    m_devices.clear();
    m_topLevel.clear();
    m_events = 0;
    return out;
}

bool isShapeList(std::string_view s) {
    if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
    int depth = 0;
    for (const char c : s) {
        if (c == '[')
            ++depth;
        else if (c == ']') {
            if (--depth < 0) return false;
        } else if (c != ',' && c != ' ' && (c < '0' || c > '9')) {
            return false;
        }
    }
    return depth == 0;
}

Result<std::shared_ptr<const model::Trace>>
importTranslated(KinetoText text, const fs::path& source, const ImportOptions& options) {
    std::error_code ec;
    const uint64_t bytes = fs::file_size(source, ec);
    ChromeInput in;
    in.describedAs = text.m_formatName;
    in.notes = std::move(text.m_notes);
    auto data = std::make_shared<const std::string>(text.take());
    in.stream = std::make_unique<MemoryByteStream>(data);
    in.memory = data;
    in.originalPath = source.string();
    in.originalBytes = ec ? 0 : bytes;
    return importChromeTrace(std::move(in), options);
}

} // namespace stallscope::importers
