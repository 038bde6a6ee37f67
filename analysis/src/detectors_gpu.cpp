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

namespace {
/// The GPU's vendor and generation as deviceProperties give them.
struct GpuGeneration {
    int cc = 0;       // computeMajor (NVIDIA compute capability; AMD reports its gfx major)
    bool amd = false; // an AMD GPU: Matrix Cores, no TF32 advice
    std::string name;
};

GpuGeneration generationOf(const Context& c, int32_t device) {
    GpuGeneration g;
    for (const auto& p : c.trace.metadata().devices)
        if (p.id == device) {
            g.cc = p.computeMajor;
            g.name = p.name;
            g.amd = p.name.find("AMD") != std::string::npos ||
                    p.name.find("Instinct") != std::string::npos ||
                    p.name.find("Radeon") != std::string::npos;
        }
    return g;
}
} // namespace

void detectNoTensorCores(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    const SliceTable& s = c.trace.slices();
    const bool training = hasBackward(c);
    for (const DeviceActivity& dev : c.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, dev.device);
        if (!d || d->busyNs <= 0) continue;
        const GpuGeneration gen = generationOf(c, dev.device);
        // Tensor Cores arrived with Volta (7.0). AMD's Matrix Cores came with CDNA (MI100),
        // but deviceProperties say "gfx9" for Vega too: an AMD GPU counts when its name says
        // Instinct MI100 or later. Unknown devices (no deviceProperties) are skipped: the
        // advice depends on the GPU.
        if (gen.cc < 7) continue;
        if (gen.amd && gen.name.find("MI1") == std::string::npos &&
            gen.name.find("MI2") == std::string::npos && gen.name.find("MI3") == std::string::npos)
            continue;
        // Positive evidence only (fp32MatmulEvidence): a library kernel named fp32, or the
        // operator's input types float on a library or aten operator's kernel. A kernel the
        // catalogue does not know as a library's is never taken for fp32 by its name.
        int64_t gemm = 0, tc = 0, fp32Named = 0, fp32Typed = 0;
        std::vector<SliceId> evidence;
        std::map<uint32_t, Precision> opPrecision;
        size_t budget = 256;
        bool sawTypes = false;
        for (const KernelView& k : kernelsIn(c, dev, c.window.startNs, c.window.endNs)) {
            if (!c.is(k.slice, kNcGemm)) continue;
            gemm += s.dur[k.slice];
            if (c.is(k.slice, kNcTensorCore)) {
                tc += s.dur[k.slice];
                continue;
            }
            bool typed = false;
            if (!fp32MatmulEvidence(c, k.slice, opPrecision, budget, &typed, &sawTypes)) continue;
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
        const bool ampere = !gen.amd && gen.cc >= 8; // TF32 and bf16 Tensor Cores
        f.title = std::string("Matrix multiplies run in FP32 without ") +
                  (gen.amd ? "Matrix Cores" : "Tensor Cores");
        const ClaimParams fp32p = ClaimParams().device(dev.device).str("class", "fp32_matmul");
        const ClaimParams cc = ClaimParams().device(dev.device).str("field", "computeMajor");
        f.explanation =
            "FP32 matrix-multiply and convolution kernels took " +
            saidNs(f, fp32, "kernel_ns", fp32p) + " (" +
            saidShare(f, double(fp32) / double(d->busyNs), "kernel_ns", fp32p, "busy_ns",
                      ClaimParams().device(dev.device)) +
            " of GPU busy time) on " +
            (gen.amd
                 ? "an AMD GPU (compute major " +
                       said(f, std::to_string(gen.cc), "device_prop", cc, gen.cc) + ")"
                 : "a compute capability " +
                       said(f, std::to_string(gen.cc) + ".x", "device_prop", cc, gen.cc) + " GPU") +
            ", and " + (gen.amd ? "Matrix-Core" : "Tensor-Core") + " kernels ran " +
            saidNs(f, tc, "kernel_ns",
                   ClaimParams().device(dev.device).str("class", "tensor_core_matmul")) +
            " of the matrix multiplies. " +
            (typesSay ? std::string("The operators' input types (record_shapes) are float.")
             : sawTypes
                 ? std::string("The library kernels' names say fp32; the operators read for "
                               "them carry input types that do not say float for most of them.")
                 : std::string("The library kernels' names say fp32 (sgemm, scudnn, f32 "
                               "variants); the operators that launched them carry no input "
                               "types to confirm it (record_shapes=True would).")) +
            " A " +
            (ampere || gen.amd ? saidConstant(f, "16-bit", "a data type")
                               : "half-precision (FP16)") +
            " type typically makes these kernels " +
            saidConstant(f, "2-8x", "mixed precision's typical speed-up") +
            " faster; the estimate assumes " + saidConstant(f, "2x", "the estimate's assumption") +
            ".";
        if (!ampere && !gen.amd)
            f.explanation += " This GPU has no TF32: its Tensor Cores multiply FP16 (Volta, "
                             "Turing), so mixed precision with float16 is the way onto them.";
        const std::string how = training ? "Train" : "Run";
        if (ampere) {
            f.fix = how + " with automatic mixed precision in bfloat16 (torch.autocast" +
                    (training ? "; no GradScaler needed" : "") +
                    "), and allow TF32 for the FP32 matrix multiplies that remain.";
            f.snippet =
                "with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n" +
                std::string(training ? "    loss = criterion(model(x), y)\nloss.backward()\n"
                                     : "    out = model(x)\n") +
                "torch.set_float32_matmul_precision(\"high\")   # TF32 matmuls (= "
                "backends.cuda.matmul.allow_tf32)\n"
                "torch.backends.cudnn.allow_tf32 = True           # and convolutions (the default)";
        } else if (gen.amd) {
            f.fix = how + " with automatic mixed precision (torch.autocast with bfloat16 or "
                          "float16) so the matrix multiplies use the Matrix Cores.";
            f.snippet = "with torch.autocast(\"cuda\", dtype=torch.bfloat16):   # ROCm too\n" +
                        std::string(training ? "    loss = criterion(model(x), y)\nloss.backward()"
                                             : "    out = model(x)");
        } else {
            f.fix = how + " with automatic mixed precision in float16 (torch.autocast" +
                    (training ? " with a GradScaler" : "") +
                    "): on this GPU's Tensor Cores only FP16 runs; bfloat16 and TF32 need "
                    "Ampere (compute capability " +
                    saidConstant(f, "8.0", "Ampere's compute capability") + ") or newer.";
            f.snippet = training ? "scaler = torch.cuda.amp.GradScaler()\n"
                                   "with torch.autocast(\"cuda\", dtype=torch.float16):\n"
                                   "    loss = criterion(model(x), y)\n"
                                   "scaler.scale(loss).backward(); scaler.step(optimizer); "
                                   "scaler.update()"
                                 : "with torch.autocast(\"cuda\", dtype=torch.float16):\n"
                                   "    out = model(x)";
        }
        // Names alone are a guess: lower confidence, never high (analyze() caps it).
        f.confidence = typesSay ? 0.8 : 0.5;
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
        const ClaimParams comm = ClaimParams().device(dev.device).str("class", "comm");
        const ClaimParams exp = ClaimParams().device(dev.device).str("class", "comm_exposed");
        f.explanation =
            "Collective kernels ran " + saidNs(f, d->commNs, "kernel_ns", comm) + ", of which " +
            saidNs(f, exposed, "kernel_ns", exp) + " (" +
            saidShare(f, double(exposed) / double(d->commNs), "kernel_ns", exp, "kernel_ns", comm) +
            ") did not overlap any compute kernel. A collective kernel runs from when this rank "
            "enters it until every rank has: its time is the transfer and the wait for the last "
            "rank to arrive, which one rank's trace cannot tell apart. Analyse the ranks together "
            "(a folder of all ranks) to see whether this rank waits for a straggler.";
        if (hasBackward(c)) {
            f.fix =
                "When the ranks wait for a straggler, remove the straggler's stall first (its own "
                "findings). Otherwise let DDP overlap gradient reduction with backward (bucket "
                "sizes, "
                "gradient_as_bucket_view), accumulate gradients to communicate less often, or "
                "shard "
                "with FSDP and prefetching.";
            f.snippet =
                "model = torch.nn.parallel.DistributedDataParallel(\n"
                "    model, device_ids=[rank], bucket_cap_mb=50, gradient_as_bucket_view=True)\n"
                "with model.no_sync():            # accumulate without reducing\n"
                "    criterion(model(x), y).backward()";
        } else {
            f.fix =
                "When the ranks wait for a straggler, remove the straggler's stall first (its own "
                "findings). Otherwise issue the collectives asynchronously and overlap them with "
                "independent compute (async_op=True, then wait() where the result is needed), or "
                "split the model over fewer ranks so less is communicated.";
            f.snippet = "work = torch.distributed.all_reduce(t, async_op=True)\n"
                        "y = independent_compute(x)       # runs while the collective does\n"
                        "work.wait()";
        }
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
        const ClaimParams mp = ClaimParams().device(p.id);
        f.explanation =
            "The caching allocator reserved up to " +
            said(f, std::to_string(peak / (1 << 20)) + " MiB", "memory_peak", mp, double(peak)) +
            " (" +
            saidShare(f, share, "memory_peak", mp, "device_prop",
                      ClaimParams().device(p.id).str("field", "totalGlobalMem")) +
            " of the GPU's memory): allocations start to fail and retry (cudaFree + "
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
