#!/usr/bin/env python3
"""The prepared GPU check (scripts/gpu-check.sh runs it).

For an NVIDIA machine with Python and PyTorch 2.x, but no Qt, no package manager and no
network: it uses the headless binaries built by scripts/build-headless.sh (bin/stallscope-cli,
lib/stallscope/libstallscope_cupti_injection.so) and the workloads of resources/workloads/.
Each workload runs, bad and fixed, under

  (a) torch.profiler          -> Kineto's trace (--profile kineto)
  (b) stallscope-cli record   -> Stallscope's CUPTI capture (--profile none, NVTX step ranges)
  (c) stallscope-cli record --attach -> Kineto's trace through the daemon protocol
      (KINETO_USE_DAEMON=1, no profiler code in the script)
  (d) nothing                 -> the step time without any profiler (for the overhead)

and the check asserts:
  * the planted stall is the top finding of each bad variant (a, b, c), and absent from the fix;
  * the CUPTI capture and the Kineto trace of the same workload agree on kernels per step and
    GPU busy time per step (within 5 %);
  * the capture's overhead on step time, (b) against (d), is at most 3 %.
Results go to OUT/results.json, with at most 8 compressed traces (<= 16 MiB each) in OUT/traces.

--dry-run (any machine, no GPU): the same runs on the CPU with short presets (Debian's torch
1.13 has no Kineto: the legacy profiler), checking what a CPU can show and marking the rest
"not applicable"; it proves the script, the binaries and the workloads work together.
"""

import argparse
import glob
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = os.path.join(ROOT, "resources", "workloads")

# The finding kinds that mean "the planted stall was found" (Stallscope's stable ids).
PLANTED = {
    "data_loading": ["data_loading"],
    "small_batch": ["cpu_dispatch", "low_utilization"],
    "sync_copies": ["blocking_h2d_copy", "host_sync"],
    "no_amp": ["no_tensor_cores"],
    "light_model": ["cpu_dispatch", "low_utilization"],
    "logging_checkpoint": ["logging_checkpoint", "host_sync"],
}
# A launch-bound model's whole fix on a GPU: larger batches and CUDA graphs (one launch per
# graph); larger batches alone may leave an eager model's microsecond kernels launch-bound.
GPU_EXTRA = {("light_model", "fixed"): ["--cuda-graphs"]}
ORDER = ["data_loading", "sync_copies", "logging_checkpoint", "no_amp", "small_batch", "light_model"]

MAX_TRACES = 8
MAX_TRACE_BYTES = 16 << 20


class Check:
    def __init__(self):
        self.started = time.monotonic()
        self.runs = []
        self.checks = []

    def elapsed(self):
        return time.monotonic() - self.started

    def check(self, name, status, detail):
        assert status in ("passed", "failed", "not_applicable", "skipped")
        self.checks.append({"check": name, "status": status, "detail": detail})
        mark = {"passed": "ok  ", "failed": "FAIL", "not_applicable": "n/a ", "skipped": "skip"}[status]
        print(f"[{self.elapsed():6.1f}s] {mark} {name}: {detail}", flush=True)


def log(ck, text):
    print(f"[{ck.elapsed():6.1f}s]      {text}", flush=True)


def last_json_line(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


class OutOfTime(Exception):
    pass


def on_signal(signum, frame):
    raise OutOfTime(f"signal {signum}")


def run(cmd, env=None, timeout=120, cwd=None):
    """(returncode, stdout+stderr, seconds); returncode None on timeout. The command runs in a
    process group of its own, all of which is killed on timeout (a workload under the CLI)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=max(1, timeout))
        return p.returncode, out, time.monotonic() - t
    except (subprocess.TimeoutExpired, OutOfTime) as e:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, _ = p.communicate()
        if isinstance(e, OutOfTime):
            raise
        return None, out, time.monotonic() - t


def analyse(cli, trace):
    """Stallscope's analysis JSON of one trace (the first when it is a list)."""
    rc, out, _ = run([cli, "analyze", "--json", trace], timeout=180)
    if rc != 0:
        return None, out[-2000:]
    try:
        data = json.loads(out)
    except ValueError as e:
        return None, f"not JSON: {e}"
    if isinstance(data, dict) and "traces" in data:
        data = data["traces"]
    return (data[0] if isinstance(data, list) and data else data), ""


def count_kernels(trace):
    """(steps, kernels) counted in the trace file itself: ProfilerStep#N ranges (CPU
    annotations or NVTX), and kernel events (category "kernel") that start inside them."""
    opener = gzip.open if trace.endswith(".gz") else open
    try:
        with opener(trace, "rt", encoding="utf-8", errors="replace") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return 0, 0
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    steps = [e for e in events if isinstance(e, dict) and str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("ph") == "X"]
    if not steps:
        return 0, 0
    lo = min(float(e["ts"]) for e in steps)
    hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in steps)
    kernels = sum(1 for e in events if isinstance(e, dict) and str(e.get("cat", "")).lower() == "kernel"
                  and lo <= float(e.get("ts", -1)) <= hi)
    return len({e["name"] for e in steps}), kernels


