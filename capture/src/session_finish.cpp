// CaptureSession::finish: launch flows, metadata events, the closing keys (devices, the
// capture's own statistics), then the output (in place, renamed, or gzip-compressed).
#include "log_event_source.h"
#include "session_impl.h"
#include "socket_io.h"

#include "stallscope/base/atomic_file.h"
#include "stallscope/base/json_writer.h"
#include "stallscope/importers/importer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

namespace stallscope::capture {

using detail::MetaEntry;

namespace {

/// ac2g flow events (launch -> first GPU work of each correlation), as Kineto writes them.
void writeFlows(std::vector<detail::FlowSide>& launches, std::vector<detail::FlowSide>& gpu,
                model::TraceBuilder& b, int64_t base, std::string& out) {
    auto byCorrelationThenTime = [](const detail::FlowSide& x, const detail::FlowSide& y) {
        return x.correlation != y.correlation ? x.correlation < y.correlation : x.ts < y.ts;
    };
    std::sort(launches.begin(), launches.end(), byCorrelationThenTime);
    std::sort(gpu.begin(), gpu.end(), byCorrelationThenTime);
    const model::StringId cat = b.intern("ac2g");
    auto endpoint = [&](const detail::FlowSide& f, char ph) {
        out += ",\n{\"ph\": \"";
        out += ph;
        out += "\", \"id\": " + std::to_string(f.correlation) +
               ", \"pid\": " + std::to_string(f.pid) + ", \"tid\": " + std::to_string(f.tid) +
               ", \"ts\": ";
        detail::appendMicros(out, f.ts - base);
        out += ph == 'f' ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}"
                         : ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
        model::FlowEndpoint ep;
        ep.ts = f.ts;
        ep.track = b.track(b.process(model::RowKey{f.pid, {}}), model::RowKey{f.tid, {}});
        ep.id = f.correlation;
        ep.category = cat;
        ep.phase = ph;
        ep.bindEnclosing = true;
        b.appendFlowEndpoint(ep);
    };
    size_t l = 0;
    for (size_t g = 0; g < gpu.size(); ++g) {
        if (g > 0 && gpu[g].correlation == gpu[g - 1].correlation) continue; // first GPU work only
        while (l < launches.size() && launches[l].correlation < gpu[g].correlation) ++l;
        if (l >= launches.size() || launches[l].correlation != gpu[g].correlation) continue;
        if (l + 1 < launches.size() && launches[l + 1].correlation == gpu[g].correlation)
            continue; // ambiguous
        endpoint(launches[l], 's');
        endpoint(gpu[g], 'f');
    }
}

void writeMetadataEvents(const std::vector<MetaEntry>& entries, std::string& out) {
    using K = MetaEntry::Kind;
    static constexpr const char* kNames[] = {"process_name", "process_labels", "process_sort_index",
                                             "thread_name", "thread_sort_index"};
    for (const MetaEntry& m : entries) {
        out += ",\n{\"name\": \"";
        out += kNames[static_cast<int>(m.kind)];
        out += "\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": " + std::to_string(m.pid) +
               ", \"tid\": " + std::to_string(m.tid) + ", \"args\": {";
        switch (m.kind) {
        case K::ProcessName:
        case K::ThreadName: out += "\"name\": ", detail::appendJsonString(out, m.text); break;
        case K::ProcessLabels: out += "\"labels\": ", detail::appendJsonString(out, m.text); break;
        default: out += "\"sort_index\": " + std::to_string(m.number); break;
        }
        out += "}}";
    }
}

std::string devicesJson(const std::map<int32_t, pb::Device>& devices) {
    base::JsonWriter w(false);
    w.beginArray();
    for (const auto& [id, dev] : devices) {
        const model::DeviceProperties p = detail::deviceProperties(dev);
        w.beginObject().key("id").value(p.id).key("name").value(p.name);
        w.key("totalGlobalMem").value(p.totalGlobalMem).key("computeMajor").value(p.computeMajor);
        w.key("computeMinor")
            .value(p.computeMinor)
            .key("maxThreadsPerMultiprocessor")
            .value(p.maxThreadsPerMultiprocessor);
        w.key("regsPerMultiprocessor")
            .value(p.regsPerMultiprocessor)
            .key("warpSize")
            .value(p.warpSize);
        w.key("sharedMemPerMultiprocessor")
            .value(p.sharedMemPerMultiprocessor)
            .key("numSms")
            .value(p.numSms);
        w.endObject();
    }
    w.endArray();
    return w.str();
}

} // namespace

