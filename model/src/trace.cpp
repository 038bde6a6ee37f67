#include "stallscope/model/trace.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace stallscope::model {

namespace {
template <class V>
size_t capBytes(const V& v) {
    return v.capacity() * sizeof(typename V::value_type);
}
} // namespace

void SliceTable::reserve(size_t n) {
    start.reserve(n);
    dur.reserve(n);
    track.reserve(n);
    name.reserve(n);
    category.reserve(n);
    parent.reserve(n);
    srcOffset.reserve(n);
    srcLength.reserve(n);
    correlation.reserve(n);
    extra.reserve(n);
    kind.reserve(n);
    flags.reserve(n);
    depth.reserve(n);
}

void SliceTable::resize(size_t n) {
    start.resize(n);
    dur.resize(n);
    track.resize(n);
    name.resize(n);
    category.resize(n);
    parent.resize(n);
    srcOffset.resize(n);
    srcLength.resize(n);
    correlation.resize(n, kNoCorrelation);
    extra.resize(n, SliceExtra::kNone);
    kind.resize(n);
    flags.resize(n);
    depth.resize(n);
}

size_t SliceTable::memoryBytes() const {
    return capBytes(start) + capBytes(dur) + capBytes(track) + capBytes(name) +
           capBytes(category) + capBytes(parent) + capBytes(srcOffset) + capBytes(srcLength) +
           capBytes(correlation) + capBytes(extra) + capBytes(kind) + capBytes(flags) +
           capBytes(depth);
}

size_t InstantTable::memoryBytes() const {
    return capBytes(ts) + capBytes(track) + capBytes(name) + capBytes(category) +
           capBytes(scope) + capBytes(srcOffset) + capBytes(srcLength);
}

void InstantTable::clear() {
    ts.clear();
    track.clear();
    name.clear();
    category.clear();
    scope.clear();
    srcOffset.clear();
    srcLength.clear();
}

uint64_t SliceExtra::packKernel(float blocksPerSm, float estOccupancyPct) {
    return (static_cast<uint64_t>(std::bit_cast<uint32_t>(blocksPerSm)) << 32) |
           std::bit_cast<uint32_t>(estOccupancyPct);
}

float SliceExtra::blocksPerSm(uint64_t extra) {
    if (extra == kNone) return -1.0f;
    return std::bit_cast<float>(static_cast<uint32_t>(extra >> 32));
}

float SliceExtra::estOccupancyPct(uint64_t extra) {
    if (extra == kNone) return -1.0f;
    return std::bit_cast<float>(static_cast<uint32_t>(extra & 0xffffffffu));
}

Trace::Trace() = default;
Trace::~Trace() = default;

uint32_t Trace::firstSliceEndingAtOrAfter(TrackId t, int64_t ns) const {
    const TrackInfo& tr = m_tracks[t.index()];
    const uint32_t n = tr.sliceEnd - tr.sliceBegin;
    if (n == 0) return tr.sliceEnd;
    const uint32_t blocks = (n + kEndIndexStride - 1) / kEndIndexStride;
    const int64_t* idx = m_blockMaxEnd.data() + tr.endIndexBegin;
    // Prefix maxima are non-decreasing: binary search the first block reaching ns.
    const int64_t* hit = std::lower_bound(idx, idx + blocks, ns);
    if (hit == idx + blocks) return tr.sliceEnd;
    const uint32_t b = static_cast<uint32_t>(hit - idx);
    uint32_t i = tr.sliceBegin + b * kEndIndexStride;
    const uint32_t stop = std::min(tr.sliceEnd, i + kEndIndexStride);
    for (; i < stop; ++i)
        if (m_slices.end(i) >= ns) return i;
    return stop;  // unreachable when the index is consistent
}