def figures(a, trace=None):
    """Per-step figures of an analysis: kernels, GPU kernel busy time, step time, findings."""
    steps = max(1, int(a.get("steps", {}).get("count") or 0))
    busy = 0
    launched = 0
    for dev in (a.get("devices") or {}).values():
        busy += int(dev.get("kernel_busy_ns") or 0)
        launched += sum(int(q.get("launched") or 0) for q in dev.get("queues") or [])
    kinds = [f.get("kind") for f in a.get("findings") or []]
    shares = {f.get("kind"): f.get("saving_pct") for f in a.get("findings") or []}
    counted_steps, kernels = count_kernels(trace) if trace else (0, 0)
    return {
        "steps": int(a.get("steps", {}).get("count") or 0),
        "step_ms": (a.get("steps", {}).get("mean_ns") or 0) / 1e6,
        "kernels_per_step": kernels / counted_steps if counted_steps else 0.0,
        "gpu_launches_per_step": launched / steps,
        "busy_ms_per_step": busy / steps / 1e6,
        "findings": kinds,
        "saving_pct": shares,
        "top": kinds[0] if kinds else None,
    }


def needed_cupti(injection):
    """The libcupti soname the injection library needs ("libcupti.so.13"), or None."""
    try:
        out = subprocess.run(["objdump", "-p", injection], stdout=subprocess.PIPE, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "NEEDED" and parts[1].startswith("libcupti.so"):
            return parts[1]
    return None


def find_cupti_dir(python, soname):
    """The folder of a libcupti with `soname` for the recorded program's LD_LIBRARY_PATH:
    PyTorch's own (pip nvidia-* packages) first, then the CUDA toolkit's CUPTI folders (never a
    folder of the toolkit's other libraries, which would override PyTorch's)."""
    code = ("import os,glob,torch;r=os.path.dirname(os.path.dirname(torch.__file__));"
            "print('\\n'.join(sorted({os.path.dirname(p) for p in glob.glob(r+'/nvidia/**/libcupti.so*',recursive=True)})))")
    rc, out, _ = run([python, "-c", code], timeout=60)
    dirs = [d.strip() for d in out.split("\n") if rc == 0 and d.strip()]
    dirs += sorted(glob.glob("/usr/local/cuda*/extras/CUPTI/lib64"))
    for d in dirs:
        if soname and os.path.exists(os.path.join(d, soname)):
            return d
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the CPU presets, what a CPU can check")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(os.getcwd(), "gpu-check-out"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "dist", "headless"),
                    help="the headless build folder (bin/stallscope-cli, lib/stallscope/...)")
    ap.add_argument("--cli", default=None, help="stallscope-cli to use (default: BIN/bin/stallscope-cli)")
    ap.add_argument("--python", default=None, help="a Python with PyTorch (default: the first that imports torch)")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--budget", type=float, default=440, help="seconds; later runs are skipped past it")
    ap.add_argument("--steps", type=int, default=None, help="steps per run (default: the workload preset's)")
    args = ap.parse_args()

    if args.dry_run and not self_test():
        return 1
    ck = Check()
    state = {"env": {"dry_run": args.dry_run}, "results": [], "keep": []}
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        plan_and_run(ck, args, state)
    except OutOfTime as e:
        ck.check("time", "failed", f"stopped by {e}: the results so far are kept")
    except Exception as e:  # a bug here must still leave results.json behind
        ck.check("internal", "failed", f"{type(e).__name__}: {e}")
    return finish(ck, args, state["env"], state["results"], state["keep"])


