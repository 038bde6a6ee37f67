// CaptureSession, receiving a Batch: strings, sequence numbers, activities -> event text
// (appended to the log) and pending model rows.
#include "session_impl.h"
#include "socket_io.h"

#include "stallscope/base/utf8.h"


namespace stallscope::capture {

using detail::PendingEvent;
using detail::SourceState;

namespace {

std::string label(uint32_t index, const SourceState& s) {
    std::string l = "source " + std::to_string(index);
    if (s.hello) l += " (" + s.info.source() + ", pid " + std::to_string(s.info.pid()) + ")";
    return l;
}

void checkSequence(uint32_t source, SourceState& s, const pb::Batch& b, detail::DecodedBatch& out) {
    if (b.sequence() > s.nextSequence) {
        out.missing = b.sequence() - s.nextSequence;
        out.problems.push_back(label(source, s) + ": batches " + std::to_string(s.nextSequence) + " to " +
                               std::to_string(b.sequence() - 1) + " never arrived");
    } else if (s.anyBatch && b.sequence() < s.nextSequence) {
        out.problems.push_back(label(source, s) + ": batch " + std::to_string(b.sequence()) +
                               " arrived again or out of order (kept)");
    }
    s.nextSequence = std::max(s.nextSequence, b.sequence() + 1);
}

} // namespace

void CaptureSession::Impl::decodeBatch(uint32_t source, SourceState& s, const pb::Batch& b, const DeviceTable& devs,
                                       detail::DecodedBatch& out) {
    checkSequence(source, s, b, out);
    s.anyBatch = true;
    for (const std::string& str : b.new_strings()) s.strings.push_back(base::sanitizeUtf8(str));
    s.dropped += b.dropped_records();
    out.text.reserve(static_cast<size_t>(b.activities_size()) * 256);
    out.events.reserve(static_cast<size_t>(b.activities_size()));
    for (const pb::Activity& a : b.activities()) {
        const auto n = static_cast<uint32_t>(s.strings.size());
        if (a.name_id() >= n || a.category_id() >= n) {
            ++out.bad;
            if (out.problems.size() < 3)
                out.problems.push_back(label(source, s) + ", batch " + std::to_string(b.sequence()) +
                                       ": an activity names string " +
                                       std::to_string(std::max(a.name_id(), a.category_id())) + " of " +
                                       std::to_string(n) + " received (skipped)");
            continue;
        }
        detail::EncodeInput in;
        in.activity = &a;
        in.name = s.strings[a.name_id()];
        in.category = a.category_id() != 0 ? std::string_view(s.strings[a.category_id()]) : std::string_view();
        in.correlation = mapCorrelation(source, s, a.correlation());
        in.defaultPid = s.hello ? s.info.pid() : 0;
        in.baseNs = baseNs;
        if (auto it = devs.find(a.device()); it != devs.end()) in.device = &it->second;
        PendingEvent ev;
        std::string problemText;
        if (!detail::encodeActivity(in, out.text, ev, problemText)) {
            ++out.bad;
            if (out.problems.size() < 3) out.problems.push_back(label(source, s) + ": " + problemText);
            continue;
        }
        out.events.push_back(ev);
    }
    s.records += out.events.size();
}

bool CaptureSession::Impl::receiveBatch(uint32_t source, SourceState& s, const pb::Batch& b) {
    detail::DecodedBatch out;
    bool firstContact = false;
    std::shared_ptr<const DeviceTable> devs;
    {
        std::lock_guard lock(mutex);
        devs = deviceTable;
    }
    {
        std::lock_guard lock(s.mutex);
        firstContact = !s.hello && !s.anyBatch;
        decodeBatch(source, s, b, *devs, out);
    }
    bool ok = true;
    size_t pendingNow = 0;
    {
        std::lock_guard lock(mutex);
        if (firstContact) ++stats.sources;
        ++stats.batches;
        stats.missingBatches += out.missing;
        stats.badMessages += out.bad;
        stats.droppedBySources += b.dropped_records();
        if (b.dropped_records() > 0)
            dropReasons[b.drop_reason().empty() ? "unspecified" : base::sanitizeUtf8(b.drop_reason())] +=
                b.dropped_records();
        for (const auto& p : out.problems) problem(p);
        ok = appendEvents(out.text, out.events);
        pendingNow = pending.size();
    }
    if (pendingNow >= kMaxPending) {
        std::lock_guard lock(builderMutex);  // back-pressure: the socket fills, the source drops
        drainLocked();
    } else if (pendingNow >= kDrainAt) {
        std::unique_lock lock(builderMutex, std::try_to_lock);
        if (lock.owns_lock()) drainLocked();
    }
    return ok;
}

bool CaptureSession::Impl::appendEvents(std::string& text, std::vector<PendingEvent>& events) {
    if (finished || logFailed) return false;
    if (events.empty()) return true;
    if (eventsWritten == 0) text[0] = ' ';  // no separator before the first event
    std::string error;
    if (!detail::writeFile(logFd, text, error)) {
        logFailed = true;
        problem("cannot write the event log " + logPath.string() + ": " + error + " (later events are lost)");
        return false;
    }
    for (PendingEvent& ev : events) {
        ev.srcOffset += logBytes;
        if (ev.correlation != model::SliceTable::kNoCorrelation) {
            if (ev.launchSide) launches.push_back({ev.correlation, ev.start, ev.pid, ev.tid});
            else if (model::isGpuWork(ev.kind)) gpuWork.push_back({ev.correlation, ev.start, ev.pid, ev.tid});
        }
        if (model::isGpuWork(ev.kind)) ++stats.gpuActivities;
        if (ev.gpuRow && !gpuDevicesSeen.count(static_cast<int32_t>(ev.pid))) {
            gpuDevicesSeen[static_cast<int32_t>(ev.pid)] = true;
            metadataDirty = true;
        }
        pending.push_back(ev);
    }
    logBytes += text.size();
    eventsWritten += events.size();
    stats.records += events.size();
    return true;
}

} // namespace stallscope::capture
