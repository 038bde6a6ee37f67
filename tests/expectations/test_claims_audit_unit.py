#!/usr/bin/env python3
"""Unit tests of the claims audit's own rules (claims_model.py, claims_audit.py) on tiny inline
traces: the audit is a second reading of docs/analysis.md, and these pin how it reads it.
Python 3.11 standard library only; no Stallscope binary and no real trace needed.

    python3 tests/expectations/test_claims_audit_unit.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import claims_audit as A  # noqa: E402
import claims_model as M  # noqa: E402

PID, TID = 100, 100


def X(name, ts, dur, cat="cpu_op", pid=PID, tid=TID, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def rt(name, ts, dur, corr=None, tid=TID):
    return X(name, ts, dur, "cuda_runtime", tid=tid, **({"correlation": corr} if corr is not None else {}))


def kernel(name, ts, dur, corr, dev=0, stream=7):
    return X(name, ts, dur, "kernel", pid=dev, tid=stream, correlation=corr, stream=stream, device=dev)


def memcpy(name, ts, dur, corr, dev=0, nbytes=1 << 20):
    return X(name, ts, dur, "gpu_memcpy", pid=dev, tid=7, correlation=corr, stream=7, bytes=nbytes)


def step(n, ts, dur):
    return X(f"ProfilerStep#{n}", ts, dur, "user_annotation")


def trace(events, **top):
    doc = {"traceEvents": events}
    doc.update(top)
    return M.Trace(doc)


def attribute(tr, dev=0):
    w = M.default_window(tr)
    return M.Attribution(tr, dev, w), w


class Catalogues(unittest.TestCase):
    def test_call_families(self):
        c = M.CallCatalogue()
        self.assertEqual(c.family("cudaLaunchKernel"), "launch")
        self.assertEqual(c.family("cudaGraphLaunch"), "launch")
        self.assertEqual(c.family("cudaGraphInstantiateWithFlags"), "capture")
        self.assertEqual(c.family("cudaMemcpy"), "copy_sync")
        self.assertEqual(c.family("cudaMemcpyAsync"), "copy")
        self.assertEqual(c.family("hipMemcpyWithStream"), "copy_sync")
        self.assertEqual(c.family("cudaStreamWaitEvent"), "stream")
        self.assertEqual(c.family("aten::item"), "sync")
        self.assertEqual(c.family("hipFree"), "alloc")
        self.assertEqual(c.family("cudaStreamCreateWithFlags"), "resource")
        self.assertEqual(c.family("cudaGetDeviceProperties"), "query")
        self.assertEqual(c.family("prim::FusionGroup_0"), "jit")
        self.assertEqual(c.family("aten::mm"), None)

    def test_kernel_catalogue(self):
        k = M.KernelCatalogue()
        c = k.classify("volta_sgemm_128x64_nn")
        self.assertEqual((c["family"], c["precision"], c["library"]), ("gemm", "fp32", True))
        self.assertFalse(M.KernelCatalogue.on_tensor_cores(c))
        c = k.classify("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize96x128x32")
        self.assertTrue(M.KernelCatalogue.on_tensor_cores(c))
        self.assertEqual(k.classify("ncclKernel_AllReduce_RING_LL_Sum_float")["family"], "comm")
        # a kernel of one's own is no library's
        self.assertFalse(k.classify("matmul_kernel(float*, float*)")["library"])


class Loading(unittest.TestCase):
    def test_exact_nanoseconds_and_base_time(self):
        tr = M.Trace(M.json.loads('{"baseTimeNanoseconds": 1000000000000, "traceEvents": ['
                                  '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1,'
                                  ' "ts": 4458676416788.066, "dur": 0.001}]}', parse_float=str))
        e = tr.cpu[0]
        self.assertEqual(e.ts, 1000000000000 + 4458676416788066)
        self.assertEqual(e.dur, 1)


class Window(unittest.TestCase):
    def test_steps_extended_to_their_gpu_work(self):
        tr = trace([step(3, 1000, 100), step(4, 1100, 100), rt("cudaLaunchKernel", 1190, 5, 1),
                    kernel("k", 1250, 30, 1)])
        w = M.default_window(tr)
        self.assertEqual((w.start, w.end), (1000_000, 1280_000))
        self.assertEqual(w.description, "ProfilerStep#3..#4 and their GPU work")
        self.assertEqual([(s, e) for _, s, e in w.tiles()], [(1000_000, 1100_000), (1100_000, 1280_000)])

    def test_record_window_end_cuts_a_step(self):
        tr = trace([step(1, 0, 1000), X("aten::add", 10, 20), rt("cudaLaunchKernel", 15, 5, 1),
                    kernel("k", 40, 10, 1), {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "",
                                             "ts": 100}])
        w = M.default_window(tr)
        self.assertEqual((w.start, w.end), (0, 100_000))

    def test_gpu_span_without_steps(self):
        tr = trace([X("aten::add", 0, 50), rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 20, 10, 1),
                    rt("cudaLaunchKernel", 30, 5, 2), kernel("k", 40, 10, 2)])
        w = M.default_window(tr)
        self.assertEqual((w.start, w.end, w.kind), (20_000, 50_000, "gpu"))

    def test_serving_loop_iterations(self):
        ev = []
        for i in range(3):
            t = 1000 * i
            ev += [X(f"step[DECODE bs={32 + i}]", t, 500, "user_annotation"),
                   rt("cudaLaunchKernel", t + 10, 5, 10 + i), kernel("k", t + 100, 50, 10 + i)]
        tr = trace(ev)
        w = M.default_window(tr)
        self.assertEqual(w.kind, "iterations")
        self.assertEqual(len(w.tiles()), 3)
        # one range around the whole program is not a loop
        tr = trace([X("main", 0, 5000, "user_annotation"), rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 100, 50, 1)])
        self.assertEqual(M.default_window(tr).kind, "gpu")


class Attribution(unittest.TestCase):
    def test_allocator_call_inside_a_gap(self):
        tr = trace([step(1, 0, 1000),
                    rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 20, 10, 1),
                    X("aten::empty", 40, 300), rt("cudaMalloc", 50, 200),
                    rt("cudaLaunchKernel", 400, 5, 2), kernel("k", 410, 10, 2)])
        at, _ = attribute(tr)
        self.assertEqual(at.totals["allocator"], 200_000)
        self.assertEqual(at.waited_ns(["allocator"], "cudaMalloc"), 200_000)

    def _dispatch(self, apart_us):
        """An operator whose CPU work lies between two launches apart_us apart."""
        a = 100
        b = a + 5 + apart_us
        return trace([step(1, 0, b + 200),
                      rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 16, 4, 1),
                      X("aten::conv", a - 5, apart_us + 20), rt("cudaLaunchKernel", a, 5, 2),
                      kernel("k", a + 6, 2, 2), rt("cudaLaunchKernel", b, 5, 3), kernel("k", b + 6, 2, 3)])

    def test_dispatch_between_launches_0_3_ms_apart_is_launch_overhead(self):
        tr = self._dispatch(300)
        at, _ = attribute(tr)
        # the operator's time between its two launches (100..105 and 405..410), GPU idle from 108
        self.assertEqual(at.idle_ns(["launch_overhead"], 108_000, 405_000), 297_000)
        self.assertEqual(at.waited_ns(["cpu_compute"], "aten::conv"), 0)

    def test_dispatch_between_launches_2_ms_apart_is_cpu_compute(self):
        tr = self._dispatch(2000)
        at, _ = attribute(tr)
        self.assertEqual(at.idle_ns(["cpu_compute"], 108_000, 2105_000), 1997_000)
        # before its first launch the previous one (at 15) is 85 us away: still a stretch
        self.assertEqual(at.idle_ns(["launch_overhead"], 95_000, 100_000), 5_000)

    def test_slow_first_launch_is_setup_and_a_slow_repeat_is_not(self):
        tr = trace([step(1, 0, 10000),
                    rt("cudaLaunchKernel", 0, 1500, 1), kernel("k", 1600, 10, 1),
                    rt("cudaLaunchKernel", 2000, 1500, 2), kernel("k", 3600, 10, 2),
                    rt("cudaLaunchKernel", 4000, 900, 3), kernel("k2", 5000, 10, 3)])
        at, _ = attribute(tr)
        self.assertEqual(at.waited_ns(["setup"], "cudaLaunchKernel"), 1500_000)
        self.assertTrue(tr.runtime[0].slow_first)
        self.assertFalse(tr.runtime[1].slow_first)       # the same kernel again: not a first use
        self.assertFalse(tr.runtime[2].slow_first)       # a first use under 1 ms
        self.assertEqual(A.m_calls(_ctx(tr), {"names": ["cudaLaunchKernel"], "first_use": 1, "stat": "count"}), 1)

    def test_gpu_dependency(self):
        tr = trace([step(1, 0, 2000),
                    rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 20, 10, 1),
                    rt("cudaLaunchKernel", 25, 5, 2), kernel("k", 500, 10, 2),     # queued before the gap
                    X("aten::x", 600, 300),
                    rt("cudaLaunchKernel", 700, 10, 3), kernel("k", 900, 10, 3)])  # queued 190 us after
        at, _ = attribute(tr)
        # [30, 500): launched before the gap began; [710, 900): queued > 50 us after the launch
        self.assertEqual(at.totals["gpu_dependency"], 470_000 + 190_000)

    def test_host_sync_stays_after_a_call_that_waited(self):
        ev = [step(1, 0, 1000),
              rt("cudaLaunchKernel", 0, 5, 1), kernel("k", 10, 100, 1),
              X("aten::item", 50, 70), X("aten::_local_scalar_dense", 51, 68),
              rt("cudaMemcpyAsync", 52, 66, 2), memcpy("Memcpy DtoH (Device -> Pageable)", 111, 2, 2),
              rt("cudaLaunchKernel", 300, 5, 3), kernel("k", 310, 10, 3),
              rt("cudaDeviceSynchronize", 400, 10),       # returns at once: the GPU was idle
              rt("cudaLaunchKernel", 600, 5, 4), kernel("k", 610, 10, 4)]
        tr = trace(ev)
        at, _ = attribute(tr)
        # after item (the gap began while it waited): host_sync until the next launch at 300
        self.assertEqual(at.idle_ns(["host_sync"], 120_000, 300_000), 180_000)
        # after the synchronize that did not wait: untraced
        self.assertEqual(at.idle_ns(["host_untraced"], 410_000, 600_000), 190_000)

    def test_a_user_range_inside_an_operator_is_untraced(self):
        tr = trace([step(1, 0, 1000), rt("cudaLaunchKernel", 0, 5, 1), kernel("k", 10, 10, 1),
                    X("record_param_comms", 30, 200), X("nccl:all_reduce", 40, 150, "user_annotation"),
                    rt("cudaLaunchKernel", 100, 5, 2), kernel("k", 150, 10, 2)])
        at, _ = attribute(tr)
        # 40..100, 105..150 and (the trailing gap) 160..190 inside the user range; the
        # operator's own 30..40 is dispatch
        self.assertEqual(at.waited_ns(["host_untraced"], "nccl:all_reduce"), 135_000)
        self.assertEqual(at.idle_ns(["launch_overhead"], 30_000, 40_000), 10_000)

    def test_the_innermost_slice_decides_first(self):
        """docs/analysis.md: walking from the innermost slice outward, the first rule that matches
        decides: a sync inside a DataLoader range is host_sync, the range's own time data_loading."""
        tr = trace([step(1, 0, 1000), rt("cudaLaunchKernel", 0, 5, 1), kernel("k", 10, 10, 1),
                    X("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 30, 300, "user_annotation"),
                    rt("cudaStreamSynchronize", 100, 50),
                    rt("cudaLaunchKernel", 400, 5, 2), kernel("k", 410, 10, 2)])
        at, _ = attribute(tr)
        self.assertEqual(at.totals["host_sync"], 50_000)
        self.assertEqual(at.totals["data_loading"], 250_000)

    def test_input_preparation_only_in_a_steps_leading_gap(self):
        ev = [step(1, 0, 1000),
              X("transformers/tokenization_utils.py(10): __call__", 10, 200, "python_function"),
              rt("cudaLaunchKernel", 300, 5, 1), kernel("k", 310, 10, 1),
              X("transformers/tokenization_utils.py(10): __call__", 400, 200, "python_function"),
              rt("cudaLaunchKernel", 700, 5, 2), kernel("k", 710, 10, 2)]
        at, _ = attribute(trace(ev))
        self.assertEqual(at.idle_ns(["data_loading"]), 200_000)
        self.assertEqual(at.idle_ns(["cpu_compute"], 400_000, 600_000), 200_000)

    def test_fusion_group_that_holds_the_host(self):
        ev = [step(1, 0, 10000), rt("cudaLaunchKernel", 0, 5, 1), kernel("k", 10, 10, 1),
              X("prim::FusionGroup_0", 100, 3000), rt("cudaLaunchKernel", 3000, 5, 2), kernel("k", 3010, 10, 2),
              X("prim::FusionGroup_1", 4000, 300), rt("cudaLaunchKernel", 4200, 5, 3), kernel("k", 4300, 10, 3)]
        at, _ = attribute(trace(ev))
        self.assertEqual(at.idle_ns(["jit"], 100_000, 3000_000), 2900_000)
        self.assertEqual(at.waited_ns(["jit"], "prim::FusionGroup_1"), 0)

    def test_causes_sum_to_idle(self):
        tr = self._dispatch(300)
        at, _ = attribute(tr)
        self.assertEqual(sum(at.totals.values()), at.idle)


def _ctx(tr, analysis=None):
    w = M.default_window(tr)
    a = analysis or {"window": {"start_ns": w.start, "end_ns": w.end, "description": w.description},
                     "findings": [], "idle_causes": {}}
    ctx = A.Ctx(tr, a)
    A.check_window(ctx)
    return ctx


class Warmup(unittest.TestCase):
    def test_a_leading_step_of_set_up(self):
        ev = [step(1, 0, 5000), rt("cudaStreamCreateWithFlags", 10, 3000), rt("cudaLaunchKernel", 4000, 5, 1),
              kernel("k", 4010, 500, 1)]
        for n in (2, 3):
            t = 5000 * (n - 1)
            ev += [step(n, t, 5000), rt("cudaLaunchKernel", t + 10, 5, n), kernel("k", t + 20, 4500, n)]
        tr = trace(ev)
        ctx = _ctx(tr)
        self.assertIsNotNone(ctx.my_warmup)
        self.assertEqual(ctx.my_warmup.steps, ["ProfilerStep#1"])
        self.assertEqual(ctx.own_window.start, 5000_000)


class Claims(unittest.TestCase):
    """A finding's claims checked end to end against an inline trace (no CLI)."""

    def setUp(self):
        self.tr = trace([step(1, 0, 1000),
                         rt("cudaLaunchKernel", 10, 5, 1), kernel("k", 20, 10, 1),
                         X("aten::empty", 40, 300), rt("cudaMalloc", 50, 200),
                         rt("cudaLaunchKernel", 400, 5, 2), kernel("k", 410, 10, 2)])
        w = M.default_window(self.tr)
        self.analysis = {"window": {"start_ns": w.start, "end_ns": w.end, "description": w.description},
                         "idle_causes": {}, "findings": []}
        self.ctx = _ctx(self.tr, self.analysis)

    def claim(self, text, measure, **params):
        return {"text": text, "measure": measure, "params": params, "value": 0}

    def test_right_and_wrong_numbers(self):
        f = {"id": "allocator_churn/gpu0", "kind": "allocator_churn", "device": 0}
        ok = [self.claim("200 us", "idle_ns", device=0, causes=["allocator"]),
              self.claim("`cudaMalloc` ×1", "calls", names=["cudaMalloc"], stat="count"),
              self.claim("20%", "ratio", num={"measure": "idle_ns", "params": {"device": 0, "causes": ["allocator"]}},
                         den={"measure": "window_ns", "params": {}}),
              self.claim("`aten::empty`", "ancestor", slice={"name": "cudaMalloc", "start_ns": 50_000},
                         name="aten::empty")]
        for c in ok:
            self.assertIsNone(A.check_claim(self.ctx, c, f), c["text"])
        bad = [self.claim("300 us", "idle_ns", device=0, causes=["allocator"]),
               self.claim("`cudaMalloc` ×2", "calls", names=["cudaMalloc"], stat="count"),
               self.claim("`cudaFree` ×1", "calls", names=["cudaMalloc"], stat="count"),
               self.claim("`aten::add`", "ancestor", slice={"name": "cudaMalloc", "start_ns": 50_000}, name="aten::add")]
        for c in bad:
            self.assertIsNotNone(A.check_claim(self.ctx, c, f), c["text"])
        with self.assertRaises(A.Problem):
            A.check_claim(self.ctx, self.claim("1", "no_such_measure"), f)

    def test_premises(self):
        self.analysis["findings"] = [
            {"id": "a", "kind": "cpu_dispatch", "device": 0, "severity": "low", "confidence": 0.9,
             "title": "t", "explanation": "the training loop waits for the network", "fix": "f"},
            {"id": "b", "kind": "cpu_dispatch", "device": 0, "severity": "high", "confidence": 0.5,
             "title": "t", "explanation": "e", "fix": "allow TF32"}]
        probs = " | ".join(A.check_premises(self.ctx))
        self.assertIn("says 'network'", probs)
        self.assertIn("without a backward pass", probs)
        self.assertIn("high at confidence 0.5", probs)
        self.assertIn("order", probs)
        self.assertIn("advises TF32", probs)


class Texts(unittest.TestCase):
    def test_shown_numbers(self):
        self.assertEqual(A.shown_number("3.35 s")[:2], ("dur", 3.35e9))
        self.assertEqual(A.shown_number("65%")[:2], ("share", 0.65))
        self.assertEqual(A.shown_number("`hipFree` ×1,360")[:2], ("count", 1360))
        self.assertEqual(A.shown_number("0.1 GB/s")[:2], ("bw", 0.1))
        self.assertEqual(A.shown_number("344.7 GFLOP")[:2], ("flop", 344.7e9))
        self.assertEqual(A.shown_number("7.x")[:2], ("cap", 7.0))
        self.assertEqual(A.shown_number("stream 7 ")[:2], ("count", 7))

    def test_agreement(self):
        ag = A.agree
        self.assertTrue(ag("dur", 3.0e6, 1e6, 1, 2.981e6))            # rounds to it
        self.assertTrue(ag("dur", 122e3, 1e3, 0, 127e3))              # 5 us + the last digit
        self.assertFalse(ag("dur", 122e3, 1e3, 0, 129e3))
        self.assertTrue(ag("dur", 71.3e6, 1e6, 1, 72.7e6))            # 2 % + 0.1 ms
        self.assertFalse(ag("dur", 71.3e6, 1e6, 1, 73.27e6))
        self.assertTrue(ag("share", 0.99, 0.01, 0, 0.9736))           # 1 point + the last digit
        self.assertFalse(ag("share", 0.99, 0.01, 0, 0.965))
        self.assertTrue(ag("bytes", 115e6, 1e6, 0, 115607040))        # 2 %
        self.assertFalse(ag("count", 185, 1, 0, 189))

    def test_coverage(self):
        f = {"title": "GPU utilisation is 36%",
             "explanation": "Idle 3.0 ms in `cudaMemcpy2D` on an H100 with fp32 kernels, 2 of 5 steps.",
             "fix": "1. use bfloat16; 2. profile 10 steps",
             "claims": [{"text": "36%"}, {"text": "3.0 ms"}, {"text": "`cudaMemcpy2D`"}, {"text": "2"}]}
        miss = A.coverage(f)
        self.assertEqual([m.split(" ")[0] for m in miss], ["5", "10"])
        # each claim covers one occurrence
        f = {"title": "1 of 1 steps", "explanation": "", "fix": "", "claims": [{"text": "1"}]}
        self.assertEqual(len(A.coverage(f)), 1)


if __name__ == "__main__":
    unittest.main()
