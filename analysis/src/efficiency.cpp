// Efficiency (docs/analysis.md "Efficiency"): the window's operators of the cost table read
// with their recorded inputs, grouped, costed; each outermost call's FLOPs and bytes carried
// to the kernels it launched in proportion to their time; per GPU the families' achieved
// rates, the tensor math's data type and MFU against the GPU's peak for that type.
#include "stallscope/analysis/efficiency.h"

#include "arg_values.h"
#include "args_reader.h"
#include "stats_tables.h"

#include "stallscope/analysis/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;
using Dims = std::vector<int64_t>;

namespace {

constexpr char kSep = '\x1f'; // never in compact JSON text (control characters are escaped)

struct Call {
    uint32_t slice = 0;
    uint32_t row = 0;
    bool outermost = false;
    int32_t device = -1;   // -1 no kernels yet, -2 several GPUs
    int64_t kernelNs = 0;  // all its GPU work
    int64_t computeNs = 0; // its kernels (not copies or memsets)
    int64_t tensorNs = 0;  // its GEMM, convolution and attention kernels
};

/// One call read back: its recorded inputs as a key, its cost.
struct Read {
    std::string key; // dims, types and concrete inputs, kSep between
    OperatorCost cost;
    OperatorInputs in; // kept for convolutions and their backward only (convOutputsFromBackward)
};

struct KernelRef {
    uint32_t slice;
    int32_t deviceIndex;
    std::string family;
    int64_t call; // index into calls, -1 when no costed operator launched it
};

std::string familyOf(const Trace& t, uint32_t i, std::unordered_map<uint32_t, std::string>& cache) {
    const SliceTable& s = t.slices();
    if (s.kind[i] == EventKind::Memcpy) return "copy";
    if (s.kind[i] == EventKind::Memset) return "memset";
    auto [it, fresh] = cache.try_emplace(s.name[i].value);
    if (fresh) {
        const KernelClass k = classifyKernel(t.str(s.name[i]));
        it->second = std::string(kernelFamilyName(k.family));
    }
    return it->second;
}

bool tensorFamily(std::string_view f) {
    return f == "gemm" || f == "grouped_gemm" || f == "conv" || f == "attention";
}

/// The steps inside the window, as analyze() times them (stepSpan).
std::vector<StepEfficiency> windowSteps(const AnalysisResult& r) {
    std::vector<StepEfficiency> out;
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const Interval span = stepSpan(r.steps, i, r.window.endNs);
        if (span.start < r.window.startNs || span.end > r.window.endNs || r.steps[i].warmup)
            continue;
        StepEfficiency st;
        st.number = r.steps[i].number;
        st.startNs = span.start;
        st.durationNs = span.end - span.start;
        out.push_back(st);
    }
    return out;
}

void chooseDtype(DeviceEfficiency& d, const std::map<Precision, int64_t>& byKernels,
                 const std::map<Precision, double>& byTypes, bool typedKernels) {
    int64_t known = 0, total = 0;
    for (const auto& [p, ns] : byKernels) {
        total += ns;
        if (p != Precision::Unknown) known += ns;
    }
    auto best = [](const auto& m) {
        Precision p = Precision::Unknown;
        for (const auto& [q, v] : m)
            if (q != Precision::Unknown && (p == Precision::Unknown || v > m.at(p))) p = q;
        return p;
    };
    if (total > 0 && 2 * known >= total) {
        d.dtype = best(byKernels);
        d.dtypeFrom =
            typedKernels ? "kernel names and their operators' input types" : "kernel names";
    } else if (best(byTypes) != Precision::Unknown) {
        d.dtype = best(byTypes);
        d.dtypeFrom = "operator input types";
    }
}

