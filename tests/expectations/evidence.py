#!/usr/bin/env python3
"""Independent evidence for tests/expectations/expectations.tsv.

Reads every PyTorch profiler trace under a folder with the Python standard library only
(gzip + json) and computes, per trace, the figures the expectations rest on. Nothing here
uses Stallscope or its definitions beyond the plain words of docs/analysis.md ("share of the
window", "GPU idle"); it is a second, deliberately simpler reading of the same JSON.

    evidence.py [--traces DIR] [--json] [FILE...]

Without FILE it reads every *.json / *.json.gz under DIR (default ../shared/traces relative to
the repository root); FILE arguments are paths relative to DIR. Prints one block per trace (or
one JSON object per trace with --json). Exit 77 when DIR is missing (CTest's skip code).
Takes about 20 s for the whole corpus on one core.

Figures (all "share" figures are fractions of the window, printed as %):

  window     steps: first ProfilerStep#N start -> last step end, extended to the end of GPU
             work whose launch call started inside the steps; no steps: first -> last GPU
             work; no GPU work: first -> last event.
  device     the GPU (pid of kernels/copies/memsets) with the most busy time in the window.
  util       union of that device's kernels, copies and memsets inside the window / window.
  idle       1 - util.
  gpu_wait   idle time in which the work that ends the gap had already been enqueued (its
             launch call had returned): the GPU waited for something other than the host
             (event waits, other streams, collectives). HTA calls the complement "host wait".
  host_wait  idle - gpu_wait: the GPU had nothing queued, it waited for the host.
  Host-side figures are measured on the thread that launched the work ending each gap (the
  main thread for the trailing gap), intersected with the idle time:
    dl         inside a DataLoader range (enumerate(DataLoader)#..., enumerate(DataPipe)#...,
               ...DataLoaderIter.__next__)
    sync       inside a synchronising call (cuda/hip Device/Stream/Event Synchronize,
               cuStreamSynchronize, aten::item, aten::_local_scalar_dense) or inside a
               copy call whose copy goes device-to-host synchronously (cudaMemcpy,
               hipMemcpyWithStream, ... whose copy is DtoH, or an async call of a DtoH copy
               to pageable memory, which blocks like a synchronous one)
    h2d        inside a copy call whose copy goes host-to-device synchronously or from
               pageable memory (blocks the host until the copy is staged)
    log        inside logging/checkpoint code (torch.save, serialization, pickle, logging,
               print, SummaryWriter, wandb, mlflow, checkpoint)
    alloc      inside allocation / free calls (cudaMalloc*, cudaFree*, hipMalloc*, hipFree*, ...)
    setup      inside resource creation, module loading, capture calls, or a slow first use (the
               first launch of a kernel, or the first call of another runtime name, >= 1 ms)
    jit        inside torch.compile phases, NVRTC / cuDNN find calls, or a TorchScript fusion
               group that holds the host (>= 1 ms, launches under a tenth of it)
    dispatch   host_wait not covered by the seven above: launch calls, CPU operators,
               optimizer on the CPU, Python between operators, untraced time
  comm_exp   communication kernels (nccl/rccl/hccl names) not overlapped by other kernels.
  mm32       matrix-multiply/convolution kernels whose names say FP32 without Tensor/Matrix
             cores (sgemm, scudnn, implicit_convolve_sgemm, <float ...> conv engines,
             gemv/gemm templates on float, Tensile _SB_) as a share of busy time; mmtc the
             same for names that say Tensor/Matrix cores (h884, s1688, xmma, tensorop, tf32,
             bf16, wgmma, MFMA types _HHS_/_BBS_, mxfp4, ...). cc = computeMajor.
  compile    torch.compile compilation inside the window (dynamo_timed, compile_fx, autotune
             events and the Python frames of dynamo's convert_frame / inductor's compile_fx)
             as a share of the window; regions = "Torch-Compiled Region: N/M" names: max
             frames per step and max M (M >= 1 means a recompilation).
  capture    launch calls inside a stream's Begin/EndCapture pair / launch calls in the
             window; getcapinfo = number of *StreamGetCaptureInfo calls.
  mem        peak "Total Reserved" of [memory] events / totalGlobalMem of the device.
  cpu-only   no kernel/copy/memset at all; the step thread's DataLoader share of the window.
  pageable   number of HtoD copies from pageable memory and their GPU time share.
  launches   launch calls (kernel/graph launches, async copies/memsets) in the window.
  warm-up    leading steps whose one-off idle (setup + jit, alloc when the last step has under a
             tenth of it) is >= 25 % of the step; without steps, the leading stretch one-off idle
             covers by half, when >= 5 % of the window.

The script also prints "indep ranking": the figures that map to a timing finding kind
(data_loading=dl, host_sync=sync, blocking_h2d_copy=h2d + pageable GPU time,
cpu_dispatch=dispatch, comm_exposed=comm_exp, no_tensor_cores=mm32*busy/2 when cc >= 7,
logging_checkpoint=log, gpu_not_used=1 without GPU work), largest first. It is a reading
aid for docs/expectations.md, not a re-implementation of Stallscope's rules.
"""
import argparse
import bisect
import gzip
import json
import os
import re
import sys
from collections import Counter, defaultdict

