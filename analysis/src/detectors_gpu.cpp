// Detectors for how the GPU is fed and used: launch-bound stretches, small batches,
// FP32 without Tensor Cores, light models, exposed communication, memory pressure.
#include "detectors.h"

#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

namespace {
constexpr size_t idx(IdleCause c) { return static_cast<size_t>(c); }
int64_t causeNs(const DeviceMetrics& d, IdleCause c) { return d.idle.causes[idx(c)].ns; }

std::string fmtNumber(double v, const char* fmt = "%.2f") {
    char buf[48];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

/// Kernels of a device inside [lo, hi), with their launch call.
struct KernelView {
    uint32_t slice;
    SliceId launch;
};

std::vector<KernelView> kernelsIn(const Context& c, const DeviceActivity& d, int64_t lo, int64_t hi) {
    const SliceTable& s = c.trace.slices();
    std::vector<KernelView> out;
    auto it = std::lower_bound(d.work.begin(), d.work.end(), lo, [&s](uint32_t w, int64_t v) { return s.start[w] < v; });
    for (; it != d.work.end() && s.start[*it] < hi; ++it)
        if (s.kind[*it] == EventKind::Kernel)
            out.push_back({*it, d.launch[static_cast<size_t>(it - d.work.begin())]});
    return out;
}
} // namespace

void detectLaunchBound(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    const Thresholds& th = c.options.thresholds;
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d) continue;
        // Regions: the step tiles, or the whole window without steps.
        std::vector<Interval> regions;
        for (const auto& st : d->steps) regions.push_back({st.startNs, st.endNs});
        if (regions.empty()) regions.push_back({c.window.startNs, c.window.endNs});
        int64_t saving = 0;
        size_t kernelsTotal = 0, shortTotal = 0;
        Intervals ranges;
        std::vector<SliceId> evidence;
        for (size_t r = 0; r < regions.size(); ++r) {
            const Interval reg = regions[r];
            const auto ks = kernelsIn(c, dev, reg.start, reg.end);
            if (int(ks.size()) < th.launchBoundMinKernels && reg.length() < th.launchBoundMinRegionNs) continue;
            size_t shorter = 0;
            double queued = 0;
            for (const KernelView& k : ks) {
                if (!k.launch.valid()) continue;
                const int64_t ld = s.dur[k.launch.index()];
                if (s.dur[k.slice] < ld) ++shorter;
                queued += double(std::max<int64_t>(0, s.start[k.slice] - (s.start[k.launch.index()] + ld)));
            }
            // Busy share of the part of the region not spent loading data or writing logs.
            int64_t excluded = 0, launchIdle = 0;
            if (r < d->steps.size()) {
                excluded = d->steps[r].idleByCause[idx(IdleCause::DataLoading)] +
                           d->steps[r].idleByCause[idx(IdleCause::IoLoggingCheckpoint)];
                launchIdle = d->steps[r].idleByCause[idx(IdleCause::LaunchOverhead)];
            } else {
                excluded = causeNs(*d, IdleCause::DataLoading) + causeNs(*d, IdleCause::IoLoggingCheckpoint);
                launchIdle = causeNs(*d, IdleCause::LaunchOverhead);
            }
            const int64_t active = std::max<int64_t>(1, reg.length() - excluded);
            const double busy = double(lengthWithin(dev.busy, reg.start, reg.end)) / double(active);
            const double meanQueue = queued / double(active);
            if (ks.empty() || busy >= th.launchBoundMaxBusy || shorter * 2 < ks.size() || meanQueue >= 0.5) continue;
            saving += launchIdle;
            kernelsTotal += ks.size();
            shortTotal += shorter;
            ranges.push_back(reg);
            for (size_t i = 0; i < ks.size() && evidence.size() < 30; i += std::max<size_t>(1, ks.size() / 10)) {
                evidence.push_back(SliceId(ks[i].slice));
                if (ks[i].launch.valid()) evidence.push_back(ks[i].launch);
            }
        }
        if (ranges.empty() || double(saving) < th.severityNote * double(c.window.length())) continue;
        Finding f = makeFinding(c, FindingKind::LaunchBound, dev.device, saving);
        f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
        f.evidence = std::move(evidence);
        f.waitedFor = topWaitedFor(c, d->idle.waitedFor[idx(IdleCause::LaunchOverhead)], 5);
        f.title = "Kernel launches, not the GPU, set the pace";
        f.explanation = fmtPct(double(shortTotal) / double(std::max<size_t>(1, kernelsTotal))) + " of the " +
                        std::to_string(kernelsTotal) +
                        " kernels in the affected steps ran for less time than the CPU call that launched them, and "
                        "the launch queue stayed nearly empty, so the GPU idled " + fmtDuration(saving) +
                        " between kernels waiting for the next launch. Launch-side time: " +
                        describeWaitedFor(f.waitedFor, causeNs(*d, IdleCause::LaunchOverhead)) + ".";
        f.fix = "Launch fewer, larger kernels: capture the step in a CUDA Graph (torch.compile mode=\"reduce-overhead\" "
                "or torch.cuda.graph), fuse elementwise ops with torch.compile, use fused/foreach optimizers, or "
                "raise the batch size so each kernel does more work.";
        f.snippet =
            "model = torch.compile(model, mode=\"reduce-overhead\")   # fusion + CUDA Graphs\n"
            "optimizer = torch.optim.AdamW(params, lr=lr, fused=True)  # one kernel for all parameters";
        f.confidence = 0.7;
        out.push_back(std::move(f));
    }
}