void finishDevice(DeviceEfficiency& d, const std::string& gpuName) {
    std::sort(d.families.begin(), d.families.end(),
              [](const FamilyEfficiency& a, const FamilyEfficiency& b) {
                  return a.busyNs != b.busyNs ? a.busyNs > b.busyNs : a.family < b.family;
              });
    if (d.peak && d.dtype != Precision::Unknown) d.peakTflops = d.peak->peakTflops(d.dtype);
    const double ridge = d.peakTflops > 0 && d.peak && d.peak->bandwidthTbps > 0
                             ? d.peakTflops / d.peak->bandwidthTbps
                             : -1;
    for (FamilyEfficiency& f : d.families) {
        if (f.costedNs > 0) {
            f.tflops = f.flops / double(f.costedNs) / 1e3;
            f.tbps = f.bytes > 0 ? f.bytes / double(f.costedNs) / 1e3 : -1;
            f.intensity = f.bytes > 0 ? f.flops / f.bytes : -1;
            if (ridge > 0 && f.intensity >= 0)
                f.bound = f.intensity >= ridge ? "compute" : "memory";
        }
    }
    if (!d.peak)
        d.why = gpuName.empty()
                    ? "the trace does not name the GPU (deviceProperties)"
                    : "\"" + gpuName + "\" is not in the peak table (analysis/data/gpu_peaks.txt)";
    else if (d.dtype == Precision::Unknown)
        d.why = "the data type of the matrix multiplies cannot be told (no precision in the kernel "
                "names, no input types)";
    else if (d.peakTflops <= 0)
        d.why = "the peak table has no " + std::string(precisionName(d.dtype)) + " rate for " +
                d.peak->key;
    else if (d.modelFlops <= 0)
        d.why = "no matrix multiply, convolution or attention operator with input shapes launched "
                "work on it";
    if (!d.why.empty()) return;
    for (const FamilyEfficiency& f : d.families)
        if (f.tflops > 1.05 * d.peakTflops) {
            char b[360];
            std::snprintf(b, sizeof b,
                          "the %s kernels ran %.1f TFLOP/s of model FLOPs, above the %s peak of "
                          "%.1f TFLOP/s: they do less arithmetic than the operators' formulas "
                          "count (as Winograd and FFT convolutions do) or run in a faster type",
                          f.family.c_str(), f.tflops, std::string(precisionName(d.dtype)).c_str(),
                          d.peakTflops);
            d.notes.emplace_back(b);
        }
    if (d.windowNs > 0) d.mfu = d.modelFlops / double(d.windowNs) / (d.peakTflops * 1e3);
    for (StepEfficiency& st : d.steps)
        if (st.durationNs > 0)
            st.mfu = st.modelFlops / double(st.durationNs) / (d.peakTflops * 1e3);
}

/// A DeviceEfficiency per analysed GPU, its name and peaks from deviceProperties; the index of
/// each device id in e.devices.
std::unordered_map<int32_t, int32_t> addDevices(const Trace& t, const AnalysisResult& r,
                                                Efficiency& e) {
    std::unordered_map<int32_t, int32_t> deviceIndex;
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    for (const DeviceMetrics& d : r.devices) {
        deviceIndex.emplace(d.device, int32_t(e.devices.size()));
        DeviceEfficiency de;
        de.device = d.device;
        de.windowNs = d.windowNs > 0 ? d.windowNs : hi - lo;
        de.busyNs = d.busyNs;
        const std::vector<DeviceProperties>& props = t.metadata().devices;
        const DeviceProperties* prop = nullptr;
        for (const DeviceProperties& p : props)
            if (p.id == d.device) prop = &p;
        // A process that sees one GPU model under other ids (ROCm's visible devices, a
        // CUDA_VISIBLE_DEVICES subset): every entry names the same GPU, so it is that one.
        if (!prop && !props.empty() &&
            std::all_of(props.begin(), props.end(), [&](const DeviceProperties& p) {
                return !p.name.empty() && p.name == props.front().name;
            })) {
            prop = &props.front();
            de.gpuNote = "deviceProperties name one GPU model, under other ids than " +
                         std::to_string(d.device) + "; taken for it";
        }
        if (prop) {
            de.gpu = prop->name;
            if (const GpuPeaks* g = GpuPeakTable::builtIn().match(*prop)) de.peak = *g;
        }
        de.steps = windowSteps(r);
        e.devices.push_back(std::move(de));
    }
    return deviceIndex;
}

