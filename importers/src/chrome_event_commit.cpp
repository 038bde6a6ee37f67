// ChromeEventReader, second half: turning the fields of one event into batch rows.
#include "chrome_event_reader.h"

namespace stallscope::importers {

using model::DiagnosticKind;
using model::EventKind;

uint32_t ChromeEventReader::processIndex(LocalKey pid) {
    if (m_lastProcess != UINT32_MAX && pid == m_lastPid) return m_lastProcess;
    auto [it, inserted] = m_processMap.try_emplace({0u, pid}, 0u);
    if (inserted) {
        it->second = static_cast<uint32_t>(m_b.processes.size());
        m_b.processes.push_back(pid);
    }
    m_lastPid = pid;
    m_lastProcess = it->second;
    m_lastTrack = UINT32_MAX;
    return it->second;
}

uint32_t ChromeEventReader::trackIndex(LocalKey pid, LocalKey tid) {
    if (m_lastTrack != UINT32_MAX && pid == m_lastPid && tid == m_lastTid) return m_lastTrack;
    const uint32_t process = processIndex(pid);
    auto [it, inserted] = m_trackMap.try_emplace({process, tid}, 0u);
    if (inserted) {
        it->second = static_cast<uint32_t>(m_b.tracks.size());
        m_b.tracks.emplace_back(process, tid);
    }
    m_lastTid = tid;
    m_lastTrack = it->second;
    return it->second;
}

EventKind ChromeEventReader::kindOf(uint32_t cat, bool hasCat) {
    if (!hasCat) return model::kindFromCategory({}, false);
    if (cat >= m_catKind.size()) m_catKind.resize(cat + 1, 0);
    if (m_catKind[cat] == 0)
        m_catKind[cat] = static_cast<uint8_t>(
            static_cast<uint8_t>(model::kindFromCategory(m_b.strings.view(model::StringId(cat)), true)) + 1);
    return static_cast<EventKind>(m_catKind[cat] - 1);
}

void ChromeEventReader::countPhase() {
    if (m_ev.hasPh) {
        const std::string_view ph = m_ev.ph;
        if (ph.size() == 1 && static_cast<unsigned char>(ph[0]) < 128) {
            ++m_b.phaseByChar[static_cast<unsigned char>(ph[0])];
        } else {
            const uint32_t id = m_b.strings.intern(ph).value;
            bool found = false;
            for (auto& [pid, n] : m_b.otherPhases)
                if (pid == id) ++n, found = true;
            if (!found) m_b.otherPhases.emplace_back(id, 1);
        }
    }
    if (m_ev.hasCat) {
        if (m_ev.cat >= m_b.categoryCount.size()) m_b.categoryCount.resize(m_ev.cat + 1, 0);
        ++m_b.categoryCount[m_ev.cat];
    }
}

bool ChromeEventReader::requireTime(uint64_t offset) {
    if (!m_ev.hasTs) {
        m_b.diagnostics.add(DiagnosticKind::MissingField, offset, "no \"ts\"");
        return false;
    }
    if (m_ev.tsStatus == NumberStatus::NotANumber) {
        m_b.diagnostics.add(DiagnosticKind::NotANumber, offset, "\"ts\" is not a number");
        return false;
    }
    if (m_ev.tsStatus == NumberStatus::OutOfRange) {
        m_b.diagnostics.add(DiagnosticKind::NumberOutOfRange, offset,
                            "\"ts\" beyond the int64 nanosecond range");
        return false;
    }
    return true;
}

void ChromeEventReader::commit(uint64_t offset, uint32_t length) {
    for (const PendingDiagnostic& d : m_pending) m_b.diagnostics.add(d.kind, d.offset, d.detail);
    m_pending.clear();
    countPhase();
    if (!m_ev.hasPh) {
        if (m_ev.wrongType == "ph")
            m_b.diagnostics.add(DiagnosticKind::WrongType, offset, "\"ph\" is not a string");
        else
            m_b.diagnostics.add(DiagnosticKind::MissingField, offset, "no \"ph\"");
        return;
    }
    if (!m_ev.wrongType.empty()) {
        std::string what = "\"";  // not "literal" + std::string: GCC 12's -Wrestrict false positive (bug 105329)
        what += m_ev.wrongType;
        what += "\" has an unexpected type";
        m_b.diagnostics.add(DiagnosticKind::WrongType, offset, what);
    }
    const char ph = m_ev.ph.size() == 1 ? m_ev.ph[0] : '\0';
    switch (ph) {
    case 'X': commitSlice(offset, length); return;
    case 'B': commitBeginEnd(true, offset, length); return;
    case 'E': commitBeginEnd(false, offset, length); return;
    case 'i':
    case 'I':
    case 'R': commitInstant(offset, length); return;
    case 'C': commitCounter(offset); return;
    case 's':
    case 't':
    case 'f':
        if (requireTime(offset)) {
            if (!m_ev.hasId) m_b.diagnostics.add(DiagnosticKind::MissingField, offset, "flow without \"id\"");
            else commitFlow(ph);
        }
        return;
    case 'M': commitMetadata(offset); return;
    default:
        m_b.diagnostics.add(DiagnosticKind::UnsupportedPhase, offset,
                            "phase \"" + std::string(m_ev.ph) + "\"");
        return;
    }
}

void ChromeEventReader::commitSlice(uint64_t offset, uint32_t length) {
    if (!requireTime(offset)) return;
    uint8_t flags = 0;
    int64_t dur = m_ev.dur;
    if (!m_ev.hasDur) {
        m_b.diagnostics.add(DiagnosticKind::MissingDuration, offset, "X event without \"dur\"");
        dur = 0;
        flags |= model::kSliceDurationClamped;
    } else if (m_ev.durStatus != NumberStatus::Ok) {
        m_b.diagnostics.add(m_ev.durStatus == NumberStatus::NotANumber ? DiagnosticKind::NotANumber
                                                                       : DiagnosticKind::NumberOutOfRange,
                            offset, "\"dur\" is not a usable number");
        dur = 0;
        flags |= model::kSliceDurationClamped;
    } else if (dur < 0) {
        m_b.diagnostics.add(DiagnosticKind::NegativeDuration, offset,
                            "dur " + std::to_string(dur) + " ns");
        dur = 0;
        flags |= model::kSliceDurationClamped;
    }
    int64_t end;
    if (__builtin_add_overflow(m_ev.ts, dur, &end)) {
        m_b.diagnostics.add(DiagnosticKind::NumberOutOfRange, offset, "ts + dur beyond int64 ns");
        return;
    }
    const uint32_t track = trackIndex(m_ev.pid, m_ev.tid);
    const EventKind kind = kindOf(m_ev.cat, m_ev.hasCat);
    uint64_t extra = model::SliceExtra::kNone;
    if (kind == EventKind::Kernel) {
        if (m_ev.blocksPerSm >= 0 || m_ev.occupancy >= 0)
            extra = model::SliceExtra::packKernel(m_ev.blocksPerSm, m_ev.occupancy);
    } else if (kind == EventKind::Memcpy || kind == EventKind::Memset) {
        if (m_ev.bytes >= 0) extra = static_cast<uint64_t>(m_ev.bytes);
    } else {
        extra = m_ev.externalId;
    }
    model::SliceTable& s = m_b.slices;
    s.start.push_back(m_ev.ts);
    s.dur.push_back(dur);
    s.track.push_back(model::TrackId(track));
    s.name.push_back(model::StringId(m_ev.name));
    s.category.push_back(model::StringId(m_ev.hasCat ? m_ev.cat : 0));
    s.parent.push_back(model::SliceId());
    s.srcOffset.push_back(offset);
    s.srcLength.push_back(length);
    s.correlation.push_back(m_ev.correlation);
    s.extra.push_back(extra);
    s.kind.push_back(kind);
    s.flags.push_back(flags);
    s.depth.push_back(0);
    // Flow events v2: bind_id on the slice itself.
    if (m_ev.hasBindId && (m_ev.flowOut || m_ev.flowIn)) {
        model::FlowEndpoint ep;
        ep.ts = m_ev.ts;
        ep.track = model::TrackId(track);
        ep.id = m_ev.bindId;
        ep.category = model::StringId(m_ev.hasCat ? m_ev.cat : 0);
        ep.bindEnclosing = true;
        if (m_ev.flowIn) {
            ep.phase = m_ev.flowOut ? 't' : 'f';
            m_b.flows.push_back(ep);
        } else {
            ep.phase = 's';
            m_b.flows.push_back(ep);
        }
    }
}

void ChromeEventReader::commitInstant(uint64_t offset, uint32_t length) {
    if (!requireTime(offset)) return;
    if (m_memoryName == UINT32_MAX) m_memoryName = m_b.strings.intern("[memory]").value;
    if (m_ev.name == m_memoryName && m_ev.memoryFields) {
        model::MemorySample ms;
        ms.ts = m_ev.ts;
        ms.bytes = m_ev.memBytes;
        ms.totalAllocated = m_ev.totalAllocated;
        ms.totalReserved = m_ev.totalReserved;
        ms.deviceType = m_ev.deviceType;
        ms.deviceId = m_ev.deviceId;
        ms.process = model::ProcessId(processIndex(m_ev.pid));
        ms.track = model::TrackId(trackIndex(m_ev.pid, m_ev.tid));
        ms.addr = m_ev.memAddr;
        m_b.memory.push_back(ms);
        return;
    }
    model::InstantTable& in = m_b.instants;
    in.ts.push_back(m_ev.ts);
    in.track.push_back(model::TrackId(trackIndex(m_ev.pid, m_ev.tid)));
    in.name.push_back(model::StringId(m_ev.name));
    in.category.push_back(model::StringId(m_ev.hasCat ? m_ev.cat : 0));
    in.scope.push_back(m_ev.scope ? m_ev.scope : 't');
    in.srcOffset.push_back(offset);
    in.srcLength.push_back(length);
}

void ChromeEventReader::commitCounter(uint64_t offset) {
    if (!requireTime(offset)) return;
    const uint32_t process = processIndex(m_ev.pid);
    for (const auto& [key, value] : m_ev.numerics)
        m_b.counters.push_back(CounterRecord{process, m_ev.name, key, m_ev.ts, value});
}

void ChromeEventReader::commitFlow(char phase) {
    model::FlowEndpoint ep;
    ep.ts = m_ev.ts;
    ep.track = model::TrackId(trackIndex(m_ev.pid, m_ev.tid));
    ep.id = m_ev.id;
    ep.category = model::StringId(m_ev.hasCat ? m_ev.cat : 0);
    ep.phase = phase;
    // Chrome: 's' and 't' bind to the enclosing slice; 'f' to the next slice unless bp:"e".
    ep.bindEnclosing = phase != 'f' || m_ev.bp == 'e';
    m_b.flows.push_back(ep);
}

void ChromeEventReader::commitBeginEnd(bool begin, uint64_t offset, uint32_t length) {
    if (!requireTime(offset)) return;
    model::BeginEnd e;
    e.ts = m_ev.ts;
    e.track = model::TrackId(trackIndex(m_ev.pid, m_ev.tid));
    e.name = model::StringId(m_ev.name);
    e.category = model::StringId(m_ev.hasCat ? m_ev.cat : 0);
    e.srcOffset = offset;
    e.srcLength = length;
    e.correlation = m_ev.correlation;
    e.begin = begin;
    m_b.beginEnds.push_back(e);
}

void ChromeEventReader::commitMetadata(uint64_t offset) {
    const std::string_view name = m_b.strings.view(model::StringId(m_ev.name));
    MetaRecord r{};
    r.text = m_ev.metaText;
    r.number = m_ev.sortIndex;
    bool wantsText = true;
    if (name == "process_name") r.kind = MetaKind::ProcessName;
    else if (name == "process_labels") r.kind = MetaKind::ProcessLabels;
    else if (name == "thread_name") r.kind = MetaKind::ThreadName;
    else if (name == "process_sort_index") r.kind = MetaKind::ProcessSortIndex, wantsText = false;
    else if (name == "thread_sort_index") r.kind = MetaKind::ThreadSortIndex, wantsText = false;
    else return;  // other metadata (process_uptime_seconds, ...) is not modelled
    if (wantsText ? r.text == UINT32_MAX : !m_ev.hasSortIndex) {
        m_b.diagnostics.add(DiagnosticKind::InvalidMetadata, offset,
                            std::string(name) + " without a usable value");
        return;
    }
    r.process = processIndex(m_ev.pid);
    if (r.kind == MetaKind::ThreadName || r.kind == MetaKind::ThreadSortIndex)
        r.track = trackIndex(m_ev.pid, m_ev.tid);
    m_b.metadata.push_back(r);
}

} // namespace stallscope::importers
