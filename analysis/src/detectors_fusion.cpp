// fusion_candidates: a busy GPU that spends its time on chains of small memory-bound kernels
// (elementwise, reductions, normalisation) run back to back, each reading its input from
// memory and writing its output back: what torch.compile fuses into one kernel per chain.
// Evidence: the chains (fusion_chains.h), the most frequent one by its launching operators;
// saving: the replay with every chain costing its longest kernel.
#include "detector_registry.h"
#include "detectors.h"
#include "fusion_chains.h"

#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

struct Signature {
    size_t count = 0;
    int64_t ns = 0;
    const FusionChain* first = nullptr;
};

std::vector<std::string> operatorsOf(const std::string& signature) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= signature.size()) {
        const size_t end = signature.find(" > ", at);
        const std::string op =
            signature.substr(at, end == std::string::npos ? std::string::npos : end - at);
        if (std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
        if (end == std::string::npos) break;
        at = end + 3;
    }
    return out;
}

} // namespace

void detectFusionCandidates(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->busyNs <= 0) continue;
        const FusionChains fc = fusionChains(c, dev, c.window.startNs, c.window.endNs);
        int64_t ns = 0, fusedAwayNs = 0, optimizerNs = 0;
        size_t kernels = 0, chains = 0, optimizerChains = 0;
        std::map<std::string, Signature> bySignature;
        for (const FusionChain& ch : fc.chains) {
            if (ch.optimizer) { // a fused optimizer's work, not the model's
                ++optimizerChains;
                optimizerNs += ch.ns;
                continue;
            }
            ++chains;
            ns += ch.ns;
            fusedAwayNs += ch.ns - s.dur[ch.longest];
            kernels += ch.kernels.size();
            Signature& sig = bySignature[ch.signature];
            ++sig.count;
            sig.ns += ch.ns;
            if (!sig.first) sig.first = &ch;
        }
        if (double(ns) < c.options.thresholds.fusionMinShare * double(d->busyNs)) continue;
        const auto top = std::max_element(
            bySignature.begin(), bySignature.end(), [](const auto& a, const auto& b) {
                return a.second.ns != b.second.ns ? a.second.ns < b.second.ns : a.first > b.first;
            });
        if (top == bySignature.end() || top->second.count < 2) continue; // not a pattern
        Finding f = makeFinding(c, FindingKind::FusionCandidates, dev.device, fusedAwayNs);
        f.replayFix = Fix::FuseKernels;
        for (const FusionChain& ch : fc.chains) {
            if (ch.optimizer) continue;
            f.ranges.push_back({s.start[ch.kernels.front()], s.end(ch.kernels.back())});
            if (ch.signature == top->first)
                for (size_t i = 0; i < ch.kernels.size() && f.evidence.size() < 30; ++i)
                    f.evidence.push_back(SliceId(ch.kernels[i]));
        }
        f.ranges = longestRanges(mergeIntervals(std::move(f.ranges)), 12);
        const ClaimParams p = ClaimParams().device(dev.device);
        const auto stat = [&](const char* st) { return ClaimParams(p).str("stat", st); };
        const ClaimParams sig = ClaimParams(p).str("signature", top->first);
        std::string ops;
        const std::vector<std::string> names = operatorsOf(top->first);
        for (size_t i = 0; i < names.size() && i < 4; ++i)
            ops +=
                (i ? ", " : "") +
                (names[i] == "?"
                     ? std::string("kernels no operator launched")
                     : saidName(f, names[i], "fusion_chains",
                                ClaimParams(p).str("stat", "operator").str("name", names[i]), 1));
        if (names.size() > 4) ops += " and others";
        f.title = "Chains of small memory-bound kernels run one after another";
        f.explanation =
            said(f, std::to_string(chains), "fusion_chains", stat("chains"), double(chains)) +
            " chains of " + saidConstant(f, "3", "the shortest chain counted") +
            " or more elementwise, reduction and normalisation kernels ran back to back on one "
            "stream: " +
            said(f, std::to_string(kernels), "fusion_chains", stat("kernels"), double(kernels)) +
            " kernels for " + saidNs(f, ns, "fusion_chains", stat("ns")) + " (" +
            saidShare(f, double(ns) / double(d->busyNs), "fusion_chains", stat("ns"), "busy_ns",
                      p) +
            " of GPU busy time). The costliest pattern, launched by " + ops + ", ran " +
            said(f, std::to_string(top->second.count), "fusion_chains",
                 ClaimParams(sig).str("stat", "signature_count"), double(top->second.count)) +
            " times for " +
            saidNs(f, top->second.ns, "fusion_chains",
                   ClaimParams(sig).str("stat", "signature_ns")) +
            ". Each of these kernels reads its input from GPU memory and writes its result back; "
            "fused, the "
            "intermediate results stay on the chip. The estimate takes a fused chain to cost as "
            "long as its "
            "longest kernel.";
        if (optimizerChains > 0)
            f.explanation +=
                " Left out: " +
                said(f, std::to_string(optimizerChains), "fusion_chains", stat("optimizer_chains"),
                     double(optimizerChains)) +
                " chains launched inside the optimizer (" +
                saidNs(f, optimizerNs, "fusion_chains", stat("optimizer_ns")) +
                "), whose fix is a fused or foreach optimizer, not compiling the model.";
        const bool compiled = c.anyNamed(kNcCompiledRegion);
        f.fix = compiled
                    ? "These chains run outside the compiled regions: compile the code that "
                      "launches them "
                      "too (torch.compile on the whole model, without graph breaks around them)."
                    : "Compile the model with torch.compile: Inductor fuses chains of pointwise, "
                      "reduction "
                      "and normalisation operators into one kernel each.";
        f.snippet = compiled ? "model = torch.compile(model)   # the whole model, not a part\n"
                               "torch._dynamo.explain(model)(x)  # where the graph breaks are"
                             : "model = torch.compile(model)";
        f.confidence = 0.6;
        out.push_back(std::move(f));
    }
}

extern const Detector kDetectorFusionCandidates;
const Detector kDetectorFusionCandidates{
    {FindingKind::FusionCandidates, "fusion_candidates", DetectorStage::Cause,
     "chains of >= 3 elementwise/reduction/norm kernels back to back on a stream, >= 5 % of busy "
     "time, "
     "the most frequent one at least twice",
     "the replay with each chain as long as its longest kernel", "fusionMinShare"},
    detectFusionCandidates};

} // namespace stallscope::analysis::detail