/// The analysed GPUs' work in the window, each with the outermost costed call that launched
/// it (whose kernel times it adds up).
std::vector<KernelRef> collectKernels(const Trace& t, const AnalysisResult& r,
                                      const std::unordered_map<int32_t, int32_t>& deviceIndex,
                                      const std::unordered_map<uint32_t, uint32_t>& callOf,
                                      std::vector<Call>& calls) {
    const SliceTable& s = t.slices();
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    std::unordered_map<uint32_t, std::string> familyCache;
    std::vector<KernelRef> kernels;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::GpuStream) continue;
        const auto dev = deviceIndex.find(t.process(tr.process).gpuDevice);
        if (dev == deviceIndex.end()) continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (!isGpuWork(s.kind[i]) || !detail::startsInWindow(s, i, lo, hi)) continue;
            int64_t call = -1;
            for (SliceId p = t.launchOf(SliceId(i)); p.valid(); p = s.parent[p.index()])
                if (const auto c = callOf.find(p.index()); c != callOf.end()) call = c->second;
            if (call >= 0 && !calls[size_t(call)].outermost) call = -1;
            std::string family = familyOf(t, i, familyCache);
            if (call >= 0) {
                Call& c = calls[size_t(call)];
                c.kernelNs += s.dur[i];
                if (s.kind[i] == EventKind::Kernel) c.computeNs += s.dur[i];
                if (tensorFamily(family)) c.tensorNs += s.dur[i];
                c.device = c.device == -1 || c.device == dev->second ? dev->second : -2;
            }
            kernels.push_back({i, dev->second, std::move(family), call});
        }
    }
    return kernels;
}

/// Model FLOPs: the outermost tensor math, in the window and per GPU and step; each row's
/// kernel time and GPU; the FLOPs by the operators' input types (the data type's fallback).
void addModelFlops(const Trace& t, const std::vector<Call>& calls, Efficiency& e,
                   std::vector<std::map<Precision, double>>& dtypeByTypes) {
    const SliceTable& s = t.slices();
    for (const Call& c : calls) {
        if (!c.outermost || c.row == UINT32_MAX) continue;
        OperatorCostRow& row = e.operators[c.row];
        row.kernelNs += c.kernelNs;
        row.tensorNs += c.tensorNs;
        if (row.firstCall == UINT32_MAX || s.start[c.slice] < s.start[row.firstCall])
            row.firstCall = c.slice;
        if (c.device >= 0) row.device = row.device == -1 || row.device == c.device ? c.device : -2;
        if (!row.cost.sized || !tensorMath(row.formula)) continue;
        e.modelFlops += row.cost.flops;
        if (c.device < 0) continue;
        DeviceEfficiency& d = e.devices[size_t(c.device)];
        d.modelFlops += row.cost.flops;
        if (!row.cost.exact) d.upperBoundFlops += row.cost.flops;
        dtypeByTypes[size_t(c.device)][precisionFromInputTypes(row.types)] += row.cost.flops;
        const int64_t at = s.start[c.slice];
        for (StepEfficiency& st : d.steps)
            if (at >= st.startNs && at < st.startNs + st.durationNs)
                st.modelFlops += row.cost.flops;
    }
    for (OperatorCostRow& row : e.operators)
        if (row.device >= 0) row.device = e.devices[size_t(row.device)].device;
}

/// Forward convolutions whose strides are not recorded (the 2021 traces) take their output
/// size from the grad_output of backward calls with the same input and weight shapes, when
/// those all agree on one: their FLOPs are then exact instead of a stride-1 upper bound.
void convOutputsFromBackward(const Trace& t, const FlopModel& model,
                             const std::vector<uint32_t>& slices, std::vector<Read>& reads) {
    const SliceTable& s = t.slices();
    std::map<std::pair<Dims, Dims>, std::set<Dims>> outputs; // (x, w) -> grad_output spatial
    const auto dimsAt = [](const OperatorInputs& in, int i) -> const Dims* {
        return i >= 0 && size_t(i) < in.dims.size() ? &in.dims[size_t(i)] : nullptr;
    };
    for (size_t k = 0; k < slices.size(); ++k) {
        const FlopModel::Rule& r = *model.find(t.str(s.name[slices[k]]));
        if (r.formula != FlopFormula::ConvBackward || !reads[k].cost.sized) continue;
        const Dims* g = dimsAt(reads[k].in, r.at[FlopModel::Gout]);
        const Dims* x = dimsAt(reads[k].in, r.at[FlopModel::X]);
        const Dims* w = dimsAt(reads[k].in, r.at[FlopModel::W]);
        if (g && x && w && g->size() > 2 && g->size() == x->size())
            outputs[{*x, *w}].insert(Dims(g->begin() + 2, g->end()));
    }
    for (size_t k = 0; k < slices.size() && !outputs.empty(); ++k) {
        const FlopModel::Rule& r = *model.find(t.str(s.name[slices[k]]));
        if (r.formula != FlopFormula::Conv || reads[k].cost.exact) continue;
        const Dims* x = dimsAt(reads[k].in, r.at[FlopModel::X]);
        const Dims* w = dimsAt(reads[k].in, r.at[FlopModel::W]);
        const auto it = x && w ? outputs.find({*x, *w}) : outputs.end();
        if (it == outputs.end() || it->second.size() != 1) continue;
        reads[k].in.outSpatial = *it->second.begin();
        const OperatorCost c = FlopModel::cost(r, reads[k].in);
        if (c.sized && c.exact) reads[k].cost = c;
    }
}