GPU_CATS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
            "gpu_memset": "memset", "Memset": "memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "Driver"}
NOT_CPU_CATS = {"Trace", "gpu_user_annotation", "cuda_sync", "ac2g", "fwdbwd", "flow",
                "async_cpu_to_gpu", "cuda_profiler_range"}

STEP_RE = re.compile(r"^ProfilerStep#\d+$")
DL_RE = re.compile(r"enumerate\(DataLoader\)|enumerate\(DataPipe\)|DataLoaderIter\.__next__")
SYNC_RE = re.compile(r"^(cuda|hip)(Device|Stream|Event|Ctx)Synchronize|^cu(Stream|Ctx|Event)Synchronize"
                     r"|^aten::item$|^aten::_local_scalar_dense$")
# synchronous copy calls (not ...Async)
SYNC_COPY_RE = re.compile(r"^(cudaMemcpy|hipMemcpy|hipMemcpyWithStream|cudaMemcpy2D|hipMemcpy2D"
                          r"|cuMemcpy(DtoH|HtoD|DtoD)?(_v2)?|hipMemcpy(DtoH|HtoD|DtoD))$")
ASYNC_COPY_RE = re.compile(r"Memcpy.*Async")
LAUNCH_RE = re.compile(r"LaunchKernel|LaunchCooperativeKernel|GraphLaunch|cuLaunch|MemcpyAsync"
                       r"|MemsetAsync|ModuleLaunchKernel")
LOG_RE = re.compile(r"torch/serialization\.py|torch\.save|pickle|logging/__init__\.py\(\d+\): "
                    r"(info|warning|log|_log|emit)|SummaryWriter|tensorboard|wandb|mlflow"
                    r"|checkpoint|<built-in function print>|builtins\.print", re.I)
BEGIN_CAPTURE_RE = re.compile(r"StreamBeginCapture")
END_CAPTURE_RE = re.compile(r"StreamEndCapture")
COMM_RE = re.compile(r"nccl|rccl|hccl", re.I)
COMPILE_RE = re.compile(r"dynamo_timed|^compile_fx|^autotune|^inductor_compile|^OutputGraph\.call_user_compiler"
                        r"|torch/_dynamo/convert_frame\.py\(\d+\): (_compile|compile_inner|_convert_frame)"
                        r"|torch/_inductor/compile_fx\.py\(\d+\): (compile_fx|fx_codegen_and_compile|compile_fx_inner)$"
                        r"|select_algorithm\.py\(\d+\): autotune")
REGION_RE = re.compile(r"^Torch-Compiled Region: (\d+)/(\d+)")
# One-off host work (issue 25), from the CUDA/HIP API references' names, written here apart
# from Stallscope's call catalogue: allocation and free; resource creation and module loading;
# run-time code generation (NVRTC, cuDNN/MIOpen find, TorchScript fusion groups).
ALLOC_RE = re.compile(r"^(cuda|hip)(Malloc|Free|HostAlloc|HostMalloc|HostFree|HostRegister|HostUnregister)"
                      r"|^hipExtMallocWithFlags|^cuMem(Alloc|Free|Create|Release|Map|Unmap|AddressReserve"
                      r"|AddressFree|SetAccess|HostAlloc|HostRegister)")
SETUP_RE = re.compile(r"^(cuda|hip|cu)(Stream|Event)(Create|Destroy)|^(cuda|hip)Graph(Exec)?Destroy"
                      r"|^cu(Module|Library)(Load|Unload|Get)|^hipModule(Load|Unload|Get)|^cudaGetFuncBySymbol"
                      r"|^(cublas|cublasLt|cudnn|hipblas|hipblasLt|miopen)Create|^rocblas_create_handle"
                      r"|^cuCtxCreate|^cuInit|^(cuda|hip)SetDevice|StreamBeginCapture|StreamEndCapture"
                      r"|GraphInstantiate")
