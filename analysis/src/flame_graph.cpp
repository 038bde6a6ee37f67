#include "stallscope/analysis/flame_graph.h"

#include "stallscope/base/loop_guard.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace stallscope::analysis {

using namespace model;

namespace {

/// Open-addressing map (parent node, name id) -> node, linear probing, load <= 1/2.
class ChildIndex {
public:
    ChildIndex() { rehash(1024); }

    /// The slot of the key: holds the node, or -1 when the key is absent (then call set()).
    int32_t& slot(int32_t parent, StringId name) {
        const uint64_t key = (uint64_t(uint32_t(parent)) << 32) | name.value;
        size_t i = mix(key) & m_mask;
        while (m_values[i] >= 0 && m_keys[i] != key) i = (i + 1) & m_mask;
        m_keys[i] = key;
        return m_values[i];
    }
    /// Records that the slot found last now holds a node.
    void filled() {
        if (++m_size * 2 > m_values.size()) rehash(m_values.size() * 2);
    }

private:
    static uint64_t mix(uint64_t x) { // splitmix64 finaliser
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        return x ^ (x >> 31);
    }
    void rehash(size_t capacity) {
        std::vector<uint64_t> keys(capacity);
        std::vector<int32_t> values(capacity, -1);
        const size_t mask = capacity - 1;
        for (size_t i = 0; i < m_values.size(); ++i) {
            if (m_values[i] < 0) continue;
            size_t j = mix(m_keys[i]) & mask;
            while (values[j] >= 0) j = (j + 1) & mask;
            keys[j] = m_keys[i];
            values[j] = m_values[i];
        }
        m_keys.swap(keys);
        m_values.swap(values);
        m_mask = mask;
    }

    std::vector<uint64_t> m_keys;
    std::vector<int32_t> m_values;
    size_t m_mask = 0, m_size = 0;
};

class FlameBuilder {
public:
    FlameBuilder(const Trace& trace, FlameMode mode, int64_t startNs, int64_t endNs, int32_t device)
        : m_trace(trace), m_slices(trace.slices()) {
        m_graph.mode = mode;
        m_graph.startNs = startNs;
        m_graph.endNs = endNs;
        m_graph.device = device;
        m_graph.nodes.emplace_back(); // the root
    }

    void addCpuTime();
    void addGpuTime();
    FlameGraph finish();

private:
    /// The child of `parent` named `name`, created when new.
    int32_t child(int32_t parent, StringId name, EventKind kind) {
        const bool step = name.valid() && m_trace.str(name).starts_with("ProfilerStep#");
        if (step) {
            if (!m_stepName.valid()) m_stepName = name;
            name = m_stepName;  // every step shares the first step's name as its key
        }
        int32_t& slot = m_index.slot(parent, name);
        if (slot >= 0) return slot;
        const int32_t n = static_cast<int32_t>(m_graph.nodes.size());
        slot = n; // before filled(): a rehash moves the slot
        m_index.filled();
        FlameNode& node = m_graph.nodes.emplace_back();
        node.name = name;
        node.parent = parent;
        node.depth = m_graph.nodes[static_cast<size_t>(parent)].depth + 1;
        node.kind = kind;
        node.steps = step;
        return n;
    }
    FlameNode& node(int32_t n) { return m_graph.nodes[static_cast<size_t>(n)]; }
    /// The node of a CPU slice's full name path (memoised per slice in m_sliceNode);
    /// `countNew` counts each slice met for the first time as an instance of its node.
    int32_t pathNode(uint32_t slice, bool countNew);
    /// First slice of a track starting at or after the range start.
    uint32_t firstInRange(uint32_t track) const {
        const TrackInfo& tr = m_trace.tracks()[track];
        if (m_graph.startNs == std::numeric_limits<int64_t>::min()) return tr.sliceBegin;
        return m_trace.firstSliceStartingAfter(TrackId(track), m_graph.startNs - 1);
    }

