#!/usr/bin/env python3
"""Write a SYNTHETIC TensorBoard log folder: several captures of one worker, as
torch.profiler's tensorboard_trace_handler writes them ({worker}.{epoch_ms}.pt.trace.json).

    make_capture_series.py OUT_FOLDER [--worker NAME] [--captures KINDS] [--seed S]

KINDS has a letter per capture, in time order (default "WWSS"):

  W  warm-up: a torch.compile'd CNN's first steps — the first capture compiles the forward and
     backward graphs (dynamo/inductor phases, ~0.5-0.9 s with the GPU idle), creates streams and
     cuBLAS/cuDNN handles, grows the caching allocator and loads each kernel's module at its
     first launch; a later W capture recompiles for a new input shape. The step that follows the
     one-off work runs as a steady one, so the warm-up is most of the capture, not all of it.
  S  steady: ProfilerSteps of the same model, the GPU busy most of each step (a short DataLoader
     wait and the loss.item() sync between steps).

Captures are 30 s apart; ProfilerStep numbers follow a schedule of 4 steps per cycle. Made for
the GUI's capture picker screenshot (docs/screenshots/capture-series.png) and for trying
`stallscope-cli analyze OUT_FOLDER`; the files say they are synthetic ("stallscope" metadata).
Deterministic for a seed. Python 3 standard library only.
"""
import argparse
import json
import os
import random

CPU_PID = 31337
MAIN_TID = 31337
BWD_TID = 31402
GPU = 0
STREAM = 7
EPOCH_US = 1_714_000_000_000_000  # the first capture's first event (2024-04-24, us)

DEVICE = {
    "id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
    "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
    "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936, "numSms": 108,
    "sharedMemPerBlockOptin": 166912,
}

# One block of the model: (forward kernels, backward kernels), microseconds at batch 128.
CONV_FWD = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
CONV_DGRAD = "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
CONV_WGRAD = "sm80_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
BLOCKS = 10


class Trace:
    def __init__(self, rng):
        self.rng = rng
        self.events = []
        self.corr = 0
        self.ext = 0
        self.tg = 0  # when the GPU stream is free

    def cpu(self, name, ts, dur, tid=MAIN_TID, cat="cpu_op"):
        self.ext += 1
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": CPU_PID, "tid": tid,
                            "ts": ts, "dur": max(1, dur), "args": {"External id": self.ext}})

    def runtime(self, name, ts, dur, tid=MAIN_TID, corr=0):
        if not corr:  # every runtime call has a correlation id of its own, as CUPTI gives it
            self.corr += 1
            corr = self.corr
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": CPU_PID,
                            "tid": tid, "ts": ts, "dur": max(1, dur),
                            "args": {"correlation": corr, "External id": self.ext}})

    def gpu(self, cat, name, ts, dur, corr, extra=None):
        args = {"device": GPU, "stream": STREAM, "correlation": corr, "External id": self.ext}
        args.update(extra or {})
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": GPU, "tid": STREAM,
                            "ts": ts, "dur": max(1, dur), "args": args})

    def launch(self, kernel, ts, dur_us, tid, call="cudaLaunchKernel", call_us=6, blocks=4.0):
        """A launch call at ts and its kernel when the stream is free; returns the call's end."""
        self.corr += 1
        self.runtime(call, ts, call_us, tid, self.corr)
        start = max(self.tg, ts + call_us + 4)
        self.gpu("kernel", kernel, start, dur_us, self.corr,
                 {"blocks per SM": blocks, "est. achieved occupancy %": 50})
        self.tg = start + dur_us
        return ts + call_us

    def op(self, chain, kernels, t, tid=MAIN_TID, first=None):
        """Nested CPU ops (outermost first) launching `kernels` [(name, us)] from the innermost;
        `first` gives a kernel's first-launch time (its module loaded then). Returns the end."""
        depth = len(chain)
        inner = t + 4 * depth
        for name, us in kernels:
            call_us = 6
            if first is not None and name not in first:
                first[name] = True
                call_us = self.rng.randint(2500, 6000)  # lazy module load at the first launch
            inner = self.launch(name, inner + 3, self.jitter(us), tid,
                                "cuLaunchKernel" if name.startswith("triton_") else "cudaLaunchKernel",
                                call_us) + 2
        end = inner + 3 * depth
        for k, name in enumerate(chain):
            self.cpu(name, t + 4 * k, end - (t + 4 * k) - 3 * k, tid)
        return end + self.rng.randint(8, 20)

    def jitter(self, us):
        return int(us * self.rng.uniform(0.97, 1.03))

    def annotation(self, name, ts, dur, tid=MAIN_TID):
        self.cpu(name, ts, dur, tid, "user_annotation")


