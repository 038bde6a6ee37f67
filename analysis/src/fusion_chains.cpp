#include "fusion_chains.h"

#include "stallscope/analysis/kernel_catalogue.h"

#include <map>

namespace stallscope::analysis::detail {

using namespace model;

bool fusableKernel(const Context& c, uint32_t slice) {
    const SliceTable& s = c.trace.slices();
    if (s.kind[slice] != EventKind::Kernel) return false;
    const std::string_view name = c.name(slice);
    if (name.rfind("triton_", 0) == 0) return false;
    const KernelFamily f = classifyKernel(name).family;
    return f == KernelFamily::Elementwise || f == KernelFamily::Reduction ||
           f == KernelFamily::Norm;
}

namespace {
/// The outermost CPU operator around a GPU slice's launch ("" when none).
std::string_view launchingOperator(const Context& c, uint32_t slice) {
    const SliceTable& s = c.trace.slices();
    std::string_view name;
    for (SliceId p = c.trace.launchOf(SliceId(slice)); p.valid(); p = s.parent[p.index()])
        if (s.kind[p.index()] == EventKind::CpuOp && !c.is(p.index(), kNcProfilerStep))
            name = c.name(p.index());
    return name;
}
/// Whether a GPU slice was launched inside the optimizer (an ancestor of its launch call).
bool launchedByOptimizer(const Context& c, uint32_t slice) {
    const SliceTable& s = c.trace.slices();
    for (SliceId p = c.trace.launchOf(SliceId(slice)); p.valid(); p = s.parent[p.index()])
        if (c.is(p.index(), kNcOptimizer)) return true;
    return false;
}
} // namespace

FusionChains fusionChains(const Context& c, const DeviceActivity& dev, int64_t lo, int64_t hi) {
    const SliceTable& s = c.trace.slices();
    FusionChains out;
    std::map<uint32_t, std::vector<uint32_t>> runOf; // stream track -> the open run
    std::map<uint32_t, bool> optimizerRun;           // stream track -> its run is the optimizer's
    auto close = [&](std::vector<uint32_t>& run) {
        if (run.size() >= kFusionMinChain) {
            FusionChain ch;
            ch.kernels = run;
            ch.longest = run.front();
            for (uint32_t k : run) {
                ch.ns += s.dur[k];
                if (s.dur[k] > s.dur[ch.longest]) ch.longest = k;
                const std::string_view op = launchingOperator(c, k);
                ch.signature +=
                    (ch.signature.empty() ? "" : " > ") + std::string(op.empty() ? "?" : op);
            }
            ch.optimizer = launchedByOptimizer(c, run.front());
            if (!ch.optimizer)
                for (uint32_t k : run)
                    if (k != ch.longest) out.fusedAway.insert(k);
            out.chains.push_back(std::move(ch));
        }
        run.clear();
    };
    for (uint32_t w : dev.work) {
        std::vector<uint32_t>& run = runOf[s.track[w].index()];
        const bool inside = s.start[w] >= lo && s.start[w] < hi;
        if (!inside || !fusableKernel(c, w)) {
            close(run);
            continue;
        }
        // A run is the model's or the optimizer's, never both.
        const bool optimizer = launchedByOptimizer(c, w);
        bool& runOptimizer = optimizerRun[s.track[w].index()];
        if (!run.empty() && runOptimizer != optimizer) close(run);
        runOptimizer = optimizer;
        run.push_back(w);
    }
    for (auto& [track, run] : runOf) close(run);
    std::sort(out.chains.begin(), out.chains.end(),
              [&](const FusionChain& a, const FusionChain& b) {
                  return s.start[a.kernels.front()] < s.start[b.kernels.front()];
              });
    return out;
}

} // namespace stallscope::analysis::detail
