#include "stallscope/analysis/module_tree.h"

#include "stats_tables.h"

#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;

namespace {
constexpr std::string_view kPrefix = "nn.Module: ";
} // namespace

ModuleTree buildModuleTree(const Trace& t, const AnalysisResult& r) {
    ModuleTree tree;
    const SliceTable& s = t.slices();
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    std::vector<uint8_t> isModuleName(t.strings().size(), 0); // 0 unknown, 1 no, 2 yes
    auto isModule = [&](uint32_t i) {
        if (s.kind[i] != EventKind::PythonFunction) return false;
        uint8_t& k = isModuleName[s.name[i].index()];
        if (k == 0) k = t.str(s.name[i]).rfind(kPrefix, 0) == 0 ? 2 : 1;
        return k == 2;
    };
    auto moduleAbove = [&](uint32_t i) -> SliceId { // nearest module range around slice i
        for (SliceId p = s.parent[i]; p.valid(); p = s.parent[p.index()])
            if (isModule(p.index())) return p;
        return {};
    };
    std::unordered_map<uint32_t, int32_t> nodeOf;           // module slice -> node
    std::map<std::pair<int32_t, uint32_t>, int32_t> byPath; // (parent node, name) -> node
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo);
             i < tr.sliceEnd && s.start[i] < hi; ++i) {
            if (!detail::startsInWindow(s, i, lo, hi)) continue;
            const bool module = isModule(i);
            if (!module && s.kind[i] != EventKind::CpuOp) continue;
            if (!module && !tree.backward) tree.backward = names::isBackward(t.str(s.name[i]));
            const SliceId above = moduleAbove(i);
            const auto parentNode = above.valid() ? nodeOf.find(above.index()) : nodeOf.end();
            const int32_t parent = parentNode == nodeOf.end() ? -1 : parentNode->second;
            if (!module) {
                if (parent >= 0) ++tree.nodes[size_t(parent)].operators;
                continue;
            }
            auto [it, fresh] =
                byPath.try_emplace({parent, s.name[i].value}, int32_t(tree.nodes.size()));
            if (fresh) {
                ModuleNode n;
                n.name = std::string(t.str(s.name[i]).substr(kPrefix.size()));
                n.parent = parent;
                n.depth = parent < 0 ? 0 : tree.nodes[size_t(parent)].depth + 1;
                n.example = SliceId(i);
                tree.nodes.push_back(std::move(n));
                if (parent >= 0)
                    tree.nodes[size_t(parent)].children.push_back(it->second);
                else
                    tree.roots.push_back(it->second);
            }
            ModuleNode& n = tree.nodes[size_t(it->second)];
            ++n.occurrences;
            n.hostTotalNs = satAdd(n.hostTotalNs, s.dur[i]);
            n.hostSelfNs = satAdd(n.hostSelfNs, s.dur[i]);
            if (parent >= 0 && parentNode != nodeOf.end())
                tree.nodes[size_t(parent)].hostSelfNs =
                    satSub(tree.nodes[size_t(parent)].hostSelfNs,
                           std::min(s.dur[i], s.dur[above.index()]));
            nodeOf[i] = it->second;
        }
    }
    if (tree.nodes.empty()) return tree;

    // Device time along each launch call's stack.
    std::set<int32_t> devices;
    for (const DeviceMetrics& d : r.devices) devices.insert(d.device);
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream || !devices.count(t.process(tr.process).gpuDevice))
            continue;
        for (uint32_t w = tr.sliceBegin; w < tr.sliceEnd; ++w) {
            if (!isGpuWork(s.kind[w]) || !detail::startsInWindow(s, w, lo, hi)) continue;
            const SliceId launch = t.launchOf(SliceId(w));
            tree.deviceNs = satAdd(tree.deviceNs, s.dur[w]);
            bool innermost = true;
            for (SliceId p = launch.valid() ? s.parent[launch.index()] : SliceId(); p.valid();
                 p = s.parent[p.index()]) {
                const auto n = nodeOf.find(p.index());
                if (n == nodeOf.end()) continue;
                ModuleNode& m = tree.nodes[size_t(n->second)];
                m.deviceTotalNs = satAdd(m.deviceTotalNs, s.dur[w]);
                if (innermost) m.deviceSelfNs = satAdd(m.deviceSelfNs, s.dur[w]);
                innermost = false;
            }
            if (innermost) tree.outsideNs = satAdd(tree.outsideNs, s.dur[w]);
        }
    }
    auto byHostTotal = [&](int32_t a, int32_t b) {
        const ModuleNode &x = tree.nodes[size_t(a)], &y = tree.nodes[size_t(b)];
        return x.hostTotalNs != y.hostTotalNs ? x.hostTotalNs > y.hostTotalNs : x.name < y.name;
    };
    for (ModuleNode& n : tree.nodes) {
        n.hostSelfNs = std::max<int64_t>(0, n.hostSelfNs);
        std::sort(n.children.begin(), n.children.end(), byHostTotal);
    }
    std::sort(tree.roots.begin(), tree.roots.end(), byHostTotal);
    return tree;
}

} // namespace stallscope::analysis
