#include "stallscope/model/trace_builder.h"

#include "trace_finalizer.h"

#include <chrono>

namespace stallscope::model {

size_t TraceBuilder::KeyHash::operator()(const std::pair<uint32_t, RowKey>& k) const noexcept {
    uint64_t h = static_cast<uint64_t>(k.first) * 0x9e3779b97f4a7c15ull;
    h ^= static_cast<uint64_t>(k.second.number) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.second.text.value) * 0xc2b2ae3d27d4eb4full;
    return static_cast<size_t>(h ^ (h >> 29));
}

TraceBuilder::TraceBuilder() : m_trace(std::make_unique<Trace>()) {}
TraceBuilder::~TraceBuilder() = default;
TraceBuilder::TraceBuilder(TraceBuilder&&) noexcept = default;
TraceBuilder& TraceBuilder::operator=(TraceBuilder&&) noexcept = default;

ProcessId TraceBuilder::process(RowKey key) {
    auto [it, inserted] = m_processIndex.try_emplace({0u, key}, 0u);
    if (inserted) {
        it->second = static_cast<uint32_t>(m_trace->m_processes.size());
        ProcessInfo info;
        info.key = key;
        m_trace->m_processes.push_back(info);
    }
    return ProcessId(it->second);
}

TrackId TraceBuilder::track(ProcessId process, RowKey key) {
    auto [it, inserted] = m_trackIndex.try_emplace({process.value, key}, 0u);
    if (inserted) {
        it->second = static_cast<uint32_t>(m_trace->m_tracks.size());
        TrackInfo info;
        info.process = process;
        info.key = key;
        m_trace->m_tracks.push_back(info);
    }
    return TrackId(it->second);
}

void TraceBuilder::appendSlice(const SliceRow& row) {
    SliceTable& s = m_trace->m_slices;
    s.start.push_back(row.start);
    s.dur.push_back(row.dur < 0 ? 0 : row.dur);
    s.track.push_back(row.track);
    s.name.push_back(row.name);
    s.category.push_back(row.category);
    s.parent.push_back(SliceId());
    s.srcOffset.push_back(row.srcOffset);
    s.srcLength.push_back(row.srcLength);
    s.correlation.push_back(row.correlation);
    s.extra.push_back(row.extra);
    s.kind.push_back(row.kind);
    s.flags.push_back(row.flags);
    s.depth.push_back(0);
}

void TraceBuilder::appendInstant(int64_t ts, TrackId track, StringId name, StringId category,
                                 char scope, uint64_t srcOffset, uint32_t srcLength) {
    InstantTable& t = m_trace->m_instants;
    t.ts.push_back(ts);
    t.track.push_back(track);
    t.name.push_back(name);
    t.category.push_back(category);
    t.scope.push_back(scope);
    t.srcOffset.push_back(srcOffset);
    t.srcLength.push_back(srcLength);
}

CounterId TraceBuilder::counterSeries(ProcessId process, StringId name, StringId key) {
    auto [it, inserted] = m_counterIndex.try_emplace({process.value, name.value, key.value}, 0u);
    if (inserted) {
        it->second = static_cast<uint32_t>(m_trace->m_counterSeries.size());
        m_trace->m_counterSeries.push_back(CounterSeries{process, name, key, 0, 0});
    }
    return CounterId(it->second);
}

void TraceBuilder::appendCounter(CounterId series, int64_t ts, double value) {
    m_trace->m_counterSamples.ts.push_back(ts);
    m_trace->m_counterSamples.value.push_back(value);
    m_counterSampleSeries.push_back(series.value);
}

TraceBuilder TraceBuilder::clone() const {
    TraceBuilder b;
    Trace& d = *b.m_trace;
    const Trace& s = *m_trace;
    for (size_t i = 1; i < s.m_strings.size(); ++i)
        d.m_strings.intern(s.m_strings.view(StringId(static_cast<uint32_t>(i))));
    d.m_processes = s.m_processes;
    d.m_tracks = s.m_tracks;
    d.m_slices = s.m_slices;
    d.m_instants = s.m_instants;
    d.m_counterSeries = s.m_counterSeries;
    d.m_counterSamples = s.m_counterSamples;
    d.m_memory = s.m_memory;
    d.m_metadata = s.m_metadata;
    d.m_diagnostics = s.m_diagnostics;
    d.m_stats = s.m_stats;
    d.m_allocator = s.m_allocator;
    b.m_processIndex = m_processIndex;
    b.m_trackIndex = m_trackIndex;
    b.m_flowEndpoints = m_flowEndpoints;
    b.m_beginEnds = m_beginEnds;
    b.m_counterSampleSeries = m_counterSampleSeries;
    b.m_counterIndex = m_counterIndex;
    b.m_source = m_source;
    b.m_timeBase = m_timeBase;
    return b;
}

std::shared_ptr<const Trace> TraceBuilder::snapshot() const {
    return clone().finish();
}

std::shared_ptr<const Trace> TraceBuilder::finish(const std::atomic<bool>* stop) {
    const auto t0 = std::chrono::steady_clock::now();
    TraceFinalizer fin(*this, stop);
    if (!fin.run()) {
        *this = TraceBuilder();
        return nullptr;
    }
    // Import time includes finalizing (sorting, nesting, indexes).
    const double fin_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m_trace->m_stats.seconds += fin_s;
    m_trace->m_stats.finalizeSeconds = fin_s;
    std::shared_ptr<const Trace> out(std::move(m_trace));
    *this = TraceBuilder();
    return out;
}

} // namespace stallscope::model
