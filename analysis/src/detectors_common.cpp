#include "detectors.h"

#include "stallscope/base/json_writer.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace stallscope::analysis::detail {

using namespace model;

std::vector<CauseSubject> causeSubjects(const AnalysisResult& r) {
    std::vector<CauseSubject> v;
    for (const DeviceMetrics& d : r.devices) v.push_back({d.device, d.idle, d.steps, false});
    if (r.hostOnly) v.push_back({-1, r.hostOnly->time, r.hostOnly->steps, true});
    return v;
}

std::vector<KernelView> kernelsIn(const Context& c, const DeviceActivity& d, int64_t lo,
                                  int64_t hi) {
    const SliceTable& s = c.trace.slices();
    std::vector<KernelView> out;
    auto it = std::lower_bound(d.work.begin(), d.work.end(), lo,
                               [&s](uint32_t w, int64_t v) { return s.start[w] < v; });
    for (; it != d.work.end() && s.start[*it] < hi; ++it)
        if (s.kind[*it] == EventKind::Kernel)
            out.push_back({*it, d.launch[static_cast<size_t>(it - d.work.begin())]});
    return out;
}

SliceId kernelOperator(const Context& c, uint32_t kernel) {
    const SliceId launch = c.launchOf(kernel);
    return launch.valid() ? c.trace.enclosingOp(launch) : SliceId();
}

Precision kernelOperatorPrecision(const Context& c, uint32_t kernel,
                                  std::map<uint32_t, Precision>& cache, size_t& budget) {
    const SliceId op = kernelOperator(c, kernel);
    if (!op.valid()) return Precision::Unknown;
    const uint32_t name = c.trace.slices().name[op.index()].value;
    if (const auto it = cache.find(name); it != cache.end()) return it->second;
    if (budget == 0) return Precision::Unknown;
    --budget;
    Precision p = Precision::Unknown;
    std::vector<model::ArgValue> args;
    std::string error;
    if (c.trace.sliceArgs(op, args, error))
        for (const auto& a : args)
            if (a.key == "Input type") p = precisionFromInputTypes(a.json);
    cache.emplace(name, p);
    return p;
}

Finding makeFinding(const Context& c, FindingKind kind, int32_t device, int64_t savingNs) {
    Finding f;
    f.kind = kind;
    f.device = device;
    f.id = std::string(findingKindName(kind)) + (device >= 0 ? "/gpu" + std::to_string(device) : "");
    setSaving(c, f, savingNs);
    return f;
}

void setSaving(const Context& c, Finding& f, int64_t savingNs) {
    const int64_t w = std::max<int64_t>(1, c.window.length());
    f.savingNs = std::clamp<int64_t>(savingNs, 0, w);
    f.savingShare = double(f.savingNs) / double(w);
    const Thresholds& t = c.options.thresholds;
    f.severity = f.savingShare >= t.severityHigh     ? FindingSeverity::High
                 : f.savingShare >= t.severityMedium ? FindingSeverity::Medium
                 : f.savingShare >= t.severityNote   ? FindingSeverity::Low
                                                     : FindingSeverity::Note;
}

std::vector<Interval> longestRanges(const Intervals& iv, size_t n) {
    std::vector<Interval> v(iv.begin(), iv.end());
    if (v.size() > n) {
        std::nth_element(v.begin(), v.begin() + static_cast<long>(n), v.end(),
                         [](const Interval& a, const Interval& b) { return a.length() > b.length(); });
        v.resize(n);
    }
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    return v;
}

std::vector<std::pair<std::string, int64_t>> topWaitedFor(const Context& c, const std::map<StringId, int64_t>& m,
                                                          size_t n) {
    std::vector<std::pair<std::string, int64_t>> v;
    for (const auto& [id, ns] : m) v.emplace_back(std::string(c.trace.str(id)), ns);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (v.size() > n) v.resize(n);
    return v;
}

namespace {
std::string jsonString(std::string_view v) {
    base::JsonWriter w(false);
    w.value(v);
    return w.str();
}
} // namespace

