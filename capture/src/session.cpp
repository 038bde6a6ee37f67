// CaptureSession: envelopes in, Kineto-style events out (event log + TraceBuilder).
#include "log_event_source.h"
#include "session_impl.h"
#include "socket_io.h"

#include "stallscope/base/utf8.h"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stallscope::capture {

using detail::PendingEvent;
using detail::SourceState;

namespace {

/// "python3" from "/usr/bin/python3 train.py".
std::string processName(const std::string& commandLine) {
    std::string first = commandLine.substr(0, commandLine.find(' '));
    const size_t slash = first.rfind('/');
    return slash == std::string::npos ? first : first.substr(slash + 1);
}

} // namespace

CaptureSession::CaptureSession(std::filesystem::path eventLog) : m_impl(std::make_unique<Impl>()) {
    m_impl->logPath = std::move(eventLog);
    m_impl->sources.emplace_back();  // source 0: in-process
}

CaptureSession::~CaptureSession() {
    if (m_impl->logFd >= 0) ::close(m_impl->logFd);
}

const std::filesystem::path& CaptureSession::eventLogPath() const { return m_impl->logPath; }

base::Status CaptureSession::open() {
    Impl& d = *m_impl;
    if (d.logFd >= 0) return {};
    auto failed = [](std::string what) {
        return base::Error{base::ErrorKind::Unwritable, std::move(what)};
    };
    // A new file, never through a link (O_EXCL | O_NOFOLLOW). One left by an earlier run that
    // died is ours to replace only when it is a regular file of this user.
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    d.logFd = ::open(d.logPath.c_str(), flags, 0644);
    if (d.logFd < 0 && errno == EEXIST) {
        struct stat st {};
        if (::lstat(d.logPath.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == ::geteuid()) {
            ::unlink(d.logPath.c_str());
            d.logFd = ::open(d.logPath.c_str(), flags, 0644);
        } else {
            return failed(
                d.logPath.string() +
                " exists and is not a regular file of this user (a link?): it was left as it is");
        }
    }
    if (d.logFd < 0)
        return failed("cannot create " + d.logPath.string() + ": " + detail::errnoText(errno));
    d.baseNs = realtimeNs() / 1000 * 1000;
    const std::string header =
        "{\"schemaVersion\": 1, \"baseTimeNanoseconds\": " + std::to_string(d.baseNs) + ", \"traceEvents\": [";
    if (std::string error; !detail::writeFile(d.logFd, header, error))
        return failed("cannot write " + d.logPath.string() + ": " + error);
    d.logBytes = header.size();
    d.logSource = std::make_shared<detail::LogEventSource>(d.logFd, d.logPath.string());
    std::lock_guard lock(d.builderMutex);
    d.builder.setEventSource(d.logSource);
    model::TraceMetadata& md = d.builder.metadata();
    md.formatName = "Stallscope live capture";
    md.sourcePath = d.logPath.string();
    md.schemaVersion = 1;
    md.baseTimeNs = d.baseNs;
    return {};
}

uint32_t CaptureSession::addSource() {
    std::lock_guard lock(m_impl->sourcesMutex);
    m_impl->sources.emplace_back();
    return static_cast<uint32_t>(m_impl->sources.size() - 1);
}

void CaptureSession::Impl::problem(const std::string& what) {
    if (stats.problems.size() < kMaxProblems) stats.problems.push_back(what);
}

void CaptureSession::reportProblem(uint32_t source, const std::string& what) {
    std::lock_guard lock(m_impl->mutex);
    ++m_impl->stats.badMessages;
    m_impl->problem("source " + std::to_string(source) + ": " + what);
}

void CaptureSession::setInfo(const std::string& key, const std::string& json) {
    std::lock_guard lock(m_impl->mutex);
    for (auto& [k, v] : m_impl->info)
        if (k == key) {
            v = json;
            return;
        }
    m_impl->info.emplace_back(key, json);
}

bool CaptureSession::receive(uint32_t source, const pb::Envelope& e) {
    Impl& d = *m_impl;
    SourceState* s = nullptr;
    {
        std::lock_guard lock(d.sourcesMutex);
        if (source < d.sources.size()) s = &d.sources[source];
    }
    {
        std::lock_guard lock(d.mutex);
        if (d.finished || d.logFd < 0) return false;
        if (!s) {
            ++d.stats.badMessages;
            d.problem("an envelope from unknown source " + std::to_string(source));
            return false;
        }
    }
    switch (e.body_case()) {
    case pb::Envelope::kHello: d.receiveHello(source, *s, e.hello()); return true;
    case pb::Envelope::kDevice: d.receiveDevice(e.device()); return true;
    case pb::Envelope::kBatch: return d.receiveBatch(source, *s, e.batch());
    case pb::Envelope::kThreadName: {
        std::lock_guard lock(d.mutex);
        d.threadNames[{e.thread_name().pid(), e.thread_name().tid()}] = base::sanitizeUtf8(e.thread_name().name());
        d.metadataDirty = true;
        return true;
    }
    case pb::Envelope::kBye: {
        std::lock_guard lock(s->mutex);
        static constexpr const char* kReasons[] = {"unspecified", "exit", "stopped", "crash"};
        const int r = e.bye().reason();
        s->bye = r >= 0 && r < 4 ? kReasons[r] : "unspecified";
        s->byeRecords = e.bye().total_records();
        return true;
    }
    case pb::Envelope::kControl: return true;  // meant for sources; nothing to record
    default: {
        std::lock_guard lock(d.mutex);
        ++d.stats.badMessages;
        d.problem("source " + std::to_string(source) + ": an envelope without a known body");
        return false;
    }
    }
}

void CaptureSession::Impl::receiveHello(uint32_t source, SourceState& s, const pb::Hello& h) {
    bool first = false;
    {
        std::lock_guard lock(s.mutex);
        first = !s.hello && !s.anyBatch;
        s.hello = true;
        s.info = h;
        for (std::string* f : {s.info.mutable_source(), s.info.mutable_command_line(), s.info.mutable_clock_note(),
                               s.info.mutable_cuda_driver_version(), s.info.mutable_cuda_runtime_version(),
                               s.info.mutable_cupti_version()})
            *f = base::sanitizeUtf8(*f);
    }
    std::lock_guard lock(mutex);
    if (first) ++stats.sources;
    if (h.protocol_version() != kProtocolVersion)
        problem("source " + std::to_string(source) + " speaks protocol version " +
                std::to_string(h.protocol_version()) + " (this recorder: " + std::to_string(kProtocolVersion) + ")");
    if (h.pid() > 0 && !h.command_line().empty() && !processNames.count(h.pid())) {
        processNames[h.pid()] = base::sanitizeUtf8(processName(h.command_line()));
        metadataDirty = true;
    }
}

void CaptureSession::Impl::receiveDevice(const pb::Device& dev) {
    std::lock_guard lock(mutex);
    pb::Device& slot = devices[dev.id()];
    slot = dev;
    *slot.mutable_name() = base::sanitizeUtf8(dev.name());
    deviceTable = std::make_shared<const DeviceTable>(devices);
    metadataDirty = true;
}

uint32_t CaptureSession::Impl::mapCorrelation(uint32_t source, SourceState& s, uint32_t correlation) {
    if (correlation == 0) return 0;
    int owner = correlationOwner.load();
    if (owner < 0 && correlationOwner.compare_exchange_strong(owner, static_cast<int>(source))) owner = int(source);
    if (owner == static_cast<int>(source) && correlation < 0x80000000u) return correlation;
    // Another process: its ids would collide with the first one's, so they are renumbered.
    auto [it, inserted] = s.correlationMap.try_emplace(correlation, 0u);
    if (inserted) it->second = nextCorrelation.fetch_add(1);
    return it->second;
}

// ---------------------------------------------------------------- the model side

model::DeviceProperties detail::deviceProperties(const pb::Device& d) {
    model::DeviceProperties p;
    p.id = d.id();
    p.name = d.name();
    p.totalGlobalMem = d.total_memory();
    p.computeMajor = d.compute_major();
    p.computeMinor = d.compute_minor();
    p.numSms = d.num_sms();
    p.maxThreadsPerMultiprocessor = d.max_threads_per_sm();
    p.regsPerMultiprocessor = d.max_registers_per_sm();
    p.warpSize = d.warp_size();
    p.sharedMemPerMultiprocessor = d.shared_memory_per_sm();
    return p;
}

void CaptureSession::Impl::drainLocked() {
    std::vector<PendingEvent> batch;
    {
        std::lock_guard lock(mutex);
        batch.swap(pending);
    }
    model::TrackId track;
    int64_t lastPid = 0, lastTid = 0;
    bool haveTrack = false;
    for (const PendingEvent& ev : batch) {
        if (!haveTrack || ev.pid != lastPid || ev.tid != lastTid) {
            const model::ProcessId p = builder.process(model::RowKey{ev.pid, {}});
            track = builder.track(p, model::RowKey{ev.tid, {}});
            lastPid = ev.pid, lastTid = ev.tid, haveTrack = true;
        }
        const model::StringId name = builder.intern(ev.name);
        const model::StringId cat = builder.intern(ev.category);
        if (ev.instant) {
            builder.appendInstant(ev.start, track, name, cat, 't', ev.srcOffset, ev.srcLength);
            continue;
        }
        model::SliceRow row;
        row.start = ev.start;
        row.dur = ev.dur;
        row.track = track;
        row.name = name;
        row.category = cat;
        row.kind = ev.kind;
        row.correlation = ev.correlation;
        row.extra = ev.extra;
        row.srcOffset = ev.srcOffset;
        row.srcLength = ev.srcLength;
        builder.appendSlice(row);
    }
}

std::vector<detail::MetaEntry> CaptureSession::Impl::metadataLocked(bool streams, bool force) {
    using K = detail::MetaEntry::Kind;
    std::vector<detail::MetaEntry> out;
    std::lock_guard lock(mutex);
    if (!metadataDirty && !force) return out;
    metadataDirty = false;
    builder.metadata().devices.clear();
    for (const auto& [id, dev] : devices) builder.metadata().devices.push_back(detail::deviceProperties(dev));
    for (const auto& [pid, name] : processNames) {
        out.push_back({K::ProcessName, pid, 0, name, 0});
        out.push_back({K::ProcessLabels, pid, 0, "CPU", 0});
        out.push_back({K::ProcessSortIndex, pid, 0, {}, pid});
    }
    for (const auto& [dev, seen] : gpuDevicesSeen) {
        std::string name = "GPU " + std::to_string(dev);
        if (auto it = devices.find(dev); it != devices.end() && !it->second.name().empty())
            name += " (" + it->second.name() + ")";
        out.push_back({K::ProcessName, dev, 0, name, 0});
        out.push_back({K::ProcessLabels, dev, 0, "GPU " + std::to_string(dev), 0});
        out.push_back({K::ProcessSortIndex, dev, 0, {}, dev});
    }
    for (const auto& [key, name] : threadNames) {
        const std::string label =
            name.rfind("thread ", 0) == 0 ? name : "thread " + std::to_string(key.second) + " (" + name + ")";
        out.push_back({K::ThreadName, key.first, key.second, label, 0});
        out.push_back({K::ThreadSortIndex, key.first, key.second, {}, key.second});
    }
    if (streams) {
        for (size_t t = 0; t < builder.trackCount(); ++t) {
            const model::TrackInfo& tr = builder.trackInfo(model::TrackId(static_cast<uint32_t>(t)));
            const model::RowKey pk = builder.processInfo(tr.process).key;
            if (!gpuDevicesSeen.count(static_cast<int32_t>(pk.number))) continue;
            out.push_back({K::ThreadName, pk.number, tr.key.number, "stream " + std::to_string(tr.key.number), 0});
            out.push_back({K::ThreadSortIndex, pk.number, tr.key.number, {}, tr.key.number});
        }
    }
    return out;
}

void CaptureSession::Impl::applyMetadata(const std::vector<detail::MetaEntry>& entries) {
    using K = detail::MetaEntry::Kind;
    for (const detail::MetaEntry& m : entries) {
        const model::ProcessId p = builder.process(model::RowKey{m.pid, {}});
        model::ProcessInfo& pi = builder.processInfo(p);
        switch (m.kind) {
        case K::ProcessName: pi.name = builder.intern(m.text); break;
        case K::ProcessLabels: pi.labels = builder.intern(m.text); break;
        case K::ProcessSortIndex: pi.sortIndex = m.number, pi.hasSortIndex = true; break;
        case K::ThreadName:
            builder.trackInfo(builder.track(p, model::RowKey{m.tid, {}})).name = builder.intern(m.text);
            break;
        case K::ThreadSortIndex: {
            model::TrackInfo& ti = builder.trackInfo(builder.track(p, model::RowKey{m.tid, {}}));
            ti.sortIndex = m.number, ti.hasSortIndex = true;
            break;
        }
        }
    }
}

std::shared_ptr<const model::Trace> CaptureSession::snapshot() const {
    Impl& d = *m_impl;
    std::lock_guard lock(d.builderMutex);
    if (d.finalTrace) return d.finalTrace;
    d.drainLocked();
    d.applyMetadata(d.metadataLocked(false, false));
    return d.builder.snapshot();
}

SessionStats CaptureSession::stats() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->stats;
}

} // namespace stallscope::capture
