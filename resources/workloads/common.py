"""Shared harness of the Stallscope stall workloads.

Every workload script (data_loading.py, small_batch.py, ...) builds a `Workload` whose
`step(i)` runs one training iteration, *including* fetching its batch, and hands it to
`main()`, which owns what is the same everywhere:

* the command line (`--variant bad|fixed --device cuda|cpu --steps N --profile ...`),
* the device choice and the size preset for it (small on the CPU, realistic on a GPU),
* seeding, so that the same `--steps` gives the same operators and kernels per step,
* the profiler: torch.profiler (Kineto) with `prof.step()`, the legacy autograd profiler
  with `ProfilerStep#N` ranges, or none (an external recorder traces the process),
* timing and the one-line JSON summary printed last on stdout.

Only PyTorch and the standard library are used, and only APIs that PyTorch 1.13 (Debian's
python3-torch, CPU only, no Kineto) and PyTorch 2.x (CUDA) both have; anything newer is
guarded.
"""

import argparse
import gzip
import json
import os
import random
import shutil
import sys
import tempfile
import time
import warnings

import torch

VARIANTS = ("bad", "fixed")


# --------------------------------------------------------------------------------------
# Workload interface
# --------------------------------------------------------------------------------------

class Workload:
    """One training job. Subclasses set `batch_size` and implement `step()`."""

    batch_size = 0

    def step(self, i):
        """Run training iteration `i`: fetch the batch, forward, backward, optimizer step,
        and whatever else the loop does every step (logging, checkpointing, ...)."""
        raise NotImplementedError

    def finish(self):
        """After the last step, outside every step range (the fixed variants' final
        checkpoint or final metrics read)."""

    def close(self):
        """Release resources (DataLoader workers, temporary files)."""

    def info(self):
        """Extra fields for the JSON summary."""
        return {}


# --------------------------------------------------------------------------------------
# Command line, device, seeds
# --------------------------------------------------------------------------------------

def make_parser(name, description):
    parser = argparse.ArgumentParser(
        prog=f"{name}.py", description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=VARIANTS, default="bad",
                        help="bad: the planted stall; fixed: the same job with the fix (default bad)")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                        help="auto: cuda when available, else cpu (also picks the size preset)")
    parser.add_argument("--steps", type=int, default=None,
                        help="steps to record/measure after the warm-up (default: the preset's)")
    parser.add_argument("--samples", type=int, default=None,
                        help="instead of --steps: samples to process; steps = samples / batch size")
    parser.add_argument("--warmup", type=int, default=None,
                        help="steps before recording starts (default: 2 on cpu, 5 on cuda)")
    parser.add_argument("--profile", choices=("auto", "kineto", "legacy", "none"), default="auto",
                        help="kineto: torch.profiler; legacy: torch.autograd.profiler without Kineto "
                             "(PyTorch 1.13 CPU builds); none: no profiler in the script (record it "
                             "with `stallscope-cli record` or `record --attach`); auto: kineto when "
                             "available, else legacy")
    parser.add_argument("--out", default=None,
                        help="Chrome trace to write (.json or .json.gz; default "
                             "<workload>_<variant>_<device>.pt.trace.json)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="keep running steps until S seconds have passed (at least warm-up + "
                             "--steps when profiling); prints steps/s once a second on stderr")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="override the preset's batch size")
    parser.add_argument("--with-stack", action="store_true",
                        help="kineto: record Python stacks (print, torch.save, ... become visible)")
    parser.add_argument("--nvtx", choices=("auto", "on", "off"), default="auto",
                        help="NVTX ranges ProfilerStep#N around each step (auto: on with "
                             "--profile none on cuda, so that a CUPTI recording sees the steps)")
    parser.add_argument("--cuda-profiler-range", action="store_true",
                        help="call torch.cuda.profiler.start()/stop() around the measured steps "
                             "(for `stallscope-cli record --cuda-profiler-range`)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def choose_device(name):
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda but torch.cuda.is_available() is False "
                 f"(torch {torch.__version__})")
    return torch.device(name)


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def kineto_available():
    """True when torch.profiler can record (PyTorch 2.x; Debian's 1.13 build has no Kineto)."""
    for owner in (getattr(torch, "profiler", None), torch.autograd, torch.autograd.profiler):
        fn = getattr(owner, "kineto_available", None)
        if fn is not None:
            try:
                return bool(fn())
            except Exception:
                return False
    return False


def choose_profile(name):
    if name == "auto":
        return "kineto" if kineto_available() else "legacy"
    if name == "kineto" and not kineto_available():
        sys.exit("error: --profile kineto but this PyTorch has no Kineto "
                 f"(torch {torch.__version__}); use --profile legacy")
    return name


# --------------------------------------------------------------------------------------
# Small helpers the workloads share
# --------------------------------------------------------------------------------------