ClaimParams& ClaimParams::num(std::string_view key, int64_t v) {
    m_fields.emplace_back(std::string(key), std::to_string(v));
    return *this;
}
ClaimParams& ClaimParams::real(std::string_view key, double v) {
    base::JsonWriter w(false);
    w.value(v, 6);
    m_fields.emplace_back(std::string(key), w.str());
    return *this;
}
ClaimParams& ClaimParams::str(std::string_view key, std::string_view v) {
    m_fields.emplace_back(std::string(key), jsonString(v));
    return *this;
}
ClaimParams& ClaimParams::strs(std::string_view key, const std::vector<std::string>& v) {
    std::string a = "[";
    for (size_t i = 0; i < v.size(); ++i) a += (i ? ", " : "") + jsonString(v[i]);
    m_fields.emplace_back(std::string(key), a + "]");
    return *this;
}
ClaimParams& ClaimParams::obj(std::string_view key, const ClaimParams& v) {
    m_fields.emplace_back(std::string(key), v.json());
    return *this;
}
ClaimParams& ClaimParams::causes(const std::vector<IdleCause>& v) {
    std::vector<std::string> names;
    for (IdleCause k : v) names.emplace_back(idleCauseName(k));
    return strs("causes", names);
}
ClaimParams& ClaimParams::slice(std::string_view key, const Context& c, SliceId id) {
    return obj(key, ClaimParams()
                        .str("name", c.trace.str(c.trace.slices().name[id.index()]))
                        .num("start_ns", c.trace.slices().start[id.index()]));
}
ClaimParams ClaimParams::measure(std::string_view m, const ClaimParams& p) {
    return ClaimParams().str("measure", m).obj("params", p);
}
std::string ClaimParams::json() const {
    std::string out = "{";
    for (size_t i = 0; i < m_fields.size(); ++i)
        out += (i ? ", " : "") + jsonString(m_fields[i].first) + ": " + m_fields[i].second;
    return out + "}";
}

std::string said(Finding& f, std::string shown, std::string_view measure, const ClaimParams& p,
                 double value) {
    f.claims.push_back({shown, std::string(measure), p.json(), value});
    return shown;
}

std::string saidShare(Finding& f, double share, std::string_view numMeasure, const ClaimParams& num,
                      std::string_view denMeasure, const ClaimParams& den) {
    return said(f, fmtPct(share), "ratio",
                ClaimParams()
                    .obj("num", ClaimParams::measure(numMeasure, num))
                    .obj("den", ClaimParams::measure(denMeasure, den)),
                share);
}

std::string saidNs(Finding& f, int64_t ns, std::string_view measure, const ClaimParams& p) {
    return said(f, fmtDuration(ns), measure, p, double(ns));
}

std::string saidName(Finding& f, std::string_view name, std::string_view measure,
                     const ClaimParams& p, double value) {
    std::string shown =
        name.size() > 80 ? std::string(name.substr(0, 77)) + "..." : std::string(name);
    return said(f, "`" + shown + "`", measure, p, value);
}

std::string saidConstant(Finding& f, std::string shown, std::string_view why) {
    return said(f, std::move(shown), "constant", ClaimParams().str("why", why), 0);
}

std::string describeWaitedFor(Finding& f, const std::vector<std::pair<std::string, int64_t>>& top,
                              int32_t device, const std::vector<IdleCause>& causes, int64_t total) {
    std::string out;
    const ClaimParams idle = ClaimParams().device(device).causes(causes);
    for (const auto& [name, ns] : top) {
        if (!out.empty()) out += ", ";
        const ClaimParams p = ClaimParams().device(device).causes(causes).str("name", name);
        out += saidName(f, name, "waited_ns", p, double(ns)) + " " +
               saidShare(f, total > 0 ? double(ns) / double(total) : 0, "waited_ns", p, "idle_ns",
                         idle);
    }
    return out;
}

std::vector<SliceId> findSlices(const Context& c, const std::function<bool(uint32_t)>& pred, size_t n) {
    const SliceTable& s = c.trace.slices();
    std::vector<SliceId> out;
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        for (uint32_t i = c.trace.firstSliceEndingAtOrAfter(TrackId(ti), c.window.startNs);
             i < tr.sliceEnd && s.start[i] < c.window.endNs; ++i)
            if (s.start[i] >= c.window.startNs && pred(i)) out.push_back(SliceId(i));
    }
    std::sort(out.begin(), out.end(), [&s](SliceId a, SliceId b) { return s.dur[a.index()] > s.dur[b.index()]; });
    if (out.size() > n) out.resize(n);
    return out;
}