def plan_and_run(ck, args, state):
    env_info = state["env"]
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="stallscope-gpu-check-")
    cli = args.cli or os.path.join(args.bin, "bin", "stallscope-cli")
    python = args.python
    if python is None:
        for cand in [os.environ.get("PYTHON"), sys.executable, "python3", "/usr/bin/python3"]:
            if cand and run([cand, "-c", "import torch"], timeout=60)[0] == 0:
                python = cand
                break
    env_info.update({"cli": cli, "python": python})
    if not os.access(cli, os.X_OK):
        ck.check("binaries", "failed", f"{cli} is missing: build it with scripts/build-headless.sh and carry dist/")
        return
    rc, out, _ = run([cli, "--version"])
    env_info["stallscope"] = out.strip().splitlines()
    ck.check("binaries", "passed" if rc == 0 else "failed", " | ".join(out.strip().splitlines()))
    if python is None:
        ck.check("python", "failed", "no Python with PyTorch found (give --python)")
        return
    probe = ("import json,torch;from torch.autograd import profiler as p;"
             "c=torch.cuda.is_available();"
             "print(json.dumps({'torch':torch.__version__,'cuda':c,'gpu':torch.cuda.get_device_name(0) if c else None,"
             "'cuda_version':torch.version.cuda,'kineto':bool(getattr(p,'kineto_available',lambda:False)())}))")
    rc, out, _ = run([python, "-c", probe], timeout=120)
    info = last_json_line(out) or {}
    env_info.update(info)
    ck.check("python", "passed" if info else "failed", out.strip().splitlines()[-1] if out.strip() else "no output")
    if not info:
        return
    gpu = bool(info.get("cuda")) and not args.dry_run
    if not gpu and not args.dry_run:
        ck.check("gpu", "failed", "PyTorch sees no CUDA device: run on a GPU machine, or --dry-run")
        return
    device = "cuda" if gpu else "cpu"
    profile = "kineto" if info.get("kineto") else "legacy"
    log(ck, f"device {device} ({info.get('gpu') or 'CPU'}), torch {info.get('torch')}, profiler {profile}")

    base_env = dict(os.environ)
    cupti_env = dict(base_env)
    if args.dry_run:
        # A dynolog (or another run) on this machine must not meet the dry run's attach.
        base_env["KINETO_IPC_SOCKET_DIR"] = cupti_env["KINETO_IPC_SOCKET_DIR"] = work
    if gpu:
        injection = os.path.join(os.path.dirname(os.path.dirname(cli)), "lib", "stallscope",
                                 "libstallscope_cupti_injection.so")
        soname = needed_cupti(injection)
        cupti_dir = find_cupti_dir(python, soname)
        env_info.update({"injection": injection, "injection_needs": soname, "cupti_dir": cupti_dir})
        if cupti_dir:
            cupti_env["LD_LIBRARY_PATH"] = ":".join(x for x in (cupti_dir, base_env.get("LD_LIBRARY_PATH")) if x)
            ck.check("cupti", "passed", f"{soname} for the injection library from {cupti_dir}")
        else:
            ck.check("cupti", "failed", f"no {soname} next to PyTorch or in the CUDA toolkit: the injection library "
                     f"({injection}) cannot load; build it against this machine's CUDA major version")
    # Kineto polls for on-demand traces every second instead of five (attach).
    kineto_cfg = os.path.join(work, "kineto.conf")
    with open(kineto_cfg, "w") as f:
        f.write("ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1\n")

    names = [w for w in ORDER if not args.only or w in args.only.split(",")]
    results = state["results"]
    keep = state["keep"]
    by_key = {}
    for name in names:
        for variant in ("bad", "fixed"):
            r = {"workload": name, "variant": variant, "modes": {}}
            by_key[(name, variant)] = r
            results.append(r)

    def left():
        return args.budget - ck.elapsed()

    def base(name, variant):
        cmd = [python, os.path.join(WORKLOADS, name + ".py"), "--variant", variant, "--device", device]
        if gpu and (name, variant) in GPU_EXTRA:
            cmd += GPU_EXTRA[(name, variant)]
        return cmd + (["--steps", str(args.steps)] if args.steps else [])

    def mode_plain(r):
        rc, out, secs = run(base(r["workload"], r["variant"]) + ["--profile", "none", "--nvtx", "on"],
                            env=base_env, timeout=min(180, left()))
        r["modes"]["plain"] = {"rc": rc, "seconds": round(secs, 1), "summary": last_json_line(out)}

    def mode_kineto(r):
        trace = os.path.join(work, f"{r['workload']}-{r['variant']}-kineto.json")
        rc, out, secs = run(base(r["workload"], r["variant"]) + ["--profile", profile, "--out", trace],
                            env=base_env, timeout=min(240, left()))
        a, why = analyse(cli, trace) if rc == 0 and os.path.exists(trace) else (None, out[-600:])
        r["modes"]["kineto"] = {"rc": rc, "seconds": round(secs, 1), "summary": last_json_line(out),
                                "analysis": figures(a, trace) if a else None, "error": why if not a else None}
        if a:
            keep.append((0 if r["variant"] == "bad" else 3, trace))

    def mode_cupti(r):
        # Only the measured steps (cudaProfilerStart/Stop around them): the same steps as
        # torch.profiler's active ones, for the comparison.
        cap = os.path.join(work, f"{r['workload']}-{r['variant']}-cupti.pt.trace.json.gz")
        rc, out, secs = run([cli, "record", "--cuda-profiler-range", "-o", cap, "--"] +
                            base(r["workload"], r["variant"]) + ["--profile", "none", "--nvtx", "on",
                                                                  "--cuda-profiler-range"],
                            env=cupti_env, timeout=min(240, left()))
        a, why = analyse(cli, cap) if os.path.exists(cap) else (None, out[-600:])
        r["modes"]["cupti"] = {"rc": rc, "seconds": round(secs, 1), "summary": last_json_line(out),
                               "analysis": figures(a, cap) if a else None, "error": why if not a else None,
                               "note": next((l.strip() for l in out.splitlines() if "note:" in l), None)}
        if a and gpu:
            keep.append((1 if r["variant"] == "bad" else 4, cap))

    def mode_attach(r):
        att = os.path.join(work, f"{r['workload']}-{r['variant']}-attach.pt.trace.json.gz")
        jenv = dict(base_env, KINETO_USE_DAEMON="1", KINETO_CONFIG=kineto_cfg)
        job = subprocess.Popen(base(r["workload"], r["variant"]) + ["--profile", "none", "--nvtx", "off",
                                                                    "--seconds", "40"],
                               env=jenv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            rc, out, secs = run([cli, "record", "--attach", "--pid", str(job.pid), "--duration", "2",
                                 "--kineto-warmup", "1", "--wait", "20" if gpu else "3", "--timeout", "60",
                                 "-o", att], env=base_env, timeout=min(120, left()))
        finally:
            try:
                os.killpg(job.pid, signal.SIGKILL)
            except OSError:
                pass
            job.wait()
        a, why = analyse(cli, att) if rc == 0 and os.path.exists(att) else (None, out[-800:])
        r["modes"]["attach"] = {"rc": rc, "seconds": round(secs, 1),
                                "analysis": figures(a, att) if a else None, "error": why if not a else None}
        if a:
            keep.append((2 if r["variant"] == "bad" else 5, att))

    # The most telling runs first, so that a machine slower than planned still answers the
    # main questions within the budget: torch.profiler and CUPTI for every pair, the step
    # time without a profiler on the bad variants, then attach (bad, then fixed).
    plan = []
    for name in names:
        for variant in ("bad", "fixed"):
            plan.append(("kineto", (name, variant), mode_kineto))
            plan.append(("cupti", (name, variant), mode_cupti))
            if variant == "bad":
                plan.append(("plain", (name, variant), mode_plain))
    for variant in ("bad", "fixed"):
        for name in names:
            plan.append(("attach", (name, variant), mode_attach))
    for mode, key, fn in plan:
        if left() < 20:
            ck.check(f"{key[0]}/{key[1]}/{mode}", "skipped", f"time budget of {args.budget:.0f} s spent")
            by_key[key]["modes"].setdefault(mode, {"skipped": True})
            continue
        fn(by_key[key])
        log(ck, f"{key[0]}/{key[1]}/{mode} done")
    for r in results:
        judge(ck, r, gpu, info)
    compare(ck, results, gpu)


def judge(ck, r, gpu, info):
    """Planted stall found in bad, absent in fixed (per mode)."""
    name, variant = r["workload"], r["variant"]
    planted = PLANTED[name]
    for mode in ("kineto", "cupti", "attach"):
        m = r["modes"].get(mode) or {}
        a = m.get("analysis")
        label = f"{name}/{variant}/{mode}"
        if m.get("skipped"):
            continue  # said when it was skipped
        if not gpu:
            if mode == "kineto":
                ok = a is not None and "gpu_not_used" in a["findings"] and a["steps"] > 0
                ck.check(label, "passed" if ok else "failed",
                         f"CPU trace analysed: {a['steps'] if a else 0} steps, findings {a['findings'] if a else m.get('error')}")
            elif mode == "cupti":
                ok = m.get("rc") == 0
                ck.check(label, "passed" if ok else "failed",
                         "recorded without a GPU: " + (m.get("note") or "no note") if ok else f"record failed: {m.get('error')}")
            else:
                # Debian's torch has no Kineto: no process polls; the CLI must say so and fail cleanly.
                err = m.get("error") or ""
                ok = m.get("rc") == 1 and "KINETO_USE_DAEMON" in err
                status = "passed" if ok else ("not_applicable" if a else "failed")
                ck.check(label, status, "no Kineto in this PyTorch: attach says so" if ok else err[-300:])
            continue
        if a is None:
            ck.check(label, "failed", f"no analysis: {(m.get('error') or '')[-400:]}")
            continue
        if variant == "bad":
            ok = a["top"] in planted
            ck.check(label, "passed" if ok else "failed",
                     f"top finding {a['top']} (planted: {'/'.join(planted)}); all: {a['findings'][:5]}")
        else:
            found = [k for k in a["findings"] if k in planted]
            ck.check(label, "passed" if not found else "failed",
                     f"planted stall absent from the fix" if not found else f"still found: {found}")


def compare(ck, results, gpu):
    """CUPTI capture vs Kineto trace of the same workload; capture overhead."""
    for r in results:
        label = f"{r['workload']}/{r['variant']}"
        k = (r["modes"].get("kineto") or {}).get("analysis")
        c = (r["modes"].get("cupti") or {}).get("analysis")
        if not gpu:
            ck.check(label + "/agreement", "not_applicable", "kernels and GPU busy time need a GPU")
            ck.check(label + "/overhead", "not_applicable", "capture overhead needs a GPU")
            continue
        if (r["modes"].get("kineto") or {}).get("skipped") or (r["modes"].get("cupti") or {}).get("skipped"):
            continue
        if not k or not c or not k["kernels_per_step"] or not c["kernels_per_step"]:
            ck.check(label + "/agreement", "failed", "a capture is missing, or holds no kernel in its steps")
        else:
            dk = c["kernels_per_step"] / k["kernels_per_step"] - 1 if k["kernels_per_step"] else float("inf")
            db = c["busy_ms_per_step"] / k["busy_ms_per_step"] - 1 if k["busy_ms_per_step"] else float("inf")
            ok = abs(dk) <= 0.05 and abs(db) <= 0.05
            ck.check(label + "/agreement", "passed" if ok else "failed",
                     f"kernels/step CUPTI {c['kernels_per_step']:.1f} vs Kineto {k['kernels_per_step']:.1f} ({dk:+.1%}); "
                     f"busy/step {c['busy_ms_per_step']:.3f} vs {k['busy_ms_per_step']:.3f} ms ({db:+.1%})")
        if "plain" not in r["modes"] or r["modes"]["plain"].get("skipped"):
            continue  # measured on the bad variants
        plain = ((r["modes"].get("plain") or {}).get("summary") or {}).get("step_ms_mean")
        rec = ((r["modes"].get("cupti") or {}).get("summary") or {}).get("step_ms_mean")
        if not c or not c["kernels_per_step"]:
            # A recorder that captured nothing costs nothing: not an overhead measurement.
            ck.check(label + "/overhead", "failed", "the CUPTI capture holds no kernel: no overhead to measure")
        elif plain and rec:
            over = rec / plain - 1
            ck.check(label + "/overhead", "passed" if over <= 0.03 else "failed",
                     f"step {rec:.3f} ms under record vs {plain:.3f} ms without ({over:+.1%}; target <= 3 %)")
        else:
            ck.check(label + "/overhead", "failed", "a step time is missing (the workload's summary line)")


def self_test():
    """The GPU-side verdicts on made-up figures (a dry run cannot reach them otherwise)."""
    def fig(top, kinds, kernels, busy):
        return {"steps": 10, "step_ms": 5.0, "kernels_per_step": kernels, "busy_ms_per_step": busy,
                "findings": kinds, "top": top, "saving_pct": {}}
    ck = Check()
    bad = {"workload": "data_loading", "variant": "bad", "modes": {
        "kineto": {"analysis": fig("data_loading", ["data_loading", "host_sync"], 100, 2.0)},
        "cupti": {"analysis": fig("data_loading", ["data_loading"], 103, 2.05), "summary": {"step_ms_mean": 10.2}},
        "attach": {"analysis": fig("host_sync", ["host_sync", "data_loading"], 100, 2.0)},
        "plain": {"summary": {"step_ms_mean": 10.0}}}}
    fixed = {"workload": "data_loading", "variant": "fixed", "modes": {
        "kineto": {"analysis": fig("no_tensor_cores", ["no_tensor_cores"], 100, 2.0)},
        "cupti": {"analysis": fig(None, [], 120, 2.0), "summary": {"step_ms_mean": 10.5}},
        "attach": {"analysis": fig("data_loading", ["data_loading"], 100, 2.0)}}}
    skipped = {"workload": "no_amp", "variant": "fixed", "modes": {"kineto": {"skipped": True}, "cupti": {"skipped": True},
                                                                  "attach": {"skipped": True}}}
    for r in (bad, fixed, skipped):
        judge(ck, r, True, {})
    compare(ck, [bad, fixed, skipped], True)
    got = [(c["check"], c["status"]) for c in ck.checks]
    want = [("data_loading/bad/kineto", "passed"), ("data_loading/bad/cupti", "passed"),
            ("data_loading/bad/attach", "failed"), ("data_loading/fixed/kineto", "passed"),
            ("data_loading/fixed/cupti", "passed"), ("data_loading/fixed/attach", "failed"),
            ("data_loading/bad/agreement", "passed"), ("data_loading/bad/overhead", "passed"),
            ("data_loading/fixed/agreement", "failed")]
    if got != want:
        print("gpu-check self-test FAILED:\n  got  %s\n  want %s" % (got, want))
        return False
    # The overhead verdict's failing side.
    bad["modes"]["cupti"]["summary"]["step_ms_mean"] = 10.5
    compare(ck, [bad], True)
    if ck.checks[-1]["status"] != "failed":
        print("gpu-check self-test FAILED: a 5 % overhead passed")
        return False
    # A capture without kernels is neither agreement nor overhead.
    bad["modes"]["cupti"]["analysis"]["kernels_per_step"] = 0.0
    compare(ck, [bad], True)
    if [c["status"] for c in ck.checks[-2:]] != ["failed", "failed"]:
        print("gpu-check self-test FAILED: an empty capture passed")
        return False
    print("gpu-check self-test: the GPU verdicts behave (14 cases)")
    return True


def finish(ck, args, env_info, results, keep=()):
    os.makedirs(os.path.join(args.out, "traces"), exist_ok=True)
    kept = []
    for _, path in sorted(keep):
        if len(kept) >= MAX_TRACES:
            break
        dest = os.path.join(args.out, "traces", os.path.basename(path))
        if not dest.endswith(".gz"):
            dest += ".gz"
            with open(path, "rb") as src, gzip.open(dest, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(path, dest)
        if os.path.getsize(dest) > MAX_TRACE_BYTES:
            os.remove(dest)
            continue
        kept.append(os.path.basename(dest))
    counts = {s: sum(1 for c in ck.checks if c["status"] == s) for s in ("passed", "failed", "not_applicable", "skipped")}
    doc = {"schema": "stallscope.gpu-check/1", "environment": env_info, "seconds": round(ck.elapsed(), 1),
           "summary": counts, "checks": ck.checks, "runs": results, "traces": kept}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"gpu-check: {counts['passed']} passed, {counts['failed']} failed, {counts['not_applicable']} not applicable, "
          f"{counts['skipped']} skipped in {ck.elapsed():.0f} s; {len(kept)} traces; results in "
          f"{os.path.join(args.out, 'results.json')}", flush=True)
    # 1: something failed; 2: nothing failed but runs were skipped (out of time); 0: all ran and passed.
    return 1 if counts["failed"] else (2 if counts["skipped"] else 0)


if __name__ == "__main__":
    sys.exit(main())
