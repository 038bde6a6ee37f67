#!/usr/bin/env python3
"""Generate Stallscope's bundled sample trace (a SYNTHETIC torch.profiler / Kineto trace).

    make_sample_trace.py [-o OUT] [--steps N] [--seed S] [--first-step K] [--dtoh-wait-in-memcpy]
    make_sample_trace.py --check TRACE [TRACE...]

The output imitates what PyTorch 2.1 (autumn 2023: integer microsecond timestamps, "cpu_op" /
"user_annotation" / "cuda_runtime" / "kernel" / "gpu_memcpy" categories, "ac2g" flows) writes
for a ResNet-18-style CNN trained on one A100 with batch 64 of 3x224x224 float32 images, and
reproduces three common stalls in every ProfilerStep:

1. DataLoader wait: `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__` on the main
   thread (~40 % of the step) does per-sample CPU transforms (aten::permute/contiguous/to/div/
   sub_/div_) and a collate (aten::stack -> aten::cat); nothing is launched, the GPU idles.
2. Pageable host-to-device copies: `x.to("cuda")` / `y.to("cuda")` -> aten::to -> aten::_to_copy
   -> aten::copy_ -> cudaMemcpyAsync, whose `Memcpy HtoD (Pageable -> Device)` (38,535,168 bytes
   at ~11 GB/s) blocks the CPU for the whole copy (followed, as in real traces, by the short
   cudaStreamSynchronize that copy_ issues for non_blocking=False).
3. A per-step host sync: `loss.item()` after the optimizer step -> aten::item ->
   aten::_local_scalar_dense -> cudaMemcpyAsync (`Memcpy DtoH (Device -> Pageable)`, 4 bytes)
   + cudaStreamSynchronize, which blocks until the GPU queue has drained.
   By default the long wait is in cudaStreamSynchronize; with --dtoh-wait-in-memcpy it is in
   the cudaMemcpyAsync instead (what real CUDA does for a DtoH copy into pageable memory: the
   call returns only once the copy is done, and the following sync is then short).

Forward runs on the main thread, backward on the autograd device thread (pt_autograd_0), the
SGD step (foreach, momentum, weight decay) and zero_grad (set_to_none) on the main thread.
Every launch has a `correlation` shared with its kernel/copy plus an ac2g s/f flow pair; kernels
never overlap on stream 7 and start 5-20 us after their launch when the GPU is idle.

Everything is derived from random.Random(seed) and the output is gzip'ed with mtime=0, so the
same arguments give a byte-identical file. Python 3 standard library only.

--check verifies a trace's invariants (nesting, launch/kernel correlation, flows, no overlap on a
stream, GPU idle during every DataLoader range) and prints per-step DataLoader share and GPU
utilisation; it exits non-zero when an invariant fails.
"""
import argparse
import contextlib
import gzip
import json
import os
import random
import struct
import sys

from sample_trace_check import check      # --check
from sample_trace_kernels import KT       # the kernel catalogue

DEFAULT_OUT = "resources/samples/synthetic_training.pt.trace.json.gz"

# ---------------------------------------------------------------------------------------------
# Fixed identity of the fake run
# ---------------------------------------------------------------------------------------------
CPU_PID = 2891437            # OS process id of "python3.10"
MAIN_TID = 2891437           # main thread (pt_main_thread)
BWD_TID = 2891652            # autograd device thread (pt_autograd_0)
GPU = 0                      # device index (= pid of GPU rows)
STREAM = 7                   # default stream
NUM_SMS = 108
T0 = 1698836521493217        # us since epoch: 2023-11-01 11:02:01 UTC
FIRST_CORRELATION = 58271
FIRST_SEQUENCE_NR = 30412

BATCH = 64
IMAGE_BYTES = BATCH * 3 * 224 * 224 * 4      # 38,535,168
LABEL_BYTES = BATCH * 8                      # int64 labels
HTOD_GBPS = 11.0                             # pageable HtoD bandwidth on a PCIe4 host

# GPU cost model (tuned so forward+backward+step is ~70 ms of kernels per step)
CONV_MAC_PER_US = 7.2e6      # ~14 TFLOP/s effective for TF32 NCHW convolutions
MEM_BYTES_PER_US = 1.25e6    # ~1.25 TB/s effective for memory-bound kernels

DEVICE_PROPERTIES = """  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344,
      "computeMajor": 8, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
      "numSms": 108, "sharedMemPerBlockOptin": 166912
    }
  ],"""

STALLSCOPE_META = {
    "synthetic": True,
    "generator": "tests/tools/make_sample_trace.py",
    "note": "synthetic training loop reproducing a DataLoader wait, pageable HtoD copies "
            "and a per-step host sync",
}

def f32(x):
    """A float as Kineto prints a float32 attribute: the float32 value with 6 decimals."""
    v = struct.unpack("f", struct.pack("f", x))[0]
    return float("%.6f" % v)


