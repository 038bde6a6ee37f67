// Detectors for how the GPU is used: FP32 without Tensor Cores, exposed communication,
// memory pressure.
#include "detectors.h"

#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace stallscope::analysis::detail {

using namespace model;

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
                    kernelOperatorPrecision(c, k.slice, opPrecision, budget) != Precision::FP32)
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
        f.replayFix = Fix::MixedPrecision;
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

void detectCommExposed(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->commNs <= 0) continue;
        const int64_t exposed = d->commNs - d->commOverlapNs;
        if (double(exposed) < c.options.thresholds.commExposedMinShare * double(c.window.length())) continue;
        Finding f = makeFinding(c, FindingKind::CommExposed, dev.device, exposed);
        f.replayFix = Fix::OverlapComm;
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