/// The operator rows by work, the notes on what could not be costed.
void finishOperators(Efficiency& e) {
    std::sort(e.operators.begin(), e.operators.end(),
              [](const OperatorCostRow& a, const OperatorCostRow& b) {
                  const double fa = a.cost.flops * double(a.calls),
                               fb = b.cost.flops * double(b.calls);
                  if (fa != fb) return fa > fb;
                  const double ba = a.cost.bytes.value_or(0) * double(a.calls),
                               bb = b.cost.bytes.value_or(0) * double(b.calls);
                  if (ba != bb) return ba > bb;
                  return std::tie(a.name, a.dims, a.types, a.concrete) <
                         std::tie(b.name, b.dims, b.types, b.concrete);
              });
    if (e.unshapedCalls > 0 && !e.shapes)
        e.notes.push_back(
            "the operators carry no input shapes (record_shapes=True records them): FLOPs, "
            "MFU and the roofline cannot be computed");
    if (e.shapes && e.unsizedCalls > 0) {
        for (const OperatorCostRow& row : e.operators)
            if (!row.cost.sized && !row.dims.empty()) {
                e.notes.push_back(
                    std::to_string(e.unsizedCalls) +
                    " calls of costed operators have shapes their formula cannot read, e.g. " +
                    row.name + ": " + row.cost.why);
                break;
            }
    }
}

} // namespace