JIT_RE = re.compile(r"^nvrtc|^hiprtc|^cuLink|^cudnnFind|^miopenFind")
FUSION_RE = re.compile(r"^prim::(FusionGroup|TensorExprGroup|CudaFusionGroup|FallbackGraph)|^fallback_function$")
SLOW_FIRST_US = 1000.0
# matrix multiply / convolution kernels by name
MM_RE = re.compile(r"gemm|gemv|Cijk_|xmma|wgmma|tensorop|scudnn|hcudnn|convolve|wgrad|dgrad|fprop"
                   r"|matmul|fft2d|_mma_|nvjet|cutlass", re.I)
# names that say Tensor-Core / Matrix-Core instructions
TC_RE = re.compile(r"h884|s884|h1688|s1688|h16816|s16816|i8816|hmma|xmma|tensorop|tensor\d+x\d+x\d+"
                   r"|wgmma|tf32|bf16|fp16|_f16|_HHS_|_BBS_|_HSS_|_BSS_|_4xi8|mxfp4|fp8|e4m3|e5m2"
                   r"|tcgen05|nvjet|gmma|mfma", re.I)
# names that say FP32 arithmetic without Tensor Cores
FP32_RE = re.compile(r"sgemm|scudnn|implicit_convolve_sgemm|gcgemm|<float,|gemv\w*<[^>]*float"
                     r"|gemmk1_kernel<int, float|gemmSN_\w+<float|_SB_|fft2d_\w+<float", re.I)


# ---------------------------------------------------------------- intervals (sorted, merged)

def merge(iv):
    iv = sorted((s, e) for s, e in iv if e > s)
    out = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def total(iv):
    return sum(e - s for s, e in iv)


def intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a, b):
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append([cur, e])
    return out


def clip(iv, lo, hi):
    return [[max(s, lo), min(e, hi)] for s, e in iv if min(e, hi) > max(s, lo)]


def flatten(slices):
    """Slices (start, end, label) of one thread -> non-overlapping (start, end, label) segments
    labelled with the innermost slice; a child sticking out of its parent is cut at the parent's end."""
    segs, stack, t = [], [], None
    for s, e, lab in sorted(slices, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][1] <= s:
            top = stack.pop()
            if top[1] > t:
                segs.append((t, top[1], top[2]))
                t = top[1]
        if stack and t is not None and s > t:
            segs.append((t, s, stack[-1][2]))
        if stack:
            e = min(e, stack[-1][1])
        t = s if t is None else max(t, s)
        if e > s:
            stack.append((s, e, lab))
    while stack:
        top = stack.pop()
        if top[1] > t:
            segs.append((t, top[1], top[2]))
            t = top[1]
    return segs


def label_time(intervals, segs):
    """Time of merged intervals covered by each segment label; the rest under '(no slice)'."""
    out, j = Counter(), 0
    for s, e in intervals:
        covered = 0.0
        while j < len(segs) and segs[j][1] <= s:
            j += 1
        k = j
        while k < len(segs) and segs[k][0] < e:
            d = min(e, segs[k][1]) - max(s, segs[k][0])
            if d > 0:
                out[segs[k][2]] += d
                covered += d
            k += 1
        out["(no slice: Python or untraced)"] += (e - s) - covered
    return out


# ---------------------------------------------------------------- loading

def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    if isinstance(doc, list):
        return doc, {}
    return doc.get("traceEvents", []), doc


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def trace_files(root):
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".json") or f.endswith(".json.gz"):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


# ---------------------------------------------------------------- the figures

def slice_label(c):
    name, cat = c[2], c[6]
    if cat in RUNTIME_CATS:
        return ("launch: " if LAUNCH_RE.search(name) else "runtime: ") + name
    if cat == "python_function":
        return "python: " + name[:80]
    if STEP_RE.match(name):
        return "(inside ProfilerStep only)"
    if cat == "user_annotation" or name.startswith("## "):
        return "annotation: " + re.sub(r"#\d+", "#N", name)[:80]
    return "op: " + re.sub(r"#\d+", "#N", name)[:80]


