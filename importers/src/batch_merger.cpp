#include "batch_merger.h"

namespace stallscope::importers {

using namespace model;

namespace {
template <class T>
void appendAll(std::vector<T>& dst, const std::vector<T>& src) {
    dst.insert(dst.end(), src.begin(), src.end());
}
} // namespace

bool BatchMerger::selectPid(const EventBatch& b, const LocalKey& k, RowKey& out) {
    if (k.text == UINT32_MAX) {
        if (!m_pids->numbers.count(k.number)) return false;
        out = RowKey{k.number - m_pids->subtract, StringId()};
        return true;
    }
    const auto it = m_pids->texts.find(std::string(b.strings.view(StringId(k.text))));
    if (it == m_pids->texts.end()) return false;
    out = it->second == INT64_MIN ? RowKey{0, StringId(m_str[k.text])}
                                  : RowKey{it->second, StringId()};
    return true;
}

void BatchMerger::merge(EventBatch& b) {
    // Strings: one lookup per distinct string of the block.
    m_str.resize(b.strings.size());
    for (uint32_t i = 0; i < b.strings.size(); ++i)
        m_str[i] = m_b.intern(b.strings.view(StringId(i))).value;
    auto key = [this](const LocalKey& k) {
        return RowKey{k.number, k.text == UINT32_MAX ? StringId() : StringId(m_str[k.text])};
    };
    m_proc.resize(b.processes.size());
    bool dropped = false; // some process of this batch is not selected
    for (size_t i = 0; i < b.processes.size(); ++i) {
        RowKey k = key(b.processes[i]);
        if (m_pids && !selectPid(b, b.processes[i], k)) {
            m_proc[i] = ProcessId();
            dropped = true;
            continue;
        }
        m_proc[i] = m_b.process(k);
    }
    m_track.resize(b.tracks.size());
    for (size_t i = 0; i < b.tracks.size(); ++i)
        m_track[i] = m_proc[b.tracks[i].first].valid()
                         ? m_b.track(m_proc[b.tracks[i].first], key(b.tracks[i].second))
                         : TrackId();

    // Slices: bulk append, then remap the id columns in place.
    SliceTable& dst = m_b.sliceColumns();
    const SliceTable& src = b.slices;
    const size_t base = dst.size();
    const size_t n = src.size();
    if (dropped) {
        // One rank of several: row by row, the selected processes' rows only.
        for (size_t i = 0; i < n; ++i) {
            const TrackId t = m_track[src.track[i].index()];
            if (!t.valid()) continue;
            dst.start.push_back(src.start[i]);
            dst.dur.push_back(src.dur[i]);
            dst.parent.push_back(src.parent[i]);
            dst.srcOffset.push_back(src.srcOffset[i]);
            dst.srcLength.push_back(src.srcLength[i]);
            dst.correlation.push_back(src.correlation[i]);
            dst.extra.push_back(src.extra[i]);
            dst.kind.push_back(src.kind[i]);
            dst.flags.push_back(src.flags[i]);
            dst.depth.push_back(src.depth[i]);
            dst.track.push_back(t);
            dst.name.push_back(StringId(m_str[src.name[i].index()]));
            dst.category.push_back(StringId(m_str[src.category[i].index()]));
        }
    } else {
        appendAll(dst.start, src.start);
        appendAll(dst.dur, src.dur);
        appendAll(dst.parent, src.parent);
        appendAll(dst.srcOffset, src.srcOffset);
        appendAll(dst.srcLength, src.srcLength);
        appendAll(dst.correlation, src.correlation);
        appendAll(dst.extra, src.extra);
        appendAll(dst.kind, src.kind);
        appendAll(dst.flags, src.flags);
        appendAll(dst.depth, src.depth);
        dst.track.resize(base + n);
        dst.name.resize(base + n);
        dst.category.resize(base + n);
        for (size_t i = 0; i < n; ++i) {
            dst.track[base + i] = m_track[src.track[i].index()];
            dst.name[base + i] = StringId(m_str[src.name[i].index()]);
            dst.category[base + i] = StringId(m_str[src.category[i].index()]);
        }
    }

    const InstantTable& in = b.instants;
    for (size_t i = 0; i < in.size(); ++i)
        if (m_track[in.track[i].index()].valid())
            m_b.appendInstant(in.ts[i], m_track[in.track[i].index()],
                              StringId(m_str[in.name[i].index()]),
                              StringId(m_str[in.category[i].index()]), in.scope[i], in.srcOffset[i],
                              in.srcLength[i]);
    for (FlowEndpoint e : b.flows) {
        e.track = m_track[e.track.index()];
        if (!e.track.valid()) continue;
        e.category = StringId(m_str[e.category.index()]);
        m_b.appendFlowEndpoint(e);
    }
    for (BeginEnd e : b.beginEnds) {
        e.track = m_track[e.track.index()];
        if (!e.track.valid()) continue;
        e.name = StringId(m_str[e.name.index()]);
        e.category = StringId(m_str[e.category.index()]);
        m_b.appendBeginEnd(e);
    }
    for (const CounterRecord& c : b.counters) {
        const ProcessId p = m_proc[c.process];
        if (!p.valid()) continue;
        const uint32_t name = m_str[c.name], k = m_str[c.key];
        auto [it, inserted] = m_series.try_emplace({p.value, name, k}, CounterId());
        if (inserted) it->second = m_b.counterSeries(p, StringId(name), StringId(k));
        m_b.appendCounter(it->second, c.ts, c.value);
    }
    for (MemorySample m : b.memory) {
        m.process = m_proc[m.process.index()];
        if (!m.process.valid()) continue;
        if (m.track.valid()) m.track = m_track[m.track.index()];
        m_b.appendMemory(m);
    }
    for (const MetaRecord& r : b.metadata) {
        const StringId text = r.text == UINT32_MAX ? StringId() : StringId(m_str[r.text]);
        const bool thread = r.kind == MetaKind::ThreadName || r.kind == MetaKind::ThreadSortIndex;
        if (thread ? !m_track[r.track].valid() : !m_proc[r.process].valid()) continue;
        switch (r.kind) {
        case MetaKind::ProcessName: m_b.processInfo(m_proc[r.process]).name = text; break;
        case MetaKind::ProcessLabels: m_b.processInfo(m_proc[r.process]).labels = text; break;
        case MetaKind::ProcessSortIndex: {
            ProcessInfo& p = m_b.processInfo(m_proc[r.process]);
            p.sortIndex = r.number;
            p.hasSortIndex = true;
            break;
        }
        case MetaKind::ThreadName: m_b.trackInfo(m_track[r.track]).name = text; break;
        case MetaKind::ThreadSortIndex: {
            TrackInfo& t = m_b.trackInfo(m_track[r.track]);
            t.sortIndex = r.number;
            t.hasSortIndex = true;
            break;
        }
        }
    }

    ImportStats& st = m_b.stats();
    st.entries += b.entries;
    m_events += b.entries;
    for (size_t c = 0; c < b.phaseByChar.size(); ++c)
        if (b.phaseByChar[c]) st.byPhase[std::string(1, static_cast<char>(c))] += b.phaseByChar[c];
    for (const auto& [id, count] : b.otherPhases)
        st.byPhase[std::string(b.strings.view(StringId(id)))] += count;
    for (uint32_t id = 0; id < b.categoryCount.size(); ++id)
        if (b.categoryCount[id]) st.byCategory[std::string(b.strings.view(StringId(id)))] += b.categoryCount[id];
    m_b.diagnostics().merge(b.diagnostics);
}

} // namespace stallscope::importers