    const Trace& m_trace;
    const SliceTable& m_slices;
    FlameGraph m_graph;
    ChildIndex m_index;
    std::vector<int32_t> m_sliceNode; // slice -> node, -1 = not yet resolved
    std::vector<uint32_t> m_chain;    // scratch: slices whose node is being resolved
    StringId m_stepName;              // the key of the merged ProfilerStep#* frames
};

int32_t FlameBuilder::pathNode(uint32_t slice, bool countNew) {
    if (m_sliceNode.empty()) m_sliceNode.assign(m_slices.size(), -1);
    m_chain.clear();
    SliceId s(slice);
    while (s.valid() && m_sliceNode[s.index()] < 0) {
        m_chain.push_back(static_cast<uint32_t>(s.index()));
        const SliceId parent = m_slices.parent[s.index()];
        // A parent precedes its children in the slice table: the walk moves left.
        if (parent.valid() && !STALLSCOPE_ADVANCED(parent.index(), s.index())) break;
        s = parent;
    }
    int32_t n = s.valid() ? m_sliceNode[s.index()] : 0;
    for (auto it = m_chain.rbegin(); it != m_chain.rend(); ++it) {
        n = child(n, m_slices.name[*it], m_slices.kind[*it]);
        m_sliceNode[*it] = n;
        if (countNew) ++node(n).count;
    }
    return n;
}

void FlameBuilder::addCpuTime() {
    const auto& tracks = m_trace.tracks();
    std::vector<int32_t> local; // node of each slice of the track's range, by offset
    for (uint32_t ti = 0; ti < tracks.size(); ++ti) {
        const TrackInfo& tr = tracks[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        const uint32_t first = firstInRange(ti);
        local.clear();
        for (uint32_t i = first; i < tr.sliceEnd && m_slices.start[i] < m_graph.endNs; ++i) {
            const SliceId p = m_slices.parent[i];
            const bool parentInRange = p.valid() && p.index() >= first;
            // Ancestors starting before the range are context: resolved (and memoised)
            // by their own path, with no instance counted.
            const int32_t pn = !p.valid()      ? 0
                               : parentInRange ? local[p.index() - first]
                                               : pathNode(static_cast<uint32_t>(p.index()), false);
            const int32_t n = child(pn, m_slices.name[i], m_slices.kind[i]);
            local.push_back(n);
            const int64_t dur = m_slices.dur[i];
            FlameNode& nd = node(n);
            ++nd.count;
            nd.totalNs += dur;
            // An outermost slice of the range: its time also counts for every node above.
            if (!parentInRange)
                for (int32_t a = pn; a >= 0; a = node(a).parent) {
                    node(a).totalNs += dur;
                    if (!STALLSCOPE_ADVANCED(node(a).parent, a)) break;  // parents are created first
                }
        }
    }
}

void FlameBuilder::addGpuTime() {
    const auto& tracks = m_trace.tracks();
    int32_t noLaunch = -1;
    for (uint32_t ti = 0; ti < tracks.size(); ++ti) {
        const TrackInfo& tr = tracks[ti];
        if (tr.kind != TrackKind::GpuStream) continue;
        if (m_graph.device >= 0 && m_trace.process(tr.process).gpuDevice != m_graph.device)
            continue;
        for (uint32_t i = firstInRange(ti); i < tr.sliceEnd && m_slices.start[i] < m_graph.endNs;
             ++i) {
            if (!isGpuWork(m_slices.kind[i])) continue;
            const SliceId launch = m_trace.launchOf(SliceId(i));
            int32_t pn;
            if (launch.valid()) {
                pn = pathNode(static_cast<uint32_t>(launch.index()), true);
            } else {
                if (noLaunch < 0) noLaunch = child(0, StringId(), EventKind::Other);
                pn = noLaunch;
            }
            FlameNode& leaf = node(child(pn, m_slices.name[i], m_slices.kind[i]));
            ++leaf.count;
            leaf.selfNs += m_slices.dur[i]; // direct time; totals summed up in finish()
        }
    }
    // Parents have smaller indices than their children: one backward pass sums the totals.
    auto& nodes = m_graph.nodes;
    for (size_t n = 0; n < nodes.size(); ++n) nodes[n].totalNs = nodes[n].selfNs;
    for (size_t n = nodes.size(); n-- > 1;)
        nodes[static_cast<size_t>(nodes[n].parent)].totalNs += nodes[n].totalNs;
}

FlameGraph FlameBuilder::finish() {
    auto& nodes = m_graph.nodes;
    for (size_t n = 1; n < nodes.size(); ++n) {
        nodes[static_cast<size_t>(nodes[n].parent)].children.push_back(static_cast<int32_t>(n));
        m_graph.maxDepth = std::max(m_graph.maxDepth, nodes[n].depth);
    }
    for (FlameNode& nd : nodes) {
        int64_t childTotal = 0;
        for (int32_t c : nd.children) childTotal += nodes[static_cast<size_t>(c)].totalNs;
        nd.selfNs = std::max<int64_t>(0, nd.totalNs - childTotal);
        std::sort(nd.children.begin(), nd.children.end(), [&](int32_t a, int32_t b) {
            const FlameNode& x = nodes[static_cast<size_t>(a)];
            const FlameNode& y = nodes[static_cast<size_t>(b)];
            if (x.totalNs != y.totalNs) return x.totalNs > y.totalNs;
            const std::string_view nx = m_trace.str(x.name), ny = m_trace.str(y.name);
            return nx != ny ? nx < ny : a < b;
        });
    }
    m_graph.totalNs = nodes[0].totalNs;
    return std::move(m_graph);
}

} // namespace

FlameGraph buildFlameGraph(const Trace& trace, FlameMode mode, int64_t startNs, int64_t endNs,
                           int32_t device) {
    FlameBuilder b(trace, mode, startNs, endNs, device);
    if (startNs < endNs) {
        if (mode == FlameMode::CpuTime)
            b.addCpuTime();
        else
            b.addGpuTime();
    }
    return b.finish();
}

std::string_view flameNodeName(const Trace& trace, const FlameGraph& graph, int32_t node) {
    if (node <= 0) return "all";
    const FlameNode& n = graph.nodes[static_cast<size_t>(node)];
    if (n.steps) return "ProfilerStep#*";
    return n.name.valid() ? trace.str(n.name) : std::string_view("(no launch call)");
}

int32_t firstBranchingNode(const FlameGraph& graph, double share) {
    int32_t node = 0;
    while (node >= 0 && static_cast<size_t>(node) < graph.nodes.size()) {
        const FlameNode& n = graph.nodes[static_cast<size_t>(node)];
        if (n.children.empty() || n.totalNs <= 0) break;
        const FlameNode& top = graph.nodes[static_cast<size_t>(n.children.front())]; // the largest
        if (double(top.totalNs) < share * double(n.totalNs)) break;
        node = n.children.front();
    }
    return node;
}

bool isGpuLeaf(const FlameGraph& graph, int32_t node) {
    return node > 0 && isGpuWork(graph.nodes[static_cast<size_t>(node)].kind) &&
           graph.nodes[static_cast<size_t>(node)].children.empty();
}

} // namespace stallscope::analysis