def forward(tr, t, region, first):
    tr.annotation("Torch-Compiled Region: %s" % region, t, 0)  # resized below
    mark = len(tr.events) - 1
    start = t
    t += 6
    for b in range(BLOCKS):
        t = tr.op(["aten::convolution", "aten::_convolution", "aten::cudnn_convolution"],
                  [(CONV_FWD, 420 + 30 * (b % 3))], t, first=first)
        t = tr.op(["CompiledFunction"], [("triton_per_fused__native_batch_norm_legit_functional_relu_%d" % b, 95)],
                  t, first=first)
    t = tr.op(["aten::addmm"], [("ampere_sgemm_128x64_tn", 160)], t, first=first)
    t = tr.op(["CompiledFunction"], [("triton_per_fused__log_softmax_nll_loss_forward_0", 35)], t, first=first)
    tr.events[mark]["dur"] = t - start
    return t + 10


def backward(tr, t, first):
    t0 = t
    for b in reversed(range(BLOCKS)):
        t = tr.op(["autograd::engine::evaluate_function: CompiledFunctionBackward", "CompiledFunctionBackward"],
                  [("triton_per_fused_native_batch_norm_backward_threshold_backward_%d" % b, 150)],
                  t, BWD_TID, first)
        t = tr.op(["autograd::engine::evaluate_function: ConvolutionBackward0", "ConvolutionBackward0",
                   "aten::convolution_backward"],
                  [(CONV_DGRAD, 430 + 20 * (b % 3)), (CONV_WGRAD, 470)], t, BWD_TID, first)
    return t, t - t0


def optimizer(tr, t, first):
    tr.annotation("Optimizer.step#SGD.step", t, 0)
    mark = len(tr.events) - 1
    s = t
    for _ in range(3):
        t = tr.op(["aten::_foreach_add_"],
                  [("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 3, 2, 0>, std::plus<float>, float>", 210)],
                  t, first=first)
    tr.events[mark]["dur"] = t - s
    return t + 20