def make_mlp(in_features, hidden, depth, out_features, norm=False):
    """A plain MLP: `depth` hidden Linear layers (+ LayerNorm when `norm`) with GELU."""
    layers = []
    width = in_features
    for _ in range(depth):
        layers.append(torch.nn.Linear(width, hidden))
        if norm:
            layers.append(torch.nn.LayerNorm(hidden))
        layers.append(torch.nn.GELU())
        width = hidden
    layers.append(torch.nn.Linear(width, out_features))
    return torch.nn.Sequential(*layers)


def batch_pool(count, batch_size, in_features, classes, device, seed):
    """`count` random (x, y) batches, generated once so that fetching a batch costs nothing
    (for the workloads whose stall is not the input pipeline)."""
    gen = torch.Generator().manual_seed(seed + 12345)
    pool = []
    for _ in range(count):
        x = torch.randn(batch_size, in_features, generator=gen)
        y = torch.randint(0, classes, (batch_size,), generator=gen)
        pool.append((x.to(device), y.to(device)))
    return pool


class EndlessLoader:
    """Iterates a DataLoader forever, starting a new epoch when one ends (with
    persistent_workers the workers are kept between epochs)."""

    def __init__(self, loader):
        self.loader = loader
        self.it = iter(loader)

    def next(self):
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)

    def close(self):
        # Shuts the workers of a multi-process iterator down now rather than at exit.
        shutdown = getattr(self.it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        self.it = None


def set_tf32(enabled):
    """TF32 for FP32 matrix multiplies and convolutions (the legacy flags: they exist in
    1.13 and every 2.x)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for owner in (torch.backends.cuda.matmul, torch.backends.cudnn):
            try:
                owner.allow_tf32 = enabled
            except Exception:
                pass


def per_variant(preset, key, variant):
    """preset["<key>_<variant>"] when the preset has one, else preset["<key>_size"] or
    preset[key] (e.g. batch_bad / batch_fixed, else batch_size)."""
    for k in (f"{key}_{variant}", f"{key}_size", key):
        if k in preset:
            return preset[k]
    raise KeyError(key)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --------------------------------------------------------------------------------------
# Profilers
# --------------------------------------------------------------------------------------

def legacy_profiler():
    """The autograd profiler without Kineto: CPU operators and record_function ranges."""
    legacy = getattr(torch.autograd, "profiler_legacy", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if legacy is not None and hasattr(legacy, "profile"):
            return legacy.profile()
        return torch.autograd.profiler.profile(use_kineto=False)


def export_trace(prof, out):
    """Chrome trace to `out`; gzip it when `out` ends with .gz."""
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    if not out.endswith(".gz"):
        prof.export_chrome_trace(out)
        return
    fd, tmp = tempfile.mkstemp(suffix=".json", dir=out_dir)
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        with open(tmp, "rb") as src, gzip.open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
    finally:
        os.unlink(tmp)


class StepMarkers:
    """Ranges around each step when the script runs its own loop without prof.step():
    record_function("ProfilerStep#N") (the legacy profiler's and Kineto on-demand tracing's
    step boundaries) and, optionally, an NVTX range (what a CUPTI recording sees)."""

    def __init__(self, use_record_function, use_nvtx):
        self.use_record_function = use_record_function
        self.use_nvtx = use_nvtx
        self.rf = None

    def begin(self, i):
        name = f"ProfilerStep#{i}"
        if self.use_nvtx:
            try:
                torch.cuda.nvtx.range_push(name)
            except Exception as e:          # a PyTorch built without NVTX
                print(f"warning: NVTX ranges unavailable ({e}); steps are not marked for "
                      "a CUPTI recording", file=sys.stderr)
                self.use_nvtx = False
        if self.use_record_function:
            self.rf = torch.autograd.profiler.record_function(name)
            self.rf.__enter__()

    def end(self):
        if self.rf is not None:
            self.rf.__exit__(None, None, None)
            self.rf = None
        if self.use_nvtx:
            torch.cuda.nvtx.range_pop()


# --------------------------------------------------------------------------------------
# The step loop
# --------------------------------------------------------------------------------------

def run(name, args, device, work, preset):
    """Run `work` under the chosen profiler and print the summary. Returns the summary."""
    profile = choose_profile(args.profile)

    # Steps: --steps, else --samples / batch size, else the preset's steps or samples.
    batch = work.batch_size
    if args.steps is not None:
        steps = args.steps
    elif args.samples is not None or "samples" in preset:
        samples = args.samples if args.samples is not None else preset["samples"]
        if samples % batch:
            sys.exit(f"error: --samples {samples} is not a multiple of the batch size {batch}")
        steps = samples // batch
    else:
        steps = preset["steps"]
    if steps < 1:
        sys.exit("error: at least one step is needed")
    warmup = args.warmup if args.warmup is not None else preset.get(
        "warmup", 5 if device.type == "cuda" else 2)
    out = args.out or f"{name}_{args.variant}_{device.type}.pt.trace.json"

    nvtx = args.nvtx == "on" or (args.nvtx == "auto" and profile == "none" and device.type == "cuda")
    if nvtx and device.type != "cuda":
        nvtx = False
    # prof.step() marks the steps under Kineto; everywhere else the loop marks them itself.
    markers = StepMarkers(use_record_function=(profile != "kineto"), use_nvtx=nvtx)

    kineto = None
    if profile == "kineto":
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        kineto = torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(wait=max(0, warmup - 1), warmup=min(1, warmup),
                                             active=steps, repeat=1),
            on_trace_ready=lambda p: export_trace(p, out),
            record_shapes=False,
            with_stack=args.with_stack)
    legacy = legacy_profiler() if profile == "legacy" else None

    first, last = warmup, warmup + steps - 1     # the measured (and recorded) steps
    cuda_events = None
    if device.type == "cuda":
        cuda_events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))

    t_loop = time.perf_counter()
    t_first = t_end = None
    t_tick, steps_at_tick = t_loop, 0

    def mark_end():
        # The measured span ends after the last recorded step (before Kineto writes its
        # trace) or, with --seconds, after the last step that was run.
        nonlocal t_end
        if cuda_events is not None:
            cuda_events[1].record()
        t_end = time.perf_counter()

    i = 0
    if kineto is not None:
        kineto.__enter__()
    try:
        while True:
            if i == first:
                if legacy is not None:
                    legacy.__enter__()
                if args.cuda_profiler_range and device.type == "cuda":
                    torch.cuda.profiler.start()
                if cuda_events is not None:
                    cuda_events[0].record()
                t_first = time.perf_counter()

            markers.begin(i)
            work.step(i)
            markers.end()

            if i == last:
                if args.seconds is None:
                    mark_end()
                if args.cuda_profiler_range and device.type == "cuda":
                    torch.cuda.profiler.stop()
                if legacy is not None:
                    legacy.__exit__(None, None, None)
            if kineto is not None:
                kineto.step()
            i += 1

            now = time.perf_counter()
            if args.seconds is None:
                if i <= last:
                    continue
                break
            if now - t_tick >= 1.0:
                rate = (i - steps_at_tick) / (now - t_tick)
                print(f"[{name}/{args.variant}] {now - t_loop:6.1f} s  step {i}  {rate:.1f} steps/s",
                      file=sys.stderr, flush=True)
                t_tick, steps_at_tick = now, i
            # With --seconds: run at least the recorded steps (or one measured step without
            # a profiler), then until the time is up, for a recorder that attaches meanwhile.
            min_steps = last + 1 if profile != "none" else first + 1
            if i < min_steps or now - t_loop < args.seconds:
                continue
            mark_end()
            break
        work.finish()
        sync(device)
        extra = work.info()
    finally:
        if kineto is not None:
            kineto.__exit__(None, None, None)
        work.close()

    # With --seconds every step after the warm-up is measured; otherwise the recorded ones.
    measured = (i - first) if args.seconds is not None else steps
    seconds = t_end - t_first
    if cuda_events is not None:
        cuda_events[1].synchronize()
        # GPU-side span: the host may have queued the last steps long before they ran.
        seconds = max(seconds, cuda_events[0].elapsed_time(cuda_events[1]) / 1000.0)

    trace = None
    if legacy is not None:
        export_trace(legacy, out)
        trace = os.path.abspath(out)
    elif kineto is not None:
        trace = os.path.abspath(out)

    summary = {
        "workload": name,
        "variant": args.variant,
        "device": device.type,
        "steps": measured,
        "seconds": round(seconds, 6),
        "step_ms_mean": round(seconds * 1000.0 / measured, 4),
        "trace": trace,
        "profile": profile,
        "recorded_steps": steps if profile != "none" else 0,
        "first_step": first,
        "warmup": warmup,
        "batch_size": batch,
        "samples": measured * batch,
        "torch": torch.__version__,
    }
    summary.update(extra)
    print(json.dumps(summary), flush=True)
    return summary


def main(name, description, presets, build, add_arguments=None):
    """Entry point of a workload script: parse, build the workload, run it."""
    parser = make_parser(name, description)
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args()
    device = choose_device(args.device)
    preset = dict(presets[device.type])
    if args.batch_size is not None:
        preset["batch_size"] = args.batch_size
        for key in ("batch_bad", "batch_fixed"):
            preset.pop(key, None)
    seed_everything(args.seed)
    work = build(args, device, preset)
    return run(name, args, device, work, preset)