def cdiv(a, b):
    return -(-a // b)


# ---------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------


class Gen:
    def __init__(self, seed, dtoh_wait_in_memcpy=False):
        self.r = random.Random(seed)
        self.dtoh_wait_in_memcpy = dtoh_wait_in_memcpy
        self.cpu = []           # cpu_op / user_annotation X events
        self.calls = []         # (runtime X event, GPU X event or None), in correlation order
        self.ext = 0
        self.corr = FIRST_CORRELATION
        self.seq = FIRST_SEQUENCE_NR
        self.now = {MAIN_TID: T0, BWD_TID: T0}
        self.stack = {MAIN_TID: [], BWD_TID: []}
        self.gpu_free = T0
        self.gpu_scale = 1.0

    # -- small helpers -------------------------------------------------------------------------
    def ri(self, a, b):
        return self.r.randint(a, b)

    def jitter(self, us, sigma=0.02):
        return max(1, int(round(us * self.gpu_scale * (1.0 + self.r.gauss(0.0, sigma)))))

    def busy(self, tid, us):
        self.now[tid] += int(us)

    # -- CPU ops -------------------------------------------------------------------------------
    def begin(self, tid, name, cat="cpu_op", seq=None, fwd=None, gap=None):
        self.now[tid] += self.ri(1, 3) if gap is None else gap
        self.ext += 1
        args = {"External id": self.ext, "Record function id": 0}
        if seq is not None:
            args["Sequence number"] = seq
            args["Fwd thread id"] = fwd
        args["Ev Idx"] = self.ext - 1
        ev = {"ph": "X", "cat": cat, "name": name, "pid": CPU_PID, "tid": tid,
              "ts": self.now[tid], "dur": 0, "args": args}
        self.cpu.append(ev)
        self.stack[tid].append(ev)
        self.now[tid] += self.ri(1, 4)          # dispatcher / record_function overhead
        return ev

    def end(self, tid, tail=None):
        ev = self.stack[tid].pop()
        self.now[tid] += self.ri(1, 3) if tail is None else tail
        ev["dur"] = self.now[tid] - ev["ts"]
        return ev

    @contextlib.contextmanager
    def op(self, tid, name, **kw):
        self.begin(tid, name, **kw)
        yield
        self.end(tid)

    def leaf(self, tid, name, lo, hi, **kw):
        with self.op(tid, name, **kw):
            self.busy(tid, self.ri(lo, hi))

    # -- CUDA runtime / GPU --------------------------------------------------------------------
    def runtime(self, tid, name, cbid, dur):
        self.now[tid] += self.ri(1, 3)
        self.corr += 1
        parent = self.stack[tid][-1]
        ev = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": CPU_PID, "tid": tid,
              "ts": self.now[tid], "dur": dur,
              "args": {"External id": parent["args"]["External id"], "cbid": cbid,
                       "correlation": self.corr}}
        self.now[tid] += dur
        return ev

    def runtime_only(self, tid, name, cbid, dur):
        """A runtime call with no GPU activity (cudaFuncSetAttribute, ...)."""
        self.calls.append((self.runtime(tid, name, cbid, dur), None))

    def gpu_start(self, call_ts):
        return max(call_ts + self.ri(5, 20), self.gpu_free + self.ri(1, 3))

    def launch(self, tid, kname, grid, dur_us):
        kt = KT[kname]
        d = self.ri(4, 8) if self.r.random() > 0.04 else self.ri(11, 26)
        rt = self.runtime(tid, "cudaLaunchKernel", 211, d)
        start = self.gpu_start(rt["ts"])
        dur = self.jitter(dur_us)
        block = kt.block if isinstance(kt.block, tuple) else (kt.block, 1, 1)
        grid = grid if isinstance(grid, tuple) else (max(1, int(grid)), 1, 1)
        blocks = grid[0] * grid[1] * grid[2]
        threads = block[0] * block[1] * block[2]
        bpsm = blocks / NUM_SMS
        wpsm = bpsm * threads / 32.0
        occ = min(kt.occ, int(100.0 * wpsm / 64.0))
        kev = {"ph": "X", "cat": "kernel", "name": kt.name, "pid": GPU, "tid": STREAM,
               "ts": start, "dur": dur,
               "args": {"External id": rt["args"]["External id"], "queued": 0, "device": GPU,
                        "context": 1, "stream": STREAM, "correlation": rt["args"]["correlation"],
                        "registers per thread": kt.regs, "shared memory": kt.smem,
                        "blocks per SM": f32(bpsm), "warps per SM": f32(wpsm),
                        "grid": list(grid), "block": list(block),
                        "est. achieved occupancy %": occ}}
        self.gpu_free = start + dur
        self.calls.append((rt, kev))

    def _copy_event(self, rt, name, start, dur, nbytes):
        return {"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": GPU, "tid": STREAM,
                "ts": start, "dur": dur,
                "args": {"External id": rt["args"]["External id"], "device": GPU, "context": 1,
                         "stream": STREAM, "correlation": rt["args"]["correlation"],
                         "bytes": nbytes, "memory bandwidth (GB/s)": nbytes / (dur * 1000.0)}}

    def memcpy_htod_pageable(self, tid, nbytes, gbps):
        """cudaMemcpyAsync from pageable memory: the call lasts as long as the copy."""
        self.now[tid] += self.ri(1, 3)
        self.corr += 1
        parent = self.stack[tid][-1]
        ts = self.now[tid]
        start = max(ts + self.ri(6, 14), self.gpu_free + self.ri(1, 3))
        dur = max(1, int(round(nbytes / (gbps * (1.0 + self.r.gauss(0.0, 0.015)) * 1000.0))))
        rt_end = max(start + dur + self.ri(3, 8), ts + self.ri(9, 14))
        rt = {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": CPU_PID,
              "tid": tid, "ts": ts, "dur": rt_end - ts,
              "args": {"External id": parent["args"]["External id"], "cbid": 41,
                       "correlation": self.corr}}
        self.calls.append((rt, self._copy_event(rt, "Memcpy HtoD (Pageable -> Device)",
                                                start, dur, nbytes)))
        self.gpu_free = start + dur
        self.now[tid] = rt_end

    def stream_sync(self, tid):
        """cudaStreamSynchronize: returns once the stream is idle."""
        ev = self.runtime(tid, "cudaStreamSynchronize", 131, 0)
        end = max(self.gpu_free, ev["ts"]) + self.ri(2, 6)
        ev["dur"] = end - ev["ts"]
        self.now[tid] = end
        self.calls.append((ev, None))

    def memcpy_dtoh_and_sync(self, tid, nbytes):
        """at::cuda::memcpy_and_sync into a stack variable (pageable): loss.item()."""
        self.now[tid] += self.ri(1, 3)
        self.corr += 1
        parent = self.stack[tid][-1]
        ts = self.now[tid]
        start = max(ts + self.ri(5, 12), self.gpu_free + self.ri(1, 3))
        dur = self.ri(1, 2)
        if self.dtoh_wait_in_memcpy:
            rt_end = start + dur + self.ri(3, 7)
        else:
            rt_end = ts + self.ri(7, 13)
        rt = {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": CPU_PID,
              "tid": tid, "ts": ts, "dur": rt_end - ts,
              "args": {"External id": parent["args"]["External id"], "cbid": 41,
                       "correlation": self.corr}}
        self.calls.append((rt, self._copy_event(rt, "Memcpy DtoH (Device -> Pageable)",
                                                start, dur, nbytes)))
        self.gpu_free = start + dur
        self.now[tid] = rt_end
        self.stream_sync(tid)

    # -- model pieces: forward on the main thread ----------------------------------------------
    def next_seq(self):
        self.seq += 1
        return self.seq

    def conv_fw(self, cin, cout, k, stride, hin, kind):
        M = MAIN_TID
        hout = hin // stride
        macs = BATCH * hout * hout * cout * cin * k * k
        seq = self.next_seq()
        self.busy(M, self.ri(6, 18))                        # nn.Module.__call__
        with self.op(M, "aten::conv2d", seq=seq, fwd=0):
            with self.op(M, "aten::convolution", seq=seq, fwd=0):
                with self.op(M, "aten::_convolution", seq=seq, fwd=0):
                    with self.op(M, "aten::cudnn_convolution", seq=seq, fwd=0):
                        self.leaf(M, "aten::empty", 3, 7)
                        self.busy(M, self.ri(8, 20))        # cuDNN plan cache lookup
                        if kind == "stem":
                            self.launch(M, "conv_stem", cdiv(BATCH * hout * hout, 128) // 4,
                                        macs / (CONV_MAC_PER_US * 0.55))
                        elif kind == "1x1":
                            self.launch(M, "gemm_nn", (cdiv(cout, 64), 1, cdiv(BATCH * hout * hout, 256)),
                                        macs / (CONV_MAC_PER_US * 0.8))
                        else:
                            if hout >= 28:
                                kn, g = "conv_fprop", (cdiv(cout, 128), cdiv(BATCH * hout * hout, 128), 1)
                            else:
                                kn, g = "conv_fprop_small", (cdiv(cout, 64), cdiv(BATCH * hout * hout, 256), 1)
                            self.runtime_only(M, "cudaFuncSetAttribute", 273, self.ri(1, 3))
                            self.launch(M, kn, g, macs / CONV_MAC_PER_US)
        return {"type": "conv", "seq": seq, "cin": cin, "cout": cout, "k": k, "stride": stride,
                "hin": hin, "hout": hout, "macs": macs, "kind": kind}

    def bn_fw(self, c, h):
        M = MAIN_TID
        elems = BATCH * c * h * h
        seq = self.next_seq()
        self.busy(M, self.ri(6, 16))
        with self.op(M, "aten::batch_norm", seq=seq, fwd=0):
            with self.op(M, "aten::_batch_norm_impl_index", seq=seq, fwd=0):
                with self.op(M, "aten::cudnn_batch_norm", seq=seq, fwd=0):
                    with self.op(M, "aten::empty_like"):
                        self.leaf(M, "aten::empty", 2, 5)
                    self.leaf(M, "aten::view", 1, 3)
                    for _ in range(3):
                        self.leaf(M, "aten::empty", 2, 5)
                    kn, grid, eff = self.bn_kernel("fw", c, h)
                    self.launch(M, kn, grid, 3.0 * elems * 4 / (MEM_BYTES_PER_US * eff) + 4)
        return {"type": "bn", "seq": seq, "c": c, "h": h, "elems": elems}

    @staticmethod
    def bn_kernel(direction, c, h):
        if h >= 56:
            return "bn_%s_512" % direction, c, 0.35
        if h >= 28:
            return "bn_%s_128" % direction, c, 0.45
        if h >= 14:
            return "bn_%s_32" % direction, c * 4, 0.6
        return "bn_%s_sr" % direction, c * 4, 0.6

    def relu_fw(self, c, h):
        M = MAIN_TID
        elems = BATCH * c * h * h
        seq = self.next_seq()
        self.busy(M, self.ri(5, 12))
        with self.op(M, "aten::relu_", seq=seq, fwd=0):
            with self.op(M, "aten::clamp_min_", seq=seq, fwd=0):
                self.launch(M, "relu", cdiv(elems, 512), 2.0 * elems * 4 / MEM_BYTES_PER_US + 2)
        return {"type": "relu", "seq": seq, "elems": elems}

    def add_fw(self, c, h):
        M = MAIN_TID
        elems = BATCH * c * h * h
        seq = self.next_seq()
        self.busy(M, self.ri(3, 8))
        with self.op(M, "aten::add_", seq=seq, fwd=0):
            self.launch(M, "add", cdiv(elems, 512), 3.0 * elems * 4 / MEM_BYTES_PER_US + 2)
        return {"type": "add", "seq": seq}

    def maxpool_fw(self, c, hin):
        M = MAIN_TID
        hout = hin // 2
        seq = self.next_seq()
        self.busy(M, self.ri(6, 14))
        with self.op(M, "aten::max_pool2d", seq=seq, fwd=0):
            with self.op(M, "aten::max_pool2d_with_indices", seq=seq, fwd=0):
                out = BATCH * c * hout * hout
                self.launch(M, "maxpool_fw", cdiv(out, 256),
                            (BATCH * c * hin * hin * 4 + out * 12) / (MEM_BYTES_PER_US * 0.9))
        return {"type": "maxpool", "seq": seq, "c": c, "hin": hin, "hout": hout}

    def head_fw(self):
        """avgpool + flatten + fc + cross entropy; returns the autograd nodes."""
        M = MAIN_TID
        nodes = []
        seq = self.next_seq()
        self.busy(M, self.ri(6, 14))
        with self.op(M, "aten::adaptive_avg_pool2d", seq=seq, fwd=0):
            with self.op(M, "aten::mean", seq=seq, fwd=0):
                self.launch(M, "mean", 2048, BATCH * 512 * 49 * 4 / MEM_BYTES_PER_US + 4)
        nodes.append({"type": "mean", "seq": seq})
        seq = self.next_seq()
        self.busy(M, self.ri(3, 8))
        with self.op(M, "aten::flatten", seq=seq, fwd=0):
            self.leaf(M, "aten::view", 2, 4)
        nodes.append({"type": "view", "seq": seq})
        self.busy(M, self.ri(6, 14))
        seq_t = self.next_seq()
        seq = self.next_seq()
        with self.op(M, "aten::linear", seq=seq_t, fwd=0):
            with self.op(M, "aten::t", seq=seq_t, fwd=0):
                with self.op(M, "aten::transpose"):
                    self.leaf(M, "aten::as_strided", 1, 2)
            with self.op(M, "aten::addmm", seq=seq, fwd=0):
                self.launch(M, "fc_fw", (32, 2, 1), BATCH * 1000 * 512 / (CONV_MAC_PER_US * 0.1))
        nodes.append({"type": "t", "seq": seq_t})
        nodes.append({"type": "addmm", "seq": seq})
        # loss = F.cross_entropy(out, y)
        self.busy(M, self.ri(8, 20))
        seq_ls = self.next_seq()
        seq_nll = self.next_seq()
        with self.op(M, "aten::cross_entropy_loss", seq=seq_ls, fwd=0):
            with self.op(M, "aten::log_softmax", seq=seq_ls, fwd=0):
                with self.op(M, "aten::_log_softmax", seq=seq_ls, fwd=0):
                    self.launch(M, "logsoftmax_fw", (8, 1, 1), 5)
            with self.op(M, "aten::nll_loss_nd", seq=seq_nll, fwd=0):
                with self.op(M, "aten::nll_loss", seq=seq_nll, fwd=0):
                    with self.op(M, "aten::nll_loss_forward", seq=seq_nll, fwd=0):
                        self.leaf(M, "aten::empty", 2, 4)
                        self.leaf(M, "aten::empty", 2, 4)
                        self.launch(M, "nll_fw", (1, 1, 1), 4)
        nodes.append({"type": "logsoftmax", "seq": seq_ls})
        nodes.append({"type": "nll", "seq": seq_nll})
        return nodes

    # -- backward on the autograd thread -------------------------------------------------------
    def accumulate_grad(self):
        B = BWD_TID
        with self.op(B, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                     gap=self.ri(4, 10)):
            with self.op(B, "torch::autograd::AccumulateGrad"):
                with self.op(B, "aten::detach"):
                    self.leaf(B, "detach", 1, 3)

    @contextlib.contextmanager
    def bw_node(self, name, seq):
        B = BWD_TID
        with self.op(B, "autograd::engine::evaluate_function: " + name, seq=seq, fwd=1,
                     gap=self.ri(4, 12)):
            with self.op(B, name, seq=seq, fwd=1):
                yield

    def backward_node(self, n):
        B = BWD_TID
        t = n["type"]
        if t == "nll":
            with self.bw_node("NllLossBackward0", n["seq"]):
                with self.op(B, "aten::nll_loss_backward"):
                    with self.op(B, "aten::zero_"):
                        with self.op(B, "aten::fill_"):
                            self.launch(B, "fill", (125, 1, 1), 3)
                    self.launch(B, "nll_bw", (1, 1, 1), 3)
        elif t == "logsoftmax":
            with self.bw_node("LogSoftmaxBackward0", n["seq"]):
                with self.op(B, "aten::_log_softmax_backward_data"):
                    self.leaf(B, "aten::empty", 2, 4)
                    self.launch(B, "logsoftmax_bw", (8, 1, 1), 5)
        elif t == "addmm":
            with self.bw_node("AddmmBackward0", n["seq"]):
                with self.op(B, "aten::t"):
                    with self.op(B, "aten::transpose"):
                        self.leaf(B, "aten::as_strided", 1, 2)
                with self.op(B, "aten::mm"):
                    self.launch(B, "fc_dgrad", (16, 1, 1), BATCH * 1000 * 512 / (CONV_MAC_PER_US * 0.08))
                with self.op(B, "aten::t"):
                    with self.op(B, "aten::transpose"):
                        self.leaf(B, "aten::as_strided", 1, 2)
                with self.op(B, "aten::mm"):
                    self.launch(B, "fc_wgrad", (8, 4, 5), BATCH * 1000 * 512 / (CONV_MAC_PER_US * 0.06))
                with self.op(B, "aten::t"):
                    with self.op(B, "aten::transpose"):
                        self.leaf(B, "aten::as_strided", 1, 2)
            with self.op(B, "aten::sum"):
                self.launch(B, "sum", (8, 1, 1), 6)
            self.leaf(B, "aten::view", 1, 3)
            self.accumulate_grad()                         # fc.bias
        elif t == "t":
            with self.bw_node("TBackward0", n["seq"]):
                with self.op(B, "aten::t"):
                    with self.op(B, "aten::transpose"):
                        self.leaf(B, "aten::as_strided", 1, 2)
            self.accumulate_grad()                         # fc.weight
        elif t == "view":
            with self.bw_node("ViewBackward0", n["seq"]):
                with self.op(B, "aten::reshape"):
                    self.leaf(B, "aten::view", 2, 4)
        elif t == "mean":
            with self.bw_node("MeanBackward1", n["seq"]):
                with self.op(B, "aten::expand"):
                    self.leaf(B, "aten::as_strided", 1, 2)
                with self.op(B, "aten::div"):
                    with self.op(B, "aten::div"):
                        elems = BATCH * 512 * 49
                        self.launch(B, "div_bw", cdiv(elems, 256), 2.0 * elems * 4 / MEM_BYTES_PER_US + 3)
        elif t == "relu":
            with self.bw_node("ReluBackward0", n["seq"]):
                with self.op(B, "aten::threshold_backward"):
                    e = n["elems"]
                    self.launch(B, "relu_bw", cdiv(e, 512), 3.0 * e * 4 / MEM_BYTES_PER_US + 2)
        elif t == "add":
            with self.bw_node("AddBackward0", n["seq"]):
                pass
        elif t == "bn":
            with self.bw_node("CudnnBatchNormBackward0", n["seq"]):
                with self.op(B, "aten::cudnn_batch_norm_backward"):
                    for _ in range(3):
                        self.leaf(B, "aten::empty", 2, 5)
                    self.leaf(B, "aten::view", 1, 3)
                    self.leaf(B, "aten::empty", 2, 5)
                    kn, grid, eff = self.bn_kernel("bw", n["c"], n["h"])
                    self.launch(B, kn, grid, 5.0 * n["elems"] * 4 / (MEM_BYTES_PER_US * eff) + 4)
            self.accumulate_grad()                         # bn.weight
            self.accumulate_grad()                         # bn.bias
        elif t == "maxpool":
            with self.bw_node("MaxPool2DWithIndicesBackward0", n["seq"]):
                with self.op(B, "aten::max_pool2d_with_indices_backward"):
                    self.leaf(B, "aten::empty", 2, 5)
                    c, hin, hout = n["c"], n["hin"], n["hout"]
                    self.launch(B, "maxpool_bw", (cdiv(hin * hin, 256), c, BATCH),
                                (BATCH * c * hin * hin * 4 + BATCH * c * hout * hout * 12)
                                / (MEM_BYTES_PER_US * 0.8))
        elif t == "conv":
            self.conv_bw(n)
        else:
            raise ValueError(t)

    def conv_bw(self, n):
        B = BWD_TID
        cin, cout, hin, hout, macs, kind = n["cin"], n["cout"], n["hin"], n["hout"], n["macs"], n["kind"]
        act_in = BATCH * cin * hin * hin * 4
        act_out = BATCH * cout * hout * hout * 4
        wbytes = cout * cin * n["k"] * n["k"] * 4
        with self.op(B, "autograd::engine::evaluate_function: ConvolutionBackward0", seq=n["seq"],
                     fwd=1, gap=self.ri(4, 12)):
            with self.op(B, "ConvolutionBackward0", seq=n["seq"], fwd=1):
                with self.op(B, "aten::convolution_backward"):
                    self.leaf(B, "aten::empty", 3, 6)
                    self.busy(B, self.ri(8, 20))
                    if kind == "stem":                      # input needs no grad: wgrad only
                        self.launch(B, "nchw2nhwc", (1, 16, cdiv(act_out, 4 * 256 * 16 * 8)),
                                    2.0 * act_out / MEM_BYTES_PER_US + 3)
                        self.launch(B, "nchw2nhwc", (1, 16, cdiv(act_in, 4 * 256 * 16 * 8)),
                                    2.0 * act_in / MEM_BYTES_PER_US + 3)
                        self.launch(B, "wgrad_stem", (32, 2, 3), macs / (CONV_MAC_PER_US * 0.5))
                    elif kind == "1x1":
                        self.launch(B, "gemm_tn", (1, cdiv(cin, 64), 32), macs / (CONV_MAC_PER_US * 0.8))
                        self.leaf(B, "aten::empty", 2, 5)
                        self.launch(B, "gemm_nt", (cdiv(cout, 64), 1, 32), macs / (CONV_MAC_PER_US * 0.7))
                        self.launch(B, "reduce_wgrad", cdiv(wbytes // 4, 128), wbytes * 32 / MEM_BYTES_PER_US + 3)
                    else:
                        self.launch(B, "nchw2nhwc", (1, 16, cdiv(act_out, 4 * 256 * 16 * 8)),
                                    2.0 * act_out / MEM_BYTES_PER_US + 3)
                        self.runtime_only(B, "cudaFuncSetAttribute", 273, self.ri(1, 3))
                        self.launch(B, "dgrad", (cdiv(cin, 128), cdiv(BATCH * hin * hin, 128), 1),
                                    macs / (CONV_MAC_PER_US * 0.95))
                        self.launch(B, "nhwc2nchw", (1, 16, cdiv(act_in, 4 * 256 * 16 * 8)),
                                    2.0 * act_in / MEM_BYTES_PER_US + 3)
                        self.leaf(B, "aten::empty", 2, 5)
                        self.launch(B, "nchw2nhwc", (1, 16, cdiv(act_in, 4 * 256 * 16 * 8)),
                                    2.0 * act_in / MEM_BYTES_PER_US + 3)
                        self.launch(B, "wgrad", (cdiv(cout, 128), cdiv(cin * 9, 128), 3),
                                    macs / (CONV_MAC_PER_US * 0.9))
                        self.launch(B, "wgrad_splitk", (cdiv(cout, 128), cdiv(cin * 9, 128), 4),
                                    wbytes * 4 / MEM_BYTES_PER_US + 3)
            if n.get("accumulate"):
                # second gradient for the block input arrives: InputBuffer::add
                with self.op(B, "aten::add"):
                    e = n["accumulate"]
                    self.launch(B, "add", cdiv(e, 512), 3.0 * e * 4 / MEM_BYTES_PER_US + 2)
        self.accumulate_grad()                             # conv.weight

    # -- the training step ---------------------------------------------------------------------
    def dataloader(self, target_us):
        M = MAIN_TID
        with self.op(M, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                     cat="user_annotation"):
            start = self.now[M]
            collate_us = self.ri(5200, 6800)
            for i in range(BATCH):
                # PIL decode / RandomResizedCrop / flip: Python work the profiler does not see
                remaining = target_us - (self.now[M] - start) - collate_us - 400 * (BATCH - i)
                self.busy(M, max(60, int(remaining / (BATCH - i) * self.r.uniform(0.8, 1.2))))
                # transforms.ToTensor() + Normalize()
                with self.op(M, "aten::permute"):
                    self.leaf(M, "aten::as_strided", 1, 2)
                with self.op(M, "aten::contiguous"):
                    with self.op(M, "aten::clone"):
                        self.leaf(M, "aten::empty_like", 2, 5)
                        self.leaf(M, "aten::copy_", 70, 110)
                with self.op(M, "aten::to"):
                    with self.op(M, "aten::_to_copy"):
                        self.leaf(M, "aten::empty_strided", 2, 5)
                        self.leaf(M, "aten::copy_", 80, 130)
                self.leaf(M, "aten::div", 60, 95)
                self.busy(M, self.ri(4, 12))
                self.leaf(M, "aten::sub_", 35, 60)
                self.leaf(M, "aten::div_", 35, 60)
            # default_collate
            self.busy(M, self.ri(60, 140))
            with self.op(M, "aten::stack"):
                with self.op(M, "aten::cat"):
                    self.busy(M, collate_us - 300)
            self.busy(M, self.ri(20, 60))
            self.leaf(M, "aten::lift_fresh", 2, 5)
            self.busy(M, self.ri(30, 80))

    def to_device(self, nbytes):
        M = MAIN_TID
        self.busy(M, self.ri(8, 20))
        with self.op(M, "aten::to"):
            with self.op(M, "aten::_to_copy"):
                self.leaf(M, "aten::empty_strided", 4, 10)
                with self.op(M, "aten::copy_"):
                    self.memcpy_htod_pageable(M, nbytes, HTOD_GBPS)
                    self.stream_sync(M)

    def forward(self):
        nodes = []
        nodes.append(self.conv_fw(3, 64, 7, 2, 224, "stem"))
        nodes.append(self.bn_fw(64, 112))
        nodes.append(self.relu_fw(64, 112))
        nodes.append(self.maxpool_fw(64, 112))
        cin, h = 64, 56
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            for b in range(2):
                s = stride if b == 0 else 1
                ho = h // s
                first = self.conv_fw(cin, cout, 3, s, h, "3x3")
                first["accumulate"] = BATCH * cin * h * h
                nodes.append(first)
                nodes.append(self.bn_fw(cout, ho))
                nodes.append(self.relu_fw(cout, ho))
                nodes.append(self.conv_fw(cout, cout, 3, 1, ho, "3x3"))
                nodes.append(self.bn_fw(cout, ho))
                if b == 0 and (s != 1 or cin != cout):
                    nodes.append(self.conv_fw(cin, cout, 1, s, h, "1x1"))
                    nodes.append(self.bn_fw(cout, ho))
                nodes.append(self.add_fw(cout, ho))
                nodes.append(self.relu_fw(cout, ho))
                cin, h = cout, ho
        nodes.extend(self.head_fw())
        return nodes

    def optimizer_step(self):
        M = MAIN_TID
        nparams = 11_689_512                 # ResNet-18
        pbytes = nparams * 4
        self.busy(M, self.ri(30, 70))
        with self.op(M, "Optimizer.step#SGD.step", cat="user_annotation"):
            self.busy(M, self.ri(120, 260))   # grouping tensors by device and dtype
            for name, kn, nbufs in (("aten::_foreach_add", "sgd_wd", 3),
                                    ("aten::_foreach_mul_", "sgd_mul", 2),
                                    ("aten::_foreach_add_", "sgd_add", 3),
                                    ("aten::_foreach_add_", "sgd_add", 3)):
                self.busy(M, self.ri(15, 40))
                with self.op(M, name):
                    self.busy(M, self.ri(120, 220))     # building tensor lists (62 params)
                    chunks = cdiv(nparams, 65536)
                    per = [min(320, chunks - 320 * j) for j in range(cdiv(chunks, 320))]
                    per.append(self.ri(20, 40))          # tail launch for the small tensors
                    for blocks in per:
                        self.launch(M, kn, blocks, nbufs * pbytes * blocks / (chunks + 30)
                                    / (MEM_BYTES_PER_US * 0.85) + 3)
            self.busy(M, self.ri(20, 50))

    def step(self, number, dl_target_us):
        M, B = MAIN_TID, BWD_TID
        self.gpu_scale = 1.0 + self.r.gauss(0.0, 0.01)
        self.busy(M, self.ri(3, 9))
        with self.op(M, "ProfilerStep#%d" % number, cat="user_annotation"):
            self.dataloader(dl_target_us)                  # for x, y in loader:
            self.to_device(IMAGE_BYTES)                    #     x = x.to("cuda")
            self.to_device(LABEL_BYTES)                    #     y = y.to("cuda")
            self.busy(M, self.ri(15, 40))                  #     opt.zero_grad()
            with self.op(M, "Optimizer.zero_grad#SGD.zero_grad", cat="user_annotation"):
                self.busy(M, self.ri(25, 60))
            nodes = self.forward()                         #     loss = F.cross_entropy(model(x), y)
            self.busy(M, self.ri(15, 40))                  #     loss.backward()
            with self.op(M, "aten::ones_like"):
                with self.op(M, "aten::empty_like"):
                    self.leaf(M, "aten::empty_strided", 2, 5)
                with self.op(M, "aten::fill_"):
                    self.launch(M, "fill", (1, 1, 1), 2)
            self.now[B] = self.now[M] + self.ri(20, 45)
            for n in reversed(nodes):
                self.backward_node(n)
            self.now[M] = self.now[B] + self.ri(15, 40)
            self.optimizer_step()                          #     opt.step()
            self.busy(M, self.ri(20, 50))                  #     print(loss.item())
            with self.op(M, "aten::item"):
                with self.op(M, "aten::_local_scalar_dense"):
                    self.memcpy_dtoh_and_sync(M, 4)
            self.busy(M, self.ri(30, 90))

    def run(self, steps, first_step):
        self.busy(MAIN_TID, self.ri(900, 1400))  # profiler start -> first ProfilerStep
        for i in range(steps):
            self.step(first_step + i, self.r.uniform(48000, 55000))
        return self.now[MAIN_TID] + self.ri(200, 500)


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def build(steps, seed, first_step, dtoh_wait_in_memcpy=False):
    g = Gen(seed, dtoh_wait_in_memcpy)
    end = g.run(steps, first_step)
    events = sorted(g.cpu, key=lambda e: (e["ts"], -e["dur"], e["args"]["External id"]))
    for rt, gpu in sorted(g.calls, key=lambda c: c[0]["args"]["correlation"]):
        if gpu is not None:
            events.append(gpu)
            events.append({"ph": "f", "id": rt["args"]["correlation"], "pid": GPU, "tid": STREAM,
                           "ts": gpu["ts"], "cat": "ac2g", "name": "ac2g", "bp": "e"})
            events.append(rt)
            events.append({"ph": "s", "id": rt["args"]["correlation"], "pid": CPU_PID,
                           "tid": rt["tid"], "ts": rt["ts"], "cat": "ac2g", "name": "ac2g"})
        else:
            events.append(rt)
    meta_ts = T0 + 212
    def meta(name, pid, tid, args):
        return {"name": name, "ph": "M", "ts": meta_ts, "pid": pid, "tid": tid, "args": args}
    events += [
        meta("process_name", CPU_PID, 0, {"name": "python3.10"}),
        meta("process_labels", CPU_PID, 0, {"labels": "CPU"}),
        meta("process_sort_index", CPU_PID, 0, {"sort_index": CPU_PID}),
        meta("process_name", GPU, 0, {"name": "python3.10"}),
        meta("process_labels", GPU, 0, {"labels": "GPU %d" % GPU}),
        meta("process_sort_index", GPU, 0, {"sort_index": 16777216 + GPU}),
        meta("thread_name", GPU, STREAM, {"name": "stream %d " % STREAM}),
        meta("thread_sort_index", GPU, STREAM, {"sort_index": STREAM}),
        meta("thread_name", CPU_PID, MAIN_TID, {"name": "thread %d (pt_main_thread)" % MAIN_TID}),
        meta("thread_sort_index", CPU_PID, MAIN_TID, {"sort_index": MAIN_TID}),
        meta("thread_name", CPU_PID, BWD_TID, {"name": "thread %d (pt_autograd_0)" % BWD_TID}),
        meta("thread_sort_index", CPU_PID, BWD_TID, {"sort_index": BWD_TID}),
        {"ph": "X", "cat": "Trace", "ts": T0, "dur": end - T0, "pid": "Spans",
         "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        {"name": "process_sort_index", "ph": "M", "ts": T0, "pid": "Spans", "tid": 0,
         "args": {"sort_index": 536870912}},
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": T0},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
         "ts": end + 37},
    ]
    parts = ['{\n  "schemaVersion": 1,\n', DEVICE_PROPERTIES, "\n",
             '  "stallscope": %s,\n' % json.dumps(STALLSCOPE_META),
             '  "traceEvents": [\n',
             ",\n".join("  " + json.dumps(e) for e in events),
             '\n  ],\n  "traceName": "synthetic_training.pt.trace.json"\n}\n']
    return "".join(parts).encode("utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default=DEFAULT_OUT, help="output .json.gz (default %(default)s)")
    ap.add_argument("--steps", type=int, default=5, help="profiler steps (default %(default)s)")
    ap.add_argument("--seed", type=int, default=20231101, help="random seed (default %(default)s)")
    ap.add_argument("--first-step", type=int, default=10, help="number of the first ProfilerStep")
    ap.add_argument("--dtoh-wait-in-memcpy", action="store_true",
                    help="put loss.item()'s wait in cudaMemcpyAsync (real CUDA behaviour for a "
                         "pageable DtoH copy) instead of cudaStreamSynchronize")
    ap.add_argument("--check", nargs="+", metavar="TRACE", help="verify traces instead of writing one")
    a = ap.parse_args(argv)
    if a.check:
        return 0 if all([check(p) for p in a.check]) else 1
    if a.steps < 1:
        ap.error("--steps must be at least 1")
    raw = build(a.steps, a.seed, a.first_step, a.dtoh_wait_in_memcpy)
    out = gzip.compress(raw, compresslevel=9, mtime=0)
    d = os.path.dirname(a.output)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(a.output, "wb") as f:
        f.write(out)
    print("wrote %s: %d bytes (%d uncompressed)" % (a.output, len(out), len(raw)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