Efficiency computeEfficiency(const Trace& t, const AnalysisResult& r,
                             const std::atomic<bool>* cancel) {
    Efficiency e;
    const SliceTable& s = t.slices();
    const FlopModel& model = FlopModel::builtIn();
    const int64_t lo = r.window.startNs, hi = r.window.endNs;
    std::unordered_map<uint32_t, const FlopModel::Rule*> ruleByName;
    auto ruleOf = [&](uint32_t i) -> const FlopModel::Rule* {
        if (s.kind[i] != EventKind::CpuOp) return nullptr;
        auto [it, fresh] = ruleByName.try_emplace(s.name[i].value, nullptr);
        if (fresh) it->second = model.find(t.str(s.name[i]));
        return it->second;
    };
    // The window's calls of table operators, read back with their inputs.
    std::vector<uint32_t> slices;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        if (tr.kind != TrackKind::CpuThread) continue;
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo);
             i < tr.sliceEnd && s.start[i] < hi; ++i)
            if (detail::startsInWindow(s, i, lo, hi) && ruleOf(i)) slices.push_back(i);
    }
    std::vector<Read> reads(slices.size());
    const bool done = detail::readArgsInFileOrder(
        t, slices,
        [&](size_t k, bool ok, std::vector<ArgValue>& args) {
            OperatorInputs in;
            std::string dims, types, concrete;
            if (ok)
                for (const ArgValue& a : args) {
                    if (a.key == "Input Dims" || a.key == "Input dims") {
                        dims = detail::compactJson(a.json);
                        in.dims = detail::parseDims(a.json);
                    } else if (a.key == "Input type") {
                        types = detail::compactJson(a.json);
                        in.types = detail::parseStrings(a.json);
                    } else if (a.key == "Concrete Inputs") {
                        concrete = detail::compactJson(a.json);
                        in.concrete = detail::parseStrings(a.json);
                    }
                }
            const FlopModel::Rule& rule = *model.find(t.str(s.name[slices[k]]));
            reads[k].cost = FlopModel::cost(rule, in);
            reads[k].key = dims + kSep + types + kSep + concrete;
            if (rule.formula == FlopFormula::Conv || rule.formula == FlopFormula::ConvBackward)
                reads[k].in = std::move(in);
        },
        cancel);
    if (!done) return e;
    convOutputsFromBackward(t, model, slices, reads);

    std::unordered_map<std::string, uint32_t> rowOf;
    std::vector<Call> calls(slices.size());
    std::unordered_map<uint32_t, uint32_t> callOf; // slice -> index in calls
    callOf.reserve(slices.size());
    for (size_t k = 0; k < slices.size(); ++k) {
        const uint32_t i = slices[k];
        const FlopModel::Rule* rule = ruleOf(i);
        const std::string& key = reads[k].key;
        bool nested = false;
        for (SliceId p = s.parent[i]; p.valid() && !nested; p = s.parent[p.index()])
            nested = ruleOf(p.index()) != nullptr;
        calls[k] = {i, UINT32_MAX, !nested, -1, 0, 0, 0};
        callOf.emplace(i, uint32_t(k));
        if (key.front() == kSep) { // no "Input Dims": not a row, no cost
            ++e.unshapedCalls;
            continue;
        }
        e.shapes = true;
        auto [it, fresh] = rowOf.try_emplace(std::string(t.str(s.name[i])) + kSep + key,
                                             uint32_t(e.operators.size()));
        if (fresh) {
            OperatorCostRow row;
            row.name = std::string(t.str(s.name[i]));
            row.formula = rule->formula;
            const size_t a = key.find(kSep), b = key.find(kSep, a + 1);
            row.dims = key.substr(0, a);
            row.types = key.substr(a + 1, b - a - 1);
            row.concrete = key.substr(b + 1);
            row.cost = reads[k].cost;
            e.operators.push_back(std::move(row));
        }
        OperatorCostRow& row = e.operators[it->second];
        ++row.calls;
        calls[k].row = it->second;
        if (!nested) ++row.outermostCalls;
        (row.cost.sized ? e.costedCalls : e.unsizedCalls) += 1;
    }
    if (cancel && cancel->load(std::memory_order_relaxed)) return e;

    // The kernels of the analysed GPUs, each with the outermost costed call that launched it.
    const std::unordered_map<int32_t, int32_t> deviceIndex = addDevices(t, r, e);
    const std::vector<KernelRef> kernels = collectKernels(t, r, deviceIndex, callOf, calls);
    std::vector<std::map<Precision, int64_t>> dtypeByKernels(e.devices.size());
    std::vector<std::map<Precision, double>> dtypeByTypes(e.devices.size());
    std::vector<std::map<std::string, FamilyEfficiency>> families(e.devices.size());
    std::vector<double> modelFlopsCarried(e.devices.size());
    std::vector<bool> typedKernels(e.devices.size()); // a kernel's type came from its operator
    std::vector<int64_t> modelNs(e.devices.size());
    for (const KernelRef& k : kernels) {
        FamilyEfficiency& f = families[size_t(k.deviceIndex)][k.family];
        f.family = k.family;
        ++f.kernels;
        const int64_t dur = s.dur[k.slice];
        f.busyNs += dur;
        if (tensorFamily(k.family)) {
            // The kernel's name says its type; else its operator's input types do, and float
            // on a Tensor-Core kernel (CUTLASS's tensorop s1688gemm) is TF32.
            const KernelClass kc = classifyKernel(t.str(s.name[k.slice]));
            Precision p = kc.precision;
            if (p == Precision::Unknown && k.call >= 0 && calls[size_t(k.call)].row != UINT32_MAX) {
                p = precisionFromInputTypes(e.operators[calls[size_t(k.call)].row].types);
                if (p == Precision::FP32 && kc.tensorCore == TensorCoreUse::Yes)
                    p = Precision::TF32;
                if (p != Precision::Unknown) typedKernels[size_t(k.deviceIndex)] = true;
            }
            dtypeByKernels[size_t(k.deviceIndex)][p] += dur;
        }
        if (k.call < 0 || calls[size_t(k.call)].row == UINT32_MAX) continue;
        const Call& c = calls[size_t(k.call)];
        const OperatorCostRow& row = e.operators[c.row];
        // The work goes to the kernels that did it: a matrix multiply's to its GEMM kernels
        // when it launched any, else to its kernels; never to copies or memsets.
        const bool toTensor = tensorMath(row.formula) && c.tensorNs > 0;
        const int64_t over = toTensor ? c.tensorNs : c.computeNs;
        if (!row.cost.sized || over <= 0 || s.kind[k.slice] != EventKind::Kernel ||
            (toTensor && !tensorFamily(k.family)))
            continue;
        const double share = double(dur) / double(over);
        f.flops += row.cost.flops * share;
        f.costedNs += dur;
        if (tensorMath(row.formula)) {
            modelFlopsCarried[size_t(k.deviceIndex)] += row.cost.flops * share;
            modelNs[size_t(k.deviceIndex)] += dur;
        }
        if (row.cost.bytes) f.bytes += *row.cost.bytes * share;
    }
    for (size_t d = 0; d < e.devices.size(); ++d)
        for (auto& [name, f] : families[d]) e.devices[d].families.push_back(f);

    addModelFlops(t, calls, e, dtypeByTypes);
    for (size_t d = 0; d < e.devices.size(); ++d) {
        chooseDtype(e.devices[d], dtypeByKernels[d], dtypeByTypes[d], typedKernels[d]);
        if (modelNs[d] > 0)
            e.devices[d].achievedTflops = modelFlopsCarried[d] / double(modelNs[d]) / 1e3;
        finishDevice(e.devices[d], e.devices[d].gpu);
    }
    if (r.stepTimes.count > 0) e.modelFlopsPerStep = e.modelFlops / double(r.stepTimes.count);
    finishOperators(e);
    return e;
}