uint32_t Trace::firstSliceStartingAfter(TrackId t, int64_t ns) const {
    const TrackInfo& tr = m_tracks[t.index()];
    auto first = m_slices.start.begin() + tr.sliceBegin;
    auto last = m_slices.start.begin() + tr.sliceEnd;
    return static_cast<uint32_t>(std::upper_bound(first, last, ns) - m_slices.start.begin());
}

SliceId Trace::launchOf(SliceId gpuSlice) const {
    const uint32_t corr = m_slices.correlation[gpuSlice.index()];
    if (corr == SliceTable::kNoCorrelation) return {};
    auto it = std::lower_bound(m_launchByCorrelation.begin(), m_launchByCorrelation.end(),
                               CorrelationEntry{corr, SliceId(0)});
    if (it == m_launchByCorrelation.end() || it->correlation != corr) return {};
    return it->slice;
}

std::span<const CorrelationEntry> Trace::gpuWorkOf(SliceId launchSlice) const {
    const uint32_t corr = m_slices.correlation[launchSlice.index()];
    if (corr == SliceTable::kNoCorrelation) return {};
    auto lo = std::lower_bound(m_gpuByCorrelation.begin(), m_gpuByCorrelation.end(),
                               CorrelationEntry{corr, SliceId(0)});
    auto hi = lo;
    while (hi != m_gpuByCorrelation.end() && hi->correlation == corr) ++hi;
    return {m_gpuByCorrelation.data() + (lo - m_gpuByCorrelation.begin()),
            static_cast<size_t>(hi - lo)};
}

SliceId Trace::enclosingOp(SliceId slice) const {
    SliceId p = m_slices.parent[slice.index()];
    while (p.valid()) {
        const EventKind k = m_slices.kind[p.index()];
        if (k == EventKind::CpuOp || k == EventKind::UserAnnotation) return p;
        p = m_slices.parent[p.index()];
    }
    return {};
}

bool Trace::sliceArgs(SliceId s, std::vector<ArgValue>& out, std::string& error) const {
    out.clear();
    if (!m_source) {
        error = "the trace keeps no event text";
        return false;
    }
    return m_source->args({m_slices.srcOffset[s.index()], m_slices.srcLength[s.index()]}, out,
                          error);
}

void Trace::slicesArgs(const std::vector<SliceId>& slices,
                       const EventSource::ArgsVisitor& each) const {
    std::vector<ArgValue> none;
    if (!m_source) {
        for (size_t i = 0; i < slices.size(); ++i) each(i, false, none);
        return;
    }
    std::vector<SourceRef> refs(slices.size());
    for (size_t i = 0; i < slices.size(); ++i)
        refs[i] = {m_slices.srcOffset[slices[i].index()], m_slices.srcLength[slices[i].index()]};
    m_source->argsOfMany(refs, each);
}

bool Trace::sliceRawText(SliceId s, std::string& out, std::string& error) const {
    out.clear();
    if (!m_source) {
        error = "the trace keeps no event text";
        return false;
    }
    return m_source->rawEvent({m_slices.srcOffset[s.index()], m_slices.srcLength[s.index()]},
                              out, error);
}

size_t Trace::memoryBytes() const {
    size_t b = sizeof(Trace) + m_strings.memoryBytes() + m_slices.memoryBytes() +
               m_instants.memoryBytes() + capBytes(m_processes) + capBytes(m_tracks) +
               capBytes(m_displayOrder) + capBytes(m_blockMaxEnd) + capBytes(m_flows) +
               capBytes(m_counterSeries) + capBytes(m_counterSamples.ts) +
               capBytes(m_counterSamples.value) + capBytes(m_memory) +
               capBytes(m_launchByCorrelation) + capBytes(m_gpuByCorrelation);
    if (m_source) b += m_source->memoryBytes();
    if (m_allocator) b += m_allocator->memoryBytes();
    return b;
}

size_t Trace::eventCount() const {
    return m_slices.size() + m_instants.size() + m_counterSamples.size() + m_flows.size() * 2 +
           m_memory.size();
}

} // namespace stallscope::model