void detectSmallBatch(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    const Thresholds& th = c.options.thresholds;
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d) continue;
        const auto ks = kernelsIn(c, dev, c.window.startNs, c.window.endNs);
        if (ks.size() < 20) continue;
        std::vector<int64_t> durs;
        double gemmNs = 0, gemmBlocks = 0, gemmBlockWeight = 0, gemmOcc = 0, gemmOccWeight = 0, wasted = 0;
        for (const KernelView& k : ks) {
            durs.push_back(s.dur[k.slice]);
            if (!c.is(k.slice, kNcGemm)) continue;
            const double dur = double(s.dur[k.slice]);
            gemmNs += dur;
            const float b = SliceExtra::blocksPerSm(s.extra[k.slice]);
            const float o = SliceExtra::estOccupancyPct(s.extra[k.slice]);
            if (b > 0) {
                gemmBlocks += b * dur;
                gemmBlockWeight += dur;
                wasted += dur * (1.0 - std::min(1.0, double(b)));
            }
            if (o >= 0) gemmOcc += o * dur, gemmOccWeight += dur;
        }
        std::nth_element(durs.begin(), durs.begin() + static_cast<long>(durs.size() / 2), durs.end());
        const int64_t median = durs[durs.size() / 2];
        const double blocks = gemmBlockWeight > 0 ? gemmBlocks / gemmBlockWeight : -1;
        const double occ = gemmOccWeight > 0 ? gemmOcc / gemmOccWeight : -1;
        const bool lowFill = (blocks >= 0 && blocks < th.smallBatchMaxBlocksPerSm) || (occ >= 0 && occ < 25);
        if (median >= th.smallBatchMedianKernelNs || !lowFill || gemmNs <= 0) continue;
        const int64_t saving = causeNs(*d, IdleCause::LaunchOverhead) + static_cast<int64_t>(wasted);
        if (double(saving) < th.severityNote * double(c.window.length())) continue;
        Finding f = makeFinding(c, FindingKind::SmallBatch, dev.device, saving);
        std::vector<SliceId> gemms;
        for (const KernelView& k : ks)
            if (c.is(k.slice, kNcGemm) && gemms.size() < 20) gemms.push_back(SliceId(k.slice));
        f.evidence = gemms;
        for (SliceId g : gemms) f.ranges.push_back({s.start[g.index()], s.start[g.index()] + s.dur[g.index()]});
        f.ranges = longestRanges(mergeIntervals(std::move(f.ranges)), 12);
        f.title = "Kernels are too small to fill the GPU (batch too small?)";
        f.explanation = "The median kernel runs " + fmtDuration(median) + ", and the matrix-multiply/convolution "
                        "kernels launch " + (blocks >= 0 ? fmtNumber(blocks) + " blocks per SM" : std::string("few blocks")) +
                        (occ >= 0 ? " at " + fmtNumber(occ, "%.0f") + "% estimated occupancy" : std::string()) +
                        ": most SMs have nothing to do and launch overhead dominates.";
        f.fix = "Raise the batch size (use gradient accumulation to keep the effective batch), or batch several "
                "requests together at inference time.";
        f.snippet =
            "accum = 4                                   # effective batch = batch_size * accum\n"
            "for i, (x, y) in enumerate(loader):         # loader with a larger batch_size\n"
            "    loss = criterion(model(x), y) / accum\n"
            "    loss.backward()\n"
            "    if (i + 1) % accum == 0:\n"
            "        optimizer.step(); optimizer.zero_grad(set_to_none=True)";
        f.confidence = 0.5;
        out.push_back(std::move(f));
    }
}