def step(tr, n, t, one_off=None, region="0/0", first=None):
    """One ProfilerStep from t; `one_off(t)` adds one-off work at its start. Returns its end."""
    tr.annotation("ProfilerStep#%d" % n, t, 0)
    mark = len(tr.events) - 1
    s = t
    # The next batch: a short wait on the DataLoader's workers, then a pinned copy.
    tr.cpu("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t, tr.rng.randint(1500, 2100))
    t = tr.events[-1]["ts"] + tr.events[-1]["dur"] + 15
    if one_off:
        t = one_off(t)
    tr.cpu("aten::to", t, 30)
    tr.corr += 1
    tr.runtime("cudaMemcpyAsync", t + 8, 12, MAIN_TID, tr.corr)
    cstart = max(tr.tg, t + 24)
    tr.gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", cstart, 310, tr.corr, {"bytes": 77070336})
    tr.tg = cstart + 310
    t += 40
    t = forward(tr, t, region, first)
    tr.cpu("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", t, 8)
    tr.cpu("aten::ones_like", t + 10, 14)
    bwd_end, _ = backward(tr, t + 30, first)
    tr.cpu("aten::empty", t + 30, 4)  # the main thread waits for the backward
    t = optimizer(tr, bwd_end + 15, first)
    # loss.item(): waits for the GPU queue to drain.
    tr.cpu("aten::item", t, max(30, tr.tg - t + 40))
    tr.cpu("aten::_local_scalar_dense", t + 3, max(25, tr.tg - t + 32))
    tr.corr += 1
    call_end = max(t + 20, tr.tg + 25)
    tr.runtime("cudaMemcpyAsync", t + 6, call_end - (t + 6), MAIN_TID, tr.corr)
    tr.gpu("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", max(tr.tg, call_end - 12), 3, tr.corr,
           {"bytes": 4})
    tr.tg = max(tr.tg, call_end - 12) + 3
    t = call_end + 30
    tr.events[mark]["dur"] = t - s
    return t


def compile_work(tr, t, recompile):
    """Dynamo traces, AOTAutograd splits, Inductor compiles: the GPU idles meanwhile."""
    total = tr.rng.randint(520_000, 640_000) if recompile else tr.rng.randint(780_000, 900_000)
    tr.annotation("_compile.compile_inner (dynamo_timed)", t, total)
    tr.annotation("OutputGraph.call_user_compiler (dynamo_timed)", t + 40_000, total - 60_000)
    tr.annotation("compile_fx.<locals>.fw_compiler_base (dynamo_timed)", t + 90_000, int(total * 0.45))
    if not recompile:
        tr.annotation("compile_fx.<locals>.bw_compiler (dynamo_timed)", t + 120_000 + int(total * 0.45),
                      int(total * 0.35))
    return t + total + 50


def setup_work(tr, t):
    """Streams, events, library handles and the caching allocator's first segments."""
    for name, us in [("cudaStreamCreateWithFlags", 1900), ("cudaEventCreateWithFlags", 40),
                     ("cudaEventCreateWithFlags", 35), ("cublasCreate_v2", 61_000),
                     ("cudnnCreate", 142_000), ("cudaMalloc", 9_800), ("cudaMalloc", 11_200),
                     ("cudaMalloc", 7_400), ("cudaMalloc", 12_900)]:
        tr.runtime(name, t, us)
        t += us + 25
    return t + 40


def capture(kind, index, first_step, rng):
    tr = Trace(rng)
    t = EPOCH_US + index * 30_000_000
    tr.tg = t
    first = {} if kind == "W" else None  # first launches load modules in a warm-up capture
    if kind == "W":
        recompile = index > 0
        one_off = (lambda x: compile_work(tr, x, True)) if recompile else \
                  (lambda x: compile_work(tr, setup_work(tr, x), False))
        t = step(tr, first_step, t, one_off, "0/1" if recompile else "0/0", first)
        t = step(tr, first_step + 1, t, None, "0/1" if recompile else "0/0", first)
    else:
        for k in range(4):
            t = step(tr, first_step + k, t)
    meta = [
        {"name": "process_name", "ph": "M", "ts": EPOCH_US, "pid": CPU_PID, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "ts": EPOCH_US, "pid": CPU_PID, "tid": MAIN_TID,
         "args": {"name": "thread %d (python3)" % MAIN_TID}},
        {"name": "thread_name", "ph": "M", "ts": EPOCH_US, "pid": CPU_PID, "tid": BWD_TID,
         "args": {"name": "thread %d (pt_autograd_0)" % BWD_TID}},
        {"name": "process_name", "ph": "M", "ts": EPOCH_US, "pid": GPU, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": EPOCH_US, "pid": GPU, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": EPOCH_US, "pid": GPU, "tid": STREAM, "args": {"name": "stream 7"}},
    ]
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [DEVICE],
        "stallscope": {"synthetic": True, "generator": "tests/tools/make_capture_series.py",
                       "note": "synthetic %s capture of a torch.compile'd CNN" %
                               ("warm-up" if kind == "W" else "steady")},
        "traceEvents": meta + sorted(tr.events, key=lambda e: (e["ts"], -e.get("dur", 0))),
        "traceName": "",
    }
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", help="the folder to write (created)")
    ap.add_argument("--worker", default="trainer-0_31337", help="worker name (default %(default)s)")
    ap.add_argument("--captures", default="WWSS", help="W/S per capture (default %(default)s)")
    ap.add_argument("--seed", type=int, default=25)
    a = ap.parse_args()
    if not a.captures or set(a.captures) - set("WS"):
        ap.error("--captures takes W and S letters")
    rng = random.Random(a.seed)
    os.makedirs(a.output, exist_ok=True)
    for i, kind in enumerate(a.captures):
        doc = capture(kind, i, 1 + 4 * i, rng)
        ms = (EPOCH_US + i * 30_000_000) // 1000
        name = "%s.%d.pt.trace.json" % (a.worker, ms)
        doc["traceName"] = name
        with open(os.path.join(a.output, name), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
    print("wrote %d captures to %s" % (len(a.captures), a.output))


if __name__ == "__main__":
    main()