std::string CaptureSession::Impl::closingText() {
    const std::vector<MetaEntry> meta = metadataLocked(true, true);
    applyMetadata(meta);
    std::lock_guard lock(mutex);
    std::string out;
    writeFlows(launches, gpuWork, builder, baseNs, out);
    writeMetadataEvents(meta, out);
    if (eventsWritten == 0 && !out.empty()) out[0] = ' ';
    out += "\n],\n\"deviceProperties\": " + devicesJson(devices);
    std::vector<std::pair<std::string, std::string>> versions;
    {
        std::lock_guard sl(sourcesMutex);
        for (auto& s : sources) {
            std::lock_guard l(s.mutex);
            const std::pair<const char*, const std::string*> fields[] = {
                {"cuda_driver_version", &s.info.cuda_driver_version()},
                {"cuda_runtime_version", &s.info.cuda_runtime_version()},
                {"cupti_version", &s.info.cupti_version()}};
            for (const auto& field : fields) {
                const char* key =
                    field.first; // not a structured binding: clang 14 cannot capture one
                const std::string* value = field.second;
                if (!value->empty() &&
                    std::none_of(versions.begin(), versions.end(),
                                 [&](const auto& v) { return v.first == key; })) {
                    std::string json;
                    detail::appendJsonString(json, *value);
                    versions.emplace_back(key, json);
                }
            }
        }
    }
    versions.emplace_back("stallscope", statsJson());
    for (const auto& [k, v] : versions) out += ",\n\"" + k + "\": " + v;
    model::TraceMetadata& md = builder.metadata();
    md.other = versions;
    md.displayTimeUnit = "ms";
    out += ",\n\"displayTimeUnit\": \"ms\"";
    return out;
}

std::string CaptureSession::Impl::statsJson() {
    base::JsonWriter w(false);
    w.beginObject().key("capture").value("Stallscope live capture");
    w.key("records").value(stats.records).key("gpu_activities").value(stats.gpuActivities);
    w.key("batches").value(stats.batches).key("dropped_by_sources").value(stats.droppedBySources);
    w.key("drop_reasons").beginObject();
    for (const auto& [reason, n] : dropReasons) w.key(reason).value(n);
    w.endObject();
    w.key("missing_batches")
        .value(stats.missingBatches)
        .key("bad_messages")
        .value(stats.badMessages);
    w.key("problems").beginArray();
    for (const auto& p : stats.problems) w.value(p);
    w.endArray();
    w.key("sources").beginArray();
    {
        std::lock_guard sl(sourcesMutex);
        for (size_t i = 0; i < sources.size(); ++i) {
            detail::SourceState& s = sources[i];
            std::lock_guard l(s.mutex);
            if (!s.hello && !s.anyBatch) continue;
            w.beginObject()
                .key("index")
                .value(static_cast<uint64_t>(i))
                .key("source")
                .value(s.info.source());
            w.key("pid")
                .value(static_cast<int64_t>(s.info.pid()))
                .key("command_line")
                .value(s.info.command_line());
            w.key("clock_note").value(s.info.clock_note()).key("records").value(s.records);
            w.key("dropped").value(s.dropped).key("end").value(
                s.bye.empty() ? "connection ended without Bye" : s.bye);
            w.endObject();
        }
    }
    w.endArray();
    for (const auto& [k, v] : info) w.key(k).raw(v);
    w.endObject();
    return w.str();
}