namespace {

/// The precision of a matrix multiply from its operator's input types (record_shapes): the
/// launch call of the kernel, the innermost operator around it, its "Input type" argument.
/// Cached per operator name; at most `budget` argument reads (each a read of the source).
Precision operatorPrecision(const Context& c, uint32_t kernel, std::map<uint32_t, Precision>& cache,
                            size_t& budget) {
    const SliceId launch = c.trace.launchOf(SliceId(kernel));
    if (!launch.valid()) return Precision::Unknown;
    const SliceId op = c.trace.enclosingOp(launch);
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

} // namespace

void detectNoTensorCores(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->busyNs <= 0) continue;
        int cc = 0;
        for (const auto& p : c.trace.metadata().devices)
            if (p.id == dev.device) cc = p.computeMajor;
        if (cc < 7) continue;  // Tensor Cores arrived with Volta (7.0); unknown devices are skipped
        // Positive evidence only: matrix multiplies whose kernel name says fp32 (and no
        // Tensor-Core instruction), or whose operator's input types are float. A kernel
        // the catalogue cannot place (a library's own naming) is never taken for fp32.
        int64_t gemm = 0, tc = 0, fp32Named = 0, fp32Typed = 0;
        std::vector<SliceId> evidence;
        std::map<uint32_t, Precision> opPrecision;
        size_t budget = 256;
        for (const KernelView& k : kernelsIn(c, dev, c.window.startNs, c.window.endNs)) {
            if (!c.is(k.slice, kNcGemm)) continue;
            gemm += s.dur[k.slice];
            if (c.is(k.slice, kNcTensorCore)) {
                tc += s.dur[k.slice];
                continue;
            }
            bool typed = false;
            if (!c.is(k.slice, kNcFp32Matmul)) {
                if (c.is(k.slice, kNcPrecisionNamed) ||
                    operatorPrecision(c, k.slice, opPrecision, budget) != Precision::FP32)
                    continue;
                typed = true;
            }
            (typed ? fp32Typed : fp32Named) += s.dur[k.slice];
            if (evidence.size() < 30) evidence.push_back(SliceId(k.slice));
        }
        const int64_t fp32 = fp32Named + fp32Typed;
        if (double(fp32) < c.options.thresholds.noTensorCoresMinGemmShare * double(d->busyNs) ||
            20.0 * double(tc) > double(gemm))
            continue;
        // Half precision on Tensor Cores runs these GEMMs at least twice as fast.
        Finding f = makeFinding(c, FindingKind::NoTensorCores, dev.device, fp32 / 2);
        f.evidence = evidence;
        for (SliceId e : evidence) f.ranges.push_back({s.start[e.index()], s.start[e.index()] + s.dur[e.index()]});
        f.ranges = longestRanges(mergeIntervals(std::move(f.ranges)), 12);
        const bool typesSay = 2 * fp32Typed >= fp32;
        f.title = "Matrix multiplies run in FP32 without Tensor Cores";
        f.explanation =
            "FP32 matrix-multiply and convolution kernels took " + fmtDuration(fp32) + " (" +
            fmtPct(double(fp32) / double(d->busyNs)) +
            " of GPU busy time) on a compute capability " + std::to_string(cc) +
            ".x GPU, and Tensor-Core kernels ran " + fmtDuration(tc) +
            " of the matrix multiplies. " +
            (typesSay ? "The operators' input types (record_shapes) are float."
                      : "The kernel names say fp32 (sgemm, f32 variants); the trace has no "
                        "operator input "
                        "types to confirm it (record_shapes=True would).") +
            " Mixed precision typically makes these kernels 2-8x faster; the estimate assumes 2x.";
        f.fix = "Train with automatic mixed precision (torch.autocast + GradScaler, or bfloat16 on Ampere and newer); "
                "allow TF32 for the remaining FP32 matrix multiplies.";
        f.snippet =
            "scaler = torch.cuda.amp.GradScaler()\n"
            "with torch.autocast(\"cuda\", dtype=torch.float16):   # bfloat16 on Ampere+: no scaler needed\n"
            "    loss = criterion(model(x), y)\n"
            "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()\n"
            "torch.set_float32_matmul_precision(\"high\")          # TF32 for FP32 matmuls";
        // Names alone are a guess: lower confidence, never high.
        f.confidence = typesSay ? 0.8 : 0.5;
        if (!typesSay && f.severity == FindingSeverity::High) f.severity = FindingSeverity::Medium;
        out.push_back(std::move(f));
    }
}