def analyze(path):
    events, doc = load(path)
    gpu, runtime, cpu, instants = [], [], [], []
    for e in events:
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        if ph == "i" or ph == "I":
            if e.get("name") == "[memory]":
                instants.append(e)
            continue
        if ph != "X":
            continue
        ts, dur = num(e.get("ts")), num(e.get("dur"))
        if ts is None:
            continue
        dur = max(dur or 0.0, 0.0)
        cat = e.get("cat")
        name = e.get("name") if isinstance(e.get("name"), str) else ""
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        rec = (ts, ts + dur, name, e.get("pid"), str(e.get("tid")), args, cat)
        if cat in GPU_CATS:
            gpu.append(rec)
        elif cat in RUNTIME_CATS:
            runtime.append(rec)
        elif cat not in NOT_CPU_CATS:
            cpu.append(rec)

    r = {"path": path, "events": len(events), "gpu_events": len(gpu),
         "kernels": sum(1 for g in gpu if GPU_CATS[g[6]] == "kernel")}

    # ---- steps and window
    steps = sorted((c[0], c[1], c[3], c[4]) for c in cpu if STEP_RE.match(c[2]))
    r["steps"] = len(steps)
    rec_end = [num(e.get("ts")) for e in events if isinstance(e, dict) and e.get("name") == "Record Window End"]
    rec_end = [t for t in rec_end if t is not None]
    corr_launch = {}
    for rt in runtime:
        c = rt[5].get("correlation")
        if c is not None:
            corr_launch[c] = rt
    if steps:
        ws, we = steps[0][0], max(s[1] for s in steps)
        last = we
        for g in gpu:
            lt = corr_launch.get(g[5].get("correlation"))
            if lt is not None and ws <= lt[0] <= last:
                we = max(we, g[1])
        step_thread = Counter((s[2], s[3]) for s in steps).most_common(1)[0][0]
    elif gpu:
        ws, we = min(g[0] for g in gpu), max(g[1] for g in gpu)
        step_thread = None
    else:
        allx = cpu + runtime
        ws, we = (min(c[0] for c in allx), max(c[1] for c in allx)) if allx else (0.0, 0.0)
        step_thread = None
    win = we - ws
    r["window_ms"] = win / 1000.0
    r["window_kind"] = "steps" if steps else ("gpu span" if gpu else "whole trace")
    share = (lambda x: x / win if win > 0 else 0.0)
    r["after_record_end"] = share(max(0.0, we - max(rec_end[0], ws))) if rec_end else 0.0

    # ---- slow first uses: the first launch of each kernel (by the name of the work it
    # started) and the first call of each other non-copy, non-sync, non-alloc runtime name,
    # when it took >= 1 ms
    gpu_by_corr = {}
    for g in gpu:
        gpu_by_corr.setdefault(g[5].get("correlation"), g)
    first = {}
    for rt in sorted(runtime, key=lambda x: x[0]):
        name = rt[2]
        if LAUNCH_RE.search(name) and not ASYNC_COPY_RE.search(name) and "Memset" not in name:
            g = gpu_by_corr.get(rt[5].get("correlation"))
            if g is None:
                continue
            key = ("k", g[2])
        elif (SYNC_RE.match(name) or SYNC_COPY_RE.match(name) or ASYNC_COPY_RE.search(name)
              or ALLOC_RE.search(name) or SETUP_RE.search(name) or JIT_RE.search(name)
              or LAUNCH_RE.search(name) or "StreamWaitEvent" in name or "EventRecord" in name):
            continue
        else:
            key = ("c", name)
        first.setdefault(key, rt)
    slow_first = {(rt[0], rt[2], rt[3], rt[4]) for rt in first.values() if rt[1] - rt[0] >= SLOW_FIRST_US}

    # ---- launches, capture
    launches = [rt for rt in runtime if LAUNCH_RE.search(rt[2]) and ws <= rt[0] <= we]
    r["launches"] = len(launches)
    r["getcapinfo"] = sum(1 for rt in runtime if "StreamGetCaptureInfo" in rt[2])
    cap = defaultdict(list)
    open_cap = {}
    for rt in sorted(runtime, key=lambda x: x[0]):
        th = (rt[3], rt[4])
        if BEGIN_CAPTURE_RE.search(rt[2]):
            open_cap[th] = rt[0]
        elif END_CAPTURE_RE.search(rt[2]) and th in open_cap:
            cap[th].append([open_cap.pop(th), rt[1]])
    for th, s in open_cap.items():
        cap[th].append([s, we])
    inside = 0
    for rt in launches:
        for s, e in cap.get((rt[3], rt[4]), []):
            if s <= rt[0] <= e:
                inside += 1
                break
    r["capture_share"] = inside / len(launches) if launches else 0.0
    r["capture_launches"] = inside
    r["capture_pairs"] = sum(len(v) for v in cap.values())

    # ---- compile
    comp = merge([[c[0], c[1]] for c in cpu if COMPILE_RE.search(c[2])])
    r["compile_share"] = share(total(clip(comp, ws, we)))
    regions = [(c[0], REGION_RE.match(c[2])) for c in cpu]
    regions = [(t, int(m.group(1)), int(m.group(2))) for t, m in regions if m]
    r["regions"] = len(regions)
    r["recompile_max"] = max((m for _, _, m in regions), default=None)
    frames = 0
    if regions and steps:
        for s in steps:
            frames = max(frames, len({f for t, f, _ in regions if s[0] <= t < s[1]}))
    elif regions:
        frames = len({f for _, f, _ in regions})
    r["frames_per_step_max"] = frames

    # ---- device and busy
    props = {}
    for p in (doc.get("deviceProperties") or []):
        if isinstance(p, dict) and "id" in p:
            props[p["id"]] = p
    r["cc"] = None
    if not gpu:
        r["device"] = None
        r["util"] = 0.0
        r["cpu_only"] = True
        r["runtime_calls"] = len(runtime)
        r["kernel_launch_calls"] = sum(1 for rt in runtime if re.search(r"LaunchKernel|cuLaunch", rt[2]))
        r["profiler_ranges"] = sum(1 for e in events if isinstance(e, dict)
                                   and e.get("cat") == "cuda_profiler_range")
        th = step_thread
        dl = merge([[c[0], c[1]] for c in cpu if DL_RE.search(c[2]) and (th is None or (c[3], c[4]) == th)])
        r["cpu_dl_share"] = share(total(clip(dl, ws, we)))
        r["ranking"] = [("gpu_not_used", 1.0)]
        return r
    r["cpu_only"] = False
    by_dev = defaultdict(list)
    for g in gpu:
        by_dev[g[3]].append(g)
    busy_by_dev = {d: merge(clip([[g[0], g[1]] for g in gs], ws, we)) for d, gs in by_dev.items()}
    dev = max(busy_by_dev, key=lambda d: total(busy_by_dev[d]))
    r["device"] = dev
    dgpu = sorted(by_dev[dev], key=lambda g: g[0])
    busy = busy_by_dev[dev]
    r["util"] = share(total(busy))
    dprops = props.get(dev) or (next(iter(props.values())) if len(props) == 1 else None)
    if dprops:
        r["cc"] = dprops.get("computeMajor")
        r["gpu_name"] = dprops.get("name")

    # ---- idle gaps, split at the moment the ending work was enqueued
    gaps = subtract([[ws, we]], busy)
    starts = [g[0] for g in dgpu]
    launch_threads = Counter()
    for g in dgpu:
        lt = corr_launch.get(g[5].get("correlation"))
        if lt is not None:
            launch_threads[(lt[3], lt[4])] += 1
    main_thread = launch_threads.most_common(1)[0][0] if launch_threads else step_thread
    host_part = defaultdict(list)   # thread -> host-wait intervals
    all_part = defaultdict(list)    # thread -> whole gaps (for the blocking-call figures)
    gpu_wait = 0.0
    for s, e in gaps:
        th, enq = main_thread, None
        if e < we:
            k = bisect.bisect_left(starts, e)
            while k < len(dgpu) and dgpu[k][0] == e:
                lt = corr_launch.get(dgpu[k][5].get("correlation"))
                if lt is not None:
                    th, enq = (lt[3], lt[4]), lt[1]
                    break
                k += 1
        all_part[th].append([s, e])
        if enq is not None and enq < e:
            cut = max(s, enq)
            gpu_wait += e - cut
            if cut > s:
                host_part[th].append([s, cut])
        else:
            host_part[th].append([s, e])
    idle = total(gaps)
    r["idle"] = share(idle)
    r["gpu_wait"] = share(gpu_wait)
    r["host_wait"] = share(idle - gpu_wait)

    # ---- host-side categories per thread
    copy_dir = {}
    for g in gpu:
        if GPU_CATS[g[6]] == "memcpy":
            copy_dir[g[5].get("correlation")] = g[2]
    by_thread = defaultdict(list)
    for c in cpu + runtime:
        by_thread[(c[3], c[4])].append(c)

    def copy_kind(rt):
        """'d2h' / 'h2d' for a blocking copy call, else None."""
        name = rt[2]
        gname = copy_dir.get(rt[5].get("correlation"), "")
        if SYNC_COPY_RE.match(name):
            if "DtoH" in gname or "DtoH" in name or "Device -> Host" in gname:
                return "d2h"
            if "HtoD" in gname or "HtoD" in name:
                return "h2d"
            return "d2h" if not gname else None   # DtoD sync copies still wait for the stream
        if ASYNC_COPY_RE.search(name) and "Pageable" in gname:
            return "d2h" if "DtoH" in gname else ("h2d" if "HtoD" in gname else None)
        return None

    mt = by_thread.get(main_thread, [])
    r["dl_range"] = share(total(clip(merge([[c[0], c[1]] for c in mt if DL_RE.search(c[2])]), ws, we)))
    longest = None
    for c in cpu + runtime:
        if ws <= c[0] <= we and (SYNC_RE.match(c[2]) or (c[6] in RUNTIME_CATS and copy_kind(c))):
            if longest is None or c[1] - c[0] > longest[1] - longest[0]:
                longest = c
    if longest is not None:
        cp = copy_dir.get(longest[5].get("correlation"))
        byts = next((g[5].get("bytes") for g in gpu if g[5].get("correlation") == longest[5].get("correlation")
                     and GPU_CATS[g[6]] == "memcpy"), None) if cp else None
        idle_in = total(intersect(merge([[longest[0], longest[1]]]), gaps))
        r["longest_block"] = {"name": longest[2], "ms": (longest[1] - longest[0]) / 1000.0, "copy": cp,
                              "bytes": byts, "gpu_idle_share_of_call": idle_in / (longest[1] - longest[0])
                              if longest[1] > longest[0] else 0.0}
    else:
        r["longest_block"] = None
    cat_tot = Counter()
    dispatch_names = Counter()
    for th in set(all_part) | set(host_part):
        sl = by_thread.get(th, [])
        def fusion_holds(c):
            if not FUSION_RE.search(c[2]) or c[1] - c[0] < 1000.0:
                return False
            inner = sum(x[1] - x[0] for x in sl if x[6] in RUNTIME_CATS and LAUNCH_RE.search(x[2])
                        and c[0] <= x[0] < c[1])
            return 10 * inner < c[1] - c[0]
        cats = {
            "dl": merge([[c[0], c[1]] for c in sl if DL_RE.search(c[2])]),
            "sync": merge([[c[0], c[1]] for c in sl if SYNC_RE.match(c[2])
                           or (c[6] in RUNTIME_CATS and copy_kind(c) == "d2h")]),
            "h2d": merge([[c[0], c[1]] for c in sl if c[6] in RUNTIME_CATS and copy_kind(c) == "h2d"]),
            "log": merge([[c[0], c[1]] for c in sl if LOG_RE.search(c[2])]),
            "alloc": merge([[c[0], c[1]] for c in sl if c[6] in RUNTIME_CATS and ALLOC_RE.search(c[2])]),
            "setup": merge([[c[0], c[1]] for c in sl if c[6] in RUNTIME_CATS and (
                SETUP_RE.search(c[2]) or (c[0], c[2], c[3], c[4]) in slow_first)]),
            "jit": merge([[c[0], c[1]] for c in sl if COMPILE_RE.search(c[2]) or (
                c[6] in RUNTIME_CATS and JIT_RE.search(c[2])) or fusion_holds(c)]),
        }
        whole = merge(all_part[th])
        rest = merge(host_part[th])
        for k in ("dl", "sync", "h2d", "log", "alloc", "setup", "jit"):
            cat_tot[k] += total(intersect(subtract(whole, cats.get("_taken", [])), cats[k]))
            cats["_taken"] = merge(cats.get("_taken", []) + cats[k])
            rest = subtract(rest, cats[k])
        cat_tot["dispatch"] += total(rest)
        if rest:
            segs = flatten([(c[0], c[1], slice_label(c)) for c in sl])
            dispatch_names.update(label_time(rest, segs))
    for k in ("dl", "sync", "h2d", "log", "alloc", "setup", "jit", "dispatch"):
        r[k] = share(cat_tot[k])
    r["oneoff"] = r["alloc"] + r["setup"] + r["jit"]

    # ---- warm-up (docs/analysis.md "Warm-up", read here from the figures above): the
    # leading steps whose idle inside one-off calls (set-up, code generation; allocation when
    # the last step has under a tenth of it) is >= 25 % of the step; without steps the
    # leading stretch that one-off idle covers by half, >= 5 % of the window.
    oneoff_iv = []
    alloc_iv = []
    for th in set(all_part):
        sl = by_thread.get(th, [])
        w = merge(all_part[th])
        oneoff_iv += intersect(w, merge([[c[0], c[1]] for c in sl if c[6] in RUNTIME_CATS and (
            SETUP_RE.search(c[2]) or (c[0], c[2], c[3], c[4]) in slow_first)]
            + [[c[0], c[1]] for c in sl if COMPILE_RE.search(c[2]) or (c[6] in RUNTIME_CATS and JIT_RE.search(c[2]))]))
        alloc_iv += intersect(w, merge([[c[0], c[1]] for c in sl if c[6] in RUNTIME_CATS and ALLOC_RE.search(c[2])]))
    oneoff_iv, alloc_iv = merge(oneoff_iv), merge(alloc_iv)
    r["warmup_steps"] = 0
    r["warmup_share"] = 0.0
    if steps:
        tiles = [(steps[i][0], steps[i + 1][0] if i + 1 < len(steps) else we) for i in range(len(steps))]
        last_alloc = total(clip(alloc_iv, *tiles[-1])) if len(tiles) > 1 else float("inf")
        n = 0
        for lo, hi in tiles:
            a = total(clip(alloc_iv, lo, hi))
            o = total(clip(oneoff_iv, lo, hi)) + (a if 10 * last_alloc <= a else 0.0)
            if hi <= lo or o < 0.25 * (hi - lo):
                break
            n += 1
        r["warmup_steps"] = n
        r["warmup_share"] = share(tiles[n - 1][1] - ws) if n else 0.0
    else:
        allone = merge(oneoff_iv + alloc_iv)
        cov, best = 0.0, None
        for s_, e_ in allone:
            cov += e_ - s_
            if cov >= 0.5 * (e_ - ws):
                best = (e_, cov)
        if best and best[1] >= 0.05 * win:
            r["warmup_share"] = share(best[0] - ws)
    groups = Counter()
    for lab, t in dispatch_names.items():
        groups[lab.split(":", 1)[0] if not lab.startswith("(") else lab.split(":", 1)[0].rstrip(")") + ")"] += t
    r["dispatch_groups"] = [(g, share(t)) for g, t in groups.most_common(4) if share(t) >= 0.001]
    r["dispatch_top"] = [(n, share(t)) for n, t in dispatch_names.most_common(4) if share(t) >= 0.001]

    # ---- copies
    pageable = [g for g in dgpu if GPU_CATS[g[6]] == "memcpy" and "HtoD" in g[2] and "Pageable" in g[2]
                and ws <= g[0] <= we]
    r["pageable_h2d"] = len(pageable)
    r["pageable_h2d_gpu"] = share(total(merge([[g[0], g[1]] for g in pageable])))
    sync_h2d_big = 0
    for rt in runtime:
        if SYNC_COPY_RE.match(rt[2]) and ws <= rt[0] <= we:
            gname = copy_dir.get(rt[5].get("correlation"), "")
            if "HtoD" in gname:
                for g in dgpu:
                    if g[5].get("correlation") == rt[5].get("correlation") and (num(g[5].get("bytes")) or 0) > 65536:
                        sync_h2d_big += 1
    r["sync_h2d_over_64k"] = sync_h2d_big
    r["sync_calls_ms"] = sum(c[1] - c[0] for c in cpu + runtime if (SYNC_RE.match(c[2]) or SYNC_COPY_RE.match(c[2]))
                             and ws <= c[0] <= we) / 1000.0

    # ---- kernels: communication, precision
    kern = [g for g in dgpu if GPU_CATS[g[6]] == "kernel"]
    comm = merge(clip([[g[0], g[1]] for g in kern if COMM_RE.search(g[2])], ws, we))
    comp = merge(clip([[g[0], g[1]] for g in kern if not COMM_RE.search(g[2])], ws, we))
    r["comm"] = share(total(comm))
    r["comm_exp"] = share(total(subtract(comm, comp)))
    mm32 = mmtc = 0.0
    busy_t = total(busy)
    for g in kern:
        if not (ws <= g[0] <= we) or COMM_RE.search(g[2]) or not MM_RE.search(g[2]):
            continue
        d = min(g[1], we) - g[0]
        if TC_RE.search(g[2]) and "_SB_" not in g[2]:
            mmtc += d
        elif FP32_RE.search(g[2]):
            mm32 += d
    r["mm32"] = mm32 / busy_t if busy_t else 0.0
    r["mmtc"] = mmtc / busy_t if busy_t else 0.0
    r["mm_tc_fraction"] = mmtc / (mmtc + mm32) if mmtc + mm32 else None

    # ---- memory
    peak = None
    for ev in instants:
        a = ev.get("args") or {}
        # Device Type 1 = CUDA, 6 = HIP; with one GPU in the trace its logical id may differ from the pid
        if a.get("Device Type") in (1, 6) and (a.get("Device Id") == dev or len(by_dev) == 1):
            v = num(a.get("Total Reserved"))
            if v is not None:
                peak = v if peak is None else max(peak, v)
    tgm = dprops.get("totalGlobalMem") if dprops else None
    r["mem_peak_ratio"] = peak / tgm if peak is not None and tgm else None

    # ---- ranking of timing figures
    rank = {"data_loading": r["dl"], "host_sync": r["sync"],
            "blocking_h2d_copy": r["h2d"] + r["pageable_h2d_gpu"], "cpu_dispatch": r["dispatch"],
            "comm_exposed": r["comm_exp"], "logging_checkpoint": r["log"], "allocator_churn": r["alloc"],
            "no_tensor_cores": (r["mm32"] * r["util"] / 2.0) if (r["cc"] or 0) >= 7 and r["mm32"] >= 0.10
            and (r["mm_tc_fraction"] or 0) < 0.05 else 0.0}
    r["ranking"] = sorted(rank.items(), key=lambda kv: -kv[1])
    return r


