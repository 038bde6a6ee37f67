#include "batch_merger.h"

namespace stallscope::importers {

using namespace model;

namespace {
template <class T>
void appendAll(std::vector<T>& dst, const std::vector<T>& src) {
    dst.insert(dst.end(), src.begin(), src.end());
}
} // namespace

void BatchMerger::merge(EventBatch& b) {
    // Strings: one lookup per distinct string of the block.
    m_str.resize(b.strings.size());
    for (uint32_t i = 0; i < b.strings.size(); ++i)
        m_str[i] = m_b.intern(b.strings.view(StringId(i))).value;
    auto key = [this](const LocalKey& k) {
        return RowKey{k.number, k.text == UINT32_MAX ? StringId() : StringId(m_str[k.text])};
    };
    m_proc.resize(b.processes.size());
    for (size_t i = 0; i < b.processes.size(); ++i) m_proc[i] = m_b.process(key(b.processes[i]));
    m_track.resize(b.tracks.size());
    for (size_t i = 0; i < b.tracks.size(); ++i)
        m_track[i] = m_b.track(m_proc[b.tracks[i].first], key(b.tracks[i].second));

    // Slices: bulk append, then remap the id columns in place.
    SliceTable& dst = m_b.sliceColumns();
    const SliceTable& src = b.slices;
    const size_t base = dst.size();
    const size_t n = src.size();
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

    const InstantTable& in = b.instants;
    for (size_t i = 0; i < in.size(); ++i)
        m_b.appendInstant(in.ts[i], m_track[in.track[i].index()], StringId(m_str[in.name[i].index()]),
                          StringId(m_str[in.category[i].index()]), in.scope[i], in.srcOffset[i],
                          in.srcLength[i]);
    for (FlowEndpoint e : b.flows) {
        e.track = m_track[e.track.index()];
        e.category = StringId(m_str[e.category.index()]);
        m_b.appendFlowEndpoint(e);
    }
    for (BeginEnd e : b.beginEnds) {
        e.track = m_track[e.track.index()];
        e.name = StringId(m_str[e.name.index()]);
        e.category = StringId(m_str[e.category.index()]);
        m_b.appendBeginEnd(e);
    }
    for (const CounterRecord& c : b.counters) {
        const ProcessId p = m_proc[c.process];
        const uint32_t name = m_str[c.name], k = m_str[c.key];
        auto [it, inserted] = m_series.try_emplace({p.value, name, k}, CounterId());
        if (inserted) it->second = m_b.counterSeries(p, StringId(name), StringId(k));
        m_b.appendCounter(it->second, c.ts, c.value);
    }
    for (MemorySample m : b.memory) {
        m.process = m_proc[m.process.index()];
        m_b.appendMemory(m);
    }
    for (const MetaRecord& r : b.metadata) {
        const StringId text = r.text == UINT32_MAX ? StringId() : StringId(m_str[r.text]);
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