void detectLightModel(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const DeviceMetrics& d : in.result.devices) {
        if (d.windowNs <= 0 || d.idleNs <= 0) continue;
        if (d.kernelUtilization >= c.options.thresholds.lightModelMaxKernelShare) continue;
        const int64_t hostSide = causeNs(d, IdleCause::LaunchOverhead) + causeNs(d, IdleCause::CpuCompute);
        const int64_t loading = causeNs(d, IdleCause::DataLoading) + causeNs(d, IdleCause::IoLoggingCheckpoint);
        if (2.0 * double(hostSide) < double(d.idleNs) || 3.0 * double(loading) > double(d.idleNs)) continue;
        Finding f = makeFinding(c, FindingKind::LightModel, d.device, hostSide);
        Intervals ranges = d.idle.intervals[idx(IdleCause::LaunchOverhead)];
        ranges.insert(ranges.end(), d.idle.intervals[idx(IdleCause::CpuCompute)].begin(),
                      d.idle.intervals[idx(IdleCause::CpuCompute)].end());
        f.ranges = longestRanges(mergeIntervals(std::move(ranges)), 12);
        for (const auto& g : d.idle.gaps)
            if (g.endingWork.valid() && f.evidence.size() < 20) f.evidence.push_back(g.endingWork);
        f.title = "The model is too light to keep the GPU busy";
        f.explanation = "Kernels run only " + fmtPct(d.kernelUtilization) + " of the step; most idle time (" +
                        fmtDuration(hostSide) + ") is the CPU dispatching operators and launching kernels. The GPU "
                        "finishes each piece of work faster than Python and the dispatcher can issue the next.";
        f.fix = "Remove per-op overhead: CUDA Graphs (torch.compile mode=\"reduce-overhead\"), TorchScript/"
                "TensorRT for inference, a larger batch; for very small models CPU inference may be cheaper.";
        f.snippet = "model = torch.compile(model, mode=\"reduce-overhead\")  # whole step as one CUDA Graph";
        f.confidence = 0.5;
        out.push_back(std::move(f));
    }
}

void detectCommExposed(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->commNs <= 0) continue;
        const int64_t exposed = d->commNs - d->commOverlapNs;
        if (double(exposed) < c.options.thresholds.commExposedMinShare * double(c.window.length())) continue;
        Finding f = makeFinding(c, FindingKind::CommExposed, dev.device, exposed);
        for (const KernelView& k : kernelsIn(c, dev, c.window.startNs, c.window.endNs))
            if (c.is(k.slice, kNcComm)) {
                if (f.evidence.size() < 30) f.evidence.push_back(SliceId(k.slice));
                f.ranges.push_back({s.start[k.slice], s.start[k.slice] + s.dur[k.slice]});
            }
        f.ranges = longestRanges(mergeIntervals(std::move(f.ranges)), 12);
        f.title = "Communication is not hidden behind computation";
        f.explanation = "Collective kernels ran " + fmtDuration(d->commNs) + ", of which " + fmtDuration(exposed) +
                        " (" + fmtPct(double(exposed) / double(d->commNs)) +
                        ") did not overlap any compute kernel: the step waits for the network.";
        f.fix = "Let DDP overlap gradient reduction with backward (bucket sizes, gradient_as_bucket_view), "
                "accumulate gradients to communicate less often, or shard with FSDP and prefetching.";
        f.snippet =
            "model = torch.nn.parallel.DistributedDataParallel(\n"
            "    model, device_ids=[rank], bucket_cap_mb=50, gradient_as_bucket_view=True)\n"
            "with model.no_sync():            # accumulate without reducing\n"
            "    criterion(model(x), y).backward()";
        f.confidence = 0.6;
        out.push_back(std::move(f));
    }
}

void detectMemoryPressure(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const auto& p : c.trace.metadata().devices) {
        if (p.totalGlobalMem <= 0 || (c.options.device >= 0 && p.id != c.options.device)) continue;
        int64_t peak = -1;
        int64_t peakTs = 0;
        for (const MemorySample& m : c.trace.memorySamples())
            if (m.deviceType == 1 && m.deviceId == p.id && m.totalReserved > peak) peak = m.totalReserved, peakTs = m.ts;
        const double share = double(peak) / double(p.totalGlobalMem);
        if (peak < 0 || share <= c.options.thresholds.memoryPressureMinReserved) continue;
        Finding f = makeFinding(c, FindingKind::MemoryPressure, p.id, 0);
        f.severity = FindingSeverity::Medium;  // a risk (allocator retries, OOM), not idle time
        const int64_t at = std::clamp(peakTs, c.window.startNs, c.window.endNs);
        f.ranges = {{at, std::min(at + 1, c.window.endNs)}};
        f.title = "GPU memory is nearly full";
        f.explanation = "The caching allocator reserved up to " + std::to_string(peak / (1 << 20)) + " MiB (" +
                        fmtPct(share) + " of the GPU's memory): allocations start to fail and retry (cudaFree + "
                        "cudaMalloc stalls) and a larger batch will not fit.";
        f.fix = "Reduce activation memory: activation checkpointing, mixed precision, smaller micro-batches; "
                "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation.";
        f.snippet = "from torch.utils.checkpoint import checkpoint\n"
                    "out = checkpoint(block, x, use_reentrant=False)   # recompute activations in backward";
        f.confidence = 0.8;
        out.push_back(std::move(f));
    }
}

} // namespace stallscope::analysis::detail