def pct(v):
    return "-" if v is None else f"{100 * v:5.1f}%"


def render(rel, r):
    out = [f"== {rel}"]
    if r["cpu_only"]:
        out.append(f"   window {r['window_kind']} {r['window_ms']:.3f} ms, steps {r['steps']}, events {r['events']}, "
                   f"GPU events 0 (cpu-only), runtime calls {r['runtime_calls']}, "
                   f"cuda_profiler_range {r['profiler_ranges']}, launches {r['launches']} "
                   f"(kernel launch calls {r['kernel_launch_calls']}), "
                   f"step-thread DataLoader {pct(r['cpu_dl_share'])}")
        return "\n".join(out)
    out.append(f"   window {r['window_kind']} {r['window_ms']:.3f} ms, steps {r['steps']}, device {r['device']}"
               f" ({r.get('gpu_name', '?')}, cc {r['cc']}), GPU events {r['gpu_events']}, kernels {r['kernels']},"
               f" launches {r['launches']}")
    out.append(f"   util {pct(r['util'])}  idle {pct(r['idle'])} = gpu_wait {pct(r['gpu_wait'])} + host_wait"
               f" {pct(r['host_wait'])}")
    lb = r["longest_block"]
    if lb:
        out.append(f"   longest blocking call: {lb['name']} {lb['ms']:.3f} ms"
                   + (f" ({lb['copy']}, {lb['bytes']} bytes)" if lb["copy"] else "")
                   + f", GPU idle during {pct(lb['gpu_idle_share_of_call']).strip()} of it;"
                   f" main-thread DataLoader ranges cover {pct(r['dl_range']).strip()} of the window")
    out.append(f"   idle while host in: DataLoader {pct(r['dl'])}  sync {pct(r['sync'])}  h2d-copy {pct(r['h2d'])}"
               f"  logging {pct(r['log'])}  alloc {pct(r['alloc'])}  setup {pct(r['setup'])}  jit {pct(r['jit'])}"
               f"  | dispatch (rest of host wait) {pct(r['dispatch'])}")
    if r["warmup_share"] > 0:
        out.append(f"   warm-up: {r['warmup_steps']} leading step(s), {pct(r['warmup_share']).strip()} of the window"
                   if r["steps"] else f"   warm-up: a leading stretch, {pct(r['warmup_share']).strip()} of the window")
    if r["dispatch_top"]:
        out.append("   dispatch by kind: " + ", ".join(f"{n} {pct(v).strip()}" for n, v in r["dispatch_groups"])
                   + "; top: " + ", ".join(f"{n[:60]} {pct(v).strip()}" for n, v in r["dispatch_top"]))
    if r["after_record_end"] > 0.001:
        out.append(f"   window after the trace's 'Record Window End': {pct(r['after_record_end'])}")
    out.append(f"   comm {pct(r['comm'])} exposed {pct(r['comm_exp'])}  mm32 {pct(r['mm32'])} of busy,"
               f" mmTC {pct(r['mmtc'])} of busy  pageable HtoD {r['pageable_h2d']} ({pct(r['pageable_h2d_gpu'])} GPU)"
               f"  sync HtoD>64KB {r['sync_h2d_over_64k']}  sync calls {r['sync_calls_ms']:.3f} ms")
    out.append(f"   capture {pct(r['capture_share'])} of launches ({r['capture_launches']}/{r['launches']};"
               f" {r['capture_pairs']} Begin/End pairs,"
               f" {r['getcapinfo']} GetCaptureInfo)  compile {pct(r['compile_share'])}  regions {r['regions']}"
               f" (frames/step {r['frames_per_step_max']}, max M {r['recompile_max']})"
               f"  mem peak {pct(r['mem_peak_ratio'])}")
    rk = [f"{k} {100 * v:.1f}" for k, v in r["ranking"] if v > 0.0005]
    out.append("   indep ranking: " + (", ".join(rk) if rk else "(nothing)"))
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "traces"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default=default)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if not os.path.isdir(a.traces):
        print(f"evidence.py: traces folder {a.traces} not found, skipping")
        return 77
    files = a.files or trace_files(a.traces)
    for rel in files:
        r = analyze(os.path.join(a.traces, rel))
        r["path"] = rel
        if a.json:
            r["ranking"] = [[k, round(v, 6)] for k, v in r["ranking"]]
            print(json.dumps(r, default=str))
        else:
            print(render(rel, r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