double Roofline::xAt(double intensity) const {
    return (std::log10(std::max(intensity, 1e-12)) - logXMin) / (logXMax - logXMin);
}

double Roofline::yAt(double tflops) const {
    return (std::log10(std::max(tflops, 1e-12)) - logYMin) / (logYMax - logYMin);
}

Roofline rooflineOf(const DeviceEfficiency& d) {
    Roofline r;
    if (d.peak && d.peakTflops > 0 && d.peak->bandwidthTbps > 0) {
        r.peakTflops = d.peakTflops;
        r.bandwidthTbps = d.peak->bandwidthTbps;
        r.ridge = r.peakTflops / r.bandwidthTbps;
    }
    double xLo = 1e300, xHi = -1e300, yLo = 1e300, yHi = -1e300;
    auto extend = [&](double x, double y) {
        xLo = std::min(xLo, x), xHi = std::max(xHi, x), yLo = std::min(yLo, y),
        yHi = std::max(yHi, y);
    };
    for (const FamilyEfficiency& f : d.families)
        if (f.intensity > 0 && f.tflops > 0) {
            r.points.push_back({f.family, f.intensity, f.tflops, f.busyNs, f.bound});
            extend(f.intensity, f.tflops);
        }
    if (r.ridge > 0) extend(r.ridge, r.peakTflops);
    if (xLo > xHi) return r; // nothing to show: the default decades
    // Whole decades around what is shown, at least four wide, the roof's top with room.
    r.logXMin = std::floor(std::log10(xLo)) - 1;
    r.logXMax = std::max(std::ceil(std::log10(xHi)) + 1, r.logXMin + 4);
    r.logYMin = std::floor(std::log10(yLo)) - 1;
    r.logYMax = std::max(std::ceil(std::log10(yHi * 1.5)), r.logYMin + 3);
    return r;
}

std::string formatFlops(double flops) {
    char b[64];
    if (flops >= 1e15)
        std::snprintf(b, sizeof b, "%.2f PFLOP", flops / 1e15);
    else if (flops >= 1e12)
        std::snprintf(b, sizeof b, "%.2f TFLOP", flops / 1e12);
    else if (flops >= 1e9)
        std::snprintf(b, sizeof b, "%.2f GFLOP", flops / 1e9);
    else
        std::snprintf(b, sizeof b, "%.2f MFLOP", flops / 1e6);
    return b;
}

std::string formatFlopRate(double perSecond) {
    return formatFlops(perSecond) + "/s";
}

} // namespace stallscope::analysis
