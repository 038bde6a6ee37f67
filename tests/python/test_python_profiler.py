#!/usr/bin/env python3
"""stallscope.on_trace_ready with a real profiler run of the installed torch (Debian's 1.13, CPU).

    test_python_profiler.py [--cli STALLSCOPE_CLI] [--source CHECKOUT]

A loop of small matmuls fed by a DataLoader whose dataset sleeps 2 ms per item
(num_workers=0) runs under torch.profiler.profile (which works on this torch without
Kineto, through the legacy profiler) and under torch.autograd.profiler.profile (the handler
called after the `with` block; each step in a record_function("ProfilerStep#N") range, as
torch.profiler's step() marks them). Checks: the file name has the same pattern as the one
torch.profiler.tensorboard_trace_handler writes in the same run, the handler printed the
title, cost and fix of every finding analyze() gives for that file, and handler.last_analysis
equals analyze(file).

What the CLI says of these CPU-only traces (asserted): "gpu_not_used" (no GPU work, first,
context) and "data_loading" (device -1: the step thread waits for the DataLoader, ~98 % of
step time; the 8 ms of sleep per batch dwarf the matmuls); with fail_on="data_loading:50" the
handler raises GateFailed. Skips (77) when `import torch` fails.
"""
import io
import os
import pathlib
import re
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402

OPTS, REST = common.parse()
import stallscope  # noqa: E402

try:
    import torch
    import torch.profiler
    from torch.utils.data import DataLoader, Dataset
    TORCH_ERROR = None
except Exception as e:  # ImportError, or a broken install
    TORCH_ERROR = f"import torch failed: {type(e).__name__}: {e}"

if TORCH_ERROR is None:
    class SlowDataset(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            time.sleep(0.002)
            return torch.full((32,), float(i))


def training_loop(steps, step_fn=None, mark_steps=False):
    """`steps` steps; mark_steps: each in a ProfilerStep#N range, as torch.profiler's step()
    records them (the legacy profiler records none; without them the trace has no steps)."""
    torch.manual_seed(0)
    w = torch.randn(32, 32)
    batches = iter(DataLoader(SlowDataset(), batch_size=4, num_workers=0))
    for i in range(steps):
        scope = torch.autograd.profiler.record_function(f"ProfilerStep#{i}") if mark_steps else None
        if scope:
            scope.__enter__()
        x = next(batches)
        for _ in range(3):
            x = torch.relu(x @ w)
        if scope:
            scope.__exit__(None, None, None)
        if step_fn:
            step_fn()


def name_pattern(name):
    """{worker}.{digits}.pt.trace.json with the number of digits spelt out."""
    m = re.fullmatch(r"(.+)\.(\d+)\.pt\.trace\.json(\.gz)?", name)
    assert m, name
    return (m.group(1), len(m.group(2)), m.group(3))


@unittest.skipIf(TORCH_ERROR is not None, TORCH_ERROR or "")
class Profiler(unittest.TestCase):
    def check(self, handler, out):
        trace = handler.last_trace
        self.assertTrue(os.path.isfile(trace), trace)
        a = stallscope.analyze(trace)
        self.assertEqual(handler.last_analysis, a)
        kinds = [f["kind"] for f in a.findings]
        self.assertIn("gpu_not_used", kinds)
        self.assertIn("data_loading", kinds)
        loading = a.findings[kinds.index("data_loading")]
        self.assertEqual(loading["device"], -1)
        self.assertGreater(loading["saving_pct"], 50)
        text = common.squash(out.getvalue())
        for f in a.findings[:3]:
            self.assertIn(common.squash(f["title"]), text)
            self.assertIn(common.squash(f["fix"]), text)
        self.assertIn(f"{loading['saving_pct']}% of step time", text)
        return a

    def test_torch_profiler(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = io.StringIO()
            handler = stallscope.on_trace_ready(pathlib.Path(tmp, "log"), file=out)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
                                        on_trace_ready=handler) as prof:
                training_loop(6, prof.step)
            self.assertEqual(len(handler.traces), 1)
            self.check(handler, out)
            # torch's own handler in the same process: the same name pattern.
            ref_dir = pathlib.Path(tmp, "ref")
            torch.profiler.tensorboard_trace_handler(str(ref_dir))(prof)
            (ref,) = os.listdir(ref_dir)
            ours = pathlib.Path(handler.last_trace)
            self.assertEqual(ours.parent, pathlib.Path(tmp, "log"))
            self.assertEqual(name_pattern(ours.name), name_pattern(ref))
            self.assertEqual(name_pattern(ours.name)[0], f"{__import__('socket').gethostname()}_{os.getpid()}")

    def test_legacy_profiler_gzip_and_gate(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = io.StringIO()
            handler = stallscope.on_trace_ready(tmp, worker_name="rank0", use_gzip=True,
                                                fail_on="data_loading:50", file=out)
            with torch.autograd.profiler.profile() as prof:
                training_loop(3, mark_steps=True)
            with self.assertRaises(stallscope.GateFailed) as cm:
                handler(prof)
            self.assertIn("fail-on data_loading: data_loading saves", str(cm.exception))
            name = pathlib.Path(handler.last_trace).name
            ref_dir = pathlib.Path(tmp, "ref")
            torch.profiler.tensorboard_trace_handler(str(ref_dir), "rank0", use_gzip=True)(prof)
            self.assertEqual(name_pattern(name), name_pattern(os.listdir(ref_dir)[0]))
            with open(handler.last_trace, "rb") as f:
                self.assertEqual(f.read(2), b"\x1f\x8b")  # gzip, as torch.profiler writes .gz
            self.check(handler, out)


if __name__ == "__main__":
    common.main(REST)