namespace {

/// Copies the log (compressed or not) to `output` through an atomic file.
bool copyLog(int fd, const std::filesystem::path& output, base::AtomicFile::Compression compression,
             std::string& error) {
    base::AtomicFile f;
    if (!f.open(output, compression)) {
        error = f.error();
        return false;
    }
    std::string buf(1 << 20, '\0');
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            error = "cannot read the event log: " + detail::errnoText(errno);
            return false;
        }
        if (n == 0) break;
        if (!f.write(std::string_view(buf.data(), static_cast<size_t>(n)))) {
            error = f.error();
            return false;
        }
        at += n;
    }
    if (!f.commit()) {
        error = f.error();
        return false;
    }
    return true;
}

bool isGzip(const std::filesystem::path& p) {
    return p.extension() == ".gz";
}

/// The finished log becomes `output`: left in place, renamed, copied (another file
/// system) or compressed (.gz); the log is removed when it was copied.
bool moveLog(int fd, const std::filesystem::path& log, const std::filesystem::path& output,
             std::string& error) {
    std::error_code ec;
    if (std::filesystem::weakly_canonical(output, ec) == std::filesystem::weakly_canonical(log, ec))
        return true;
    if (isGzip(output)) {
        if (!copyLog(fd, output, base::AtomicFile::Compression::Gzip, error)) return false;
        std::filesystem::remove(log, ec);
        return true;
    }
    if (std::string problem = base::outputTargetProblem(output); !problem.empty()) {
        error = problem;
        return false;
    }
    // A file replaced keeps its permissions.
    if (struct stat st{}; ::stat(output.c_str(), &st) == 0) ::fchmod(fd, st.st_mode & 07777);
    if (std::rename(log.c_str(), output.c_str()) == 0) return true;
    const int err = errno;
    if (err != EXDEV) {
        error = detail::errnoText(err);
        return false;
    }
    if (!copyLog(fd, output, base::AtomicFile::Compression::None, error)) return false;
    std::filesystem::remove(log, ec);
    return true;
}

} // namespace

base::Result<std::shared_ptr<const model::Trace>>
CaptureSession::finish(const std::filesystem::path& output) {
    auto unwritable = [](std::string message) {
        return base::Error{base::ErrorKind::Unwritable, std::move(message)};
    };
    Impl& d = *m_impl;
    std::lock_guard lock(d.builderMutex);
    if (d.finalTrace) return d.finalTrace;
    if (d.logFd < 0) return unwritable("the capture session was not opened");
    d.drainLocked();
    {
        std::lock_guard l(d.mutex);
        d.finished = true; // later envelopes are refused
    }
    d.drainLocked();
    d.builder.metadata().traceName = output.filename().string();
    std::string tail = d.closingText();
    tail += ",\n\"traceName\": ";
    detail::appendJsonString(tail, output.filename().string());
    tail += "\n}\n";
    std::string werr;
    if (!detail::writeFile(d.logFd, tail, werr) || ::fsync(d.logFd) != 0) {
        const int e = errno;
        return unwritable("cannot finish " + d.logPath.string() + ": " +
                          (werr.empty() ? detail::errnoText(e) : werr));
    }
    const bool ok = moveLog(d.logFd, d.logPath, output, werr);
    if (!ok)
        return unwritable("cannot write " + output.string() + ": " + werr +
                          "; the recorded events are in " + d.logPath.string());
    d.builder.metadata().sourcePath = output.string();
    if (isGzip(output)) {
        auto imported = importers::importFile(output);
        if (imported) {
            d.finalTrace = imported.value();
            d.builder = model::TraceBuilder();
            return d.finalTrace;
        }
    }
    d.builder.setEventSource(std::make_shared<detail::LogEventSource>(d.logFd, output.string()));
    d.finalTrace = d.builder.finish();
    return d.finalTrace;
}

} // namespace stallscope::capture