namespace {
/// Precision::Count marks an operator that carries no input types at all.
constexpr Precision kNoTypes = Precision::Count;

/// The operator's input types (cached per operator name): its first floating type, Unknown
/// when its types hold none, kNoTypes without types; nullopt when the read budget is spent.
std::optional<Precision> operatorTypes(const Context& c, SliceId op,
                                       std::map<uint32_t, Precision>& cache, size_t& budget) {
    const uint32_t name = c.trace.slices().name[op.index()].value;
    if (const auto it = cache.find(name); it != cache.end()) return it->second;
    if (budget == 0) return std::nullopt;
    --budget;
    Precision p = kNoTypes;
    std::vector<model::ArgValue> args;
    std::string error;
    if (c.trace.sliceArgs(op, args, error))
        for (const auto& a : args)
            if (a.key == "Input type") p = precisionFromInputTypes(a.json);
    cache.emplace(name, p);
    return p;
}
} // namespace

bool fp32MatmulEvidence(const Context& c, uint32_t kernel, std::map<uint32_t, Precision>& cache,
                        size_t& budget, bool* typed, bool* sawTypes) {
    if (typed) *typed = false;
    if (!c.is(kernel, kNcGemm) || c.is(kernel, kNcTensorCore)) return false;
    const bool library = c.is(kernel, kNcLibraryKernel);
    const SliceId op = kernelOperator(c, kernel);
    const std::optional<Precision> p =
        op.valid() ? operatorTypes(c, op, cache, budget) : std::optional<Precision>();
    // The operator's types decide when it has them: float on a library kernel, or on a
    // kernel an aten operator launched (the library behind it picks a Tensor-Core kernel in a
    // lower type); a kernel of one's own operator is not changed by a lower precision.
    if (p && *p != kNoTypes) {
        if (sawTypes) *sawTypes = true;
        if (typed) *typed = true;
        return *p == Precision::FP32 && (library || c.name(op.index()).starts_with("aten::"));
    }
    // Names only: a library kernel whose name says fp32.
    return library && c.is(kernel, kNcFp32Matmul);
}

std::string shareBase(const Context& c) {
    for (const Step& st : c.steps)
        if (st.startNs >= c.window.startNs && st.startNs < c.window.endNs &&
            (c.window.kind == WindowKind::Steps || c.window.kind == WindowKind::Step))
            return "step time";
    return "the window";
}

bool hasBackward(const Context& c) {
    return c.anyNamed(kNcBackward);
}

std::string launchingThread(const Context& c) {
    return hasBackward(c) ? "the training thread" : "the thread that launches the GPU work";
}

LaunchCallCount launchCalls(const Context& c) {
    const SliceTable& s = c.trace.slices();
    std::map<StringId, size_t> by;
    LaunchCallCount n;
    for (uint32_t i = 0; i < s.size(); ++i)
        if (isLaunchSide(s.kind[i]) && c.is(i, kNcLaunch)) ++by[s.name[i]], ++n.total;
    for (const auto& [id, k] : by) n.byName.emplace_back(std::string(c.trace.str(id)), k);
    std::stable_sort(n.byName.begin(), n.byName.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return n;
}

std::string optimizerClass(const Context& c) {
    // The class whose step runs: "Optimizer.step#SGD.step" (zero_grad's class may differ from
    // the stepping one, e.g. a FusedAdam stepping after an Adagrad's zero_grad).
    for (uint32_t ti = 0; ti < c.trace.tracks().size(); ++ti) {
        const TrackInfo& tr = c.trace.tracks()[ti];
        if (tr.kind == TrackKind::GpuStream) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!c.is(i, kNcOptimizer)) continue;
            const std::string_view n = c.name(i);
            constexpr std::string_view kStep = "Optimizer.step#";
            if (!n.starts_with(kStep)) continue;
            const size_t dot = n.find('.', kStep.size());
            if (dot != std::string_view::npos && dot > kStep.size())
                return std::string(n.substr(kStep.size(), dot - kStep.size()));
        }
    }
    return {};
}

std::string fmtDuration(int64_t ns) {
    return base::formatDuration(ns, base::kDurationCompact);
}

std::string fmtPct(double share) {
    // Whole percent, but a share under 1 % keeps one decimal ("0.4%", not "0%").
    return base::formatPercent(share, share > 0 && share < 0.01 ? 1 : 0);
}

const DeviceMetrics* deviceMetrics(const AnalysisResult& r, int32_t device) {
    for (const auto& d : r.devices)
        if (d.device == device) return &d;
    return nullptr;
}

} // namespace stallscope::analysis::detail
