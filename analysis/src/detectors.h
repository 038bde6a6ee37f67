#pragma once
// Detectors turn metrics and idle causes into findings (../shared/spec/analysis.md table; the exact
// rules are in docs/analysis.md). Each appends zero or more findings.
#include "analysis_context.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/analysis/kernel_catalogue.h"

#include <map>

#include <functional>
#include <string>
#include <vector>

namespace stallscope::analysis::detail {

struct DetectorInput {
    const Context& c;
    const AnalysisResult& result;  // devices (metrics + idle), stats
};

using Findings = std::vector<Finding>;

// Host-side causes.
void detectDataLoading(const DetectorInput& in, Findings& out);
void detectBlockingH2dCopy(const DetectorInput& in, Findings& out);
void detectHostSync(const DetectorInput& in, Findings& out);
void detectLoggingCheckpoint(const DetectorInput& in, Findings& out);
void detectGpuNotUsed(const DetectorInput& in, Findings& out);
// GPU-side causes.
void detectCpuDispatch(const DetectorInput& in, Findings& out);
void detectNoTensorCores(const DetectorInput& in, Findings& out);
void detectCommExposed(const DetectorInput& in, Findings& out);
void detectMemoryPressure(const DetectorInput& in, Findings& out);
// Context: what kind of trace this is (runs first).
void detectGraphCapture(const DetectorInput& in, Findings& out);
void detectCompilation(const DetectorInput& in, Findings& out);
void detectGraphBreaks(const DetectorInput& in, Findings& out);
// Runs after the others: utilisation low and not explained by them.
void detectLowUtilization(const DetectorInput& in, Findings& out);
// One-off work and the allocator (detectors_oneoff.cpp).
void detectWarmup(const DetectorInput& in, Findings& out);
void detectAllocatorChurn(const DetectorInput& in, Findings& out);
void detectGpuNotRecorded(const DetectorInput& in, Findings& out);

// ---- helpers shared by the detectors

/// A claim's parameters (docs/claims.md), built as a JSON object:
/// ClaimParams().num("device", 0).names({"hipFree"}).str("stat", "count").
class ClaimParams {
public:
    ClaimParams& num(std::string_view key, int64_t v);
    ClaimParams& real(std::string_view key, double v);
    ClaimParams& str(std::string_view key, std::string_view v);
    ClaimParams& strs(std::string_view key, const std::vector<std::string>& v);
    ClaimParams& obj(std::string_view key, const ClaimParams& v);
    ClaimParams& names(const std::vector<std::string>& v) { return strs("names", v); }
    ClaimParams& device(int32_t d) { return num("device", d); }
    ClaimParams& causes(const std::vector<IdleCause>& v);
    /// {"name": ..., "start_ns": ...} of a slice.
    ClaimParams& slice(std::string_view key, const Context& c, model::SliceId s);
    /// {"measure": ..., "params": {...}}: an operand of a ratio.
    static ClaimParams measure(std::string_view m, const ClaimParams& p);
    [[nodiscard]] std::string json() const;

private:
    std::vector<std::pair<std::string, std::string>> m_fields; // key, raw JSON value
};

/// Records on `f` that `shown` (as it appears in its text) states `value` of `measure`, and
/// returns `shown` for the text.
std::string said(Finding& f, std::string shown, std::string_view measure, const ClaimParams& p,
                 double value);
/// A share said as a percentage (fmtPct): a ratio of two measures.
std::string saidShare(Finding& f, double share, std::string_view numMeasure, const ClaimParams& num,
                      std::string_view denMeasure, const ClaimParams& den);
/// A duration (fmtDuration) of `measure`.
std::string saidNs(Finding& f, int64_t ns, std::string_view measure, const ClaimParams& p);
/// A back-quoted name, claimed by `measure` (its count or relation).
std::string saidName(Finding& f, std::string_view name, std::string_view measure,
                     const ClaimParams& p, double value);
/// A number of the text that is not about the trace (docs/claims.md's constants).
std::string saidConstant(Finding& f, std::string shown, std::string_view why);

/// Kernels of a device inside [lo, hi), with their launch call.
struct KernelView {
    uint32_t slice;
    model::SliceId launch;
};
std::vector<KernelView> kernelsIn(const Context& c, const DeviceActivity& d, int64_t lo,
                                  int64_t hi);

/// The precision of a kernel from its operator's input types (record_shapes): the launch
/// call of the kernel, the innermost operator around it, its "Input type" argument. Cached
/// per operator name; at most `budget` argument reads (each a read of the source).
Precision kernelOperatorPrecision(const Context& c, uint32_t kernel,
                                  std::map<uint32_t, Precision>& cache, size_t& budget);
/// The innermost operator around a kernel's launch call, or invalid.
model::SliceId kernelOperator(const Context& c, uint32_t kernel);

/// What a cause-based detector reads: each device's idle breakdown, or, in a CPU-only
/// trace, the step thread's time (AnalysisResult::hostOnly, device -1).
struct CauseSubject {
    int32_t device;
    const IdleBreakdown& idle;
    const std::vector<StepMetrics>& steps;
    bool hostOnly;
};
std::vector<CauseSubject> causeSubjects(const AnalysisResult& r);

/// A finding with id, kind, device, saving (capped to the window), share and severity set.
Finding makeFinding(const Context& c, FindingKind kind, int32_t device, int64_t savingNs);
/// Re-derives severity from the share (after a saving changed).
void setSaving(const Context& c, Finding& f, int64_t savingNs);
/// The `n` longest intervals, returned in time order.
std::vector<Interval> longestRanges(const Intervals& iv, size_t n);
/// Top `n` names by time from a waited-for table, with their share of `total`.
std::vector<std::pair<std::string, int64_t>> topWaitedFor(const Context& c,
                                                          const std::map<model::StringId, int64_t>& m,
                                                          size_t n);
/// "`aten::stack` 41%, `aten::copy_` 22%": each name and its share of `total` (the idle
/// charged to `causes` on `device`), claimed as waited_ns / idle_ns.
std::string describeWaitedFor(Finding& f, const std::vector<std::pair<std::string, int64_t>>& top,
                              int32_t device, const std::vector<IdleCause>& causes, int64_t total);
/// CPU-side slices in the window matching `pred`, longest first, at most `n`.
std::vector<model::SliceId> findSlices(const Context& c, const std::function<bool(uint32_t)>& pred, size_t n);
/// "12.3 ms" / "410 us".
std::string fmtDuration(int64_t ns);
/// What the window's shares are of: "step time" when it is made of steps, else "the window".
std::string shareBase(const Context& c);
/// Whether the trace shows a backward pass (autograd events): training, not inference.
bool hasBackward(const Context& c);
/// The thread that launches the GPU work, in words: "the training thread" with a backward
/// pass, "the thread that launches the GPU work" without one.
std::string launchingThread(const Context& c);
/// The launch calls of the whole trace (kernel and graph launches, async copies and memsets):
/// their count, and the most frequent names with their counts.
struct LaunchCallCount {
    size_t total = 0;
    std::vector<std::pair<std::string, size_t>> byName; // most first
};
LaunchCallCount launchCalls(const Context& c);
/// The optimizer class the trace names ("SGD" from "Optimizer.step#SGD.step"), or empty.
std::string optimizerClass(const Context& c);
/// A matrix-multiply kernel that is FP32 work a lower precision would move to Tensor/Matrix
/// Cores, by evidence: a vendor library's kernel whose name says fp32, or a library kernel
/// (or any kernel of an aten:: operator) whose operator's input types say float.
/// `sawTypes` is set when the operator read carried input types at all.
bool fp32MatmulEvidence(const Context& c, uint32_t kernel, std::map<uint32_t, Precision>& cache,
                        size_t& budget, bool* typed = nullptr, bool* sawTypes = nullptr);
/// "38%".
std::string fmtPct(double share);
const DeviceMetrics* deviceMetrics(const AnalysisResult& r, int32_t device);

} // namespace stallscope::analysis::detail
