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


def run(cmd, env=None, timeout=120, cwd=None):
    """(returncode, stdout+stderr, seconds); returncode None on timeout."""
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        return p.returncode, p.stdout, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
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


def figures(a):
    """Per-step figures of an analysis: kernels, GPU kernel busy time, step time, findings."""
    steps = max(1, int(a.get("steps", {}).get("count") or 0))
    kernels = 0
    busy = 0
    for dev in (a.get("devices") or {}).values():
        busy += int(dev.get("kernel_busy_ns") or 0)
        kernels += sum(int(q.get("launched") or 0) for q in dev.get("queues") or [])
    kinds = [f.get("kind") for f in a.get("findings") or []]
    return {
        "steps": int(a.get("steps", {}).get("count") or 0),
        "step_ms": (a.get("steps", {}).get("mean_ns") or 0) / 1e6,
        "kernels_per_step": kernels / steps,
        "busy_ms_per_step": busy / steps / 1e6,
        "findings": kinds,
        "top": kinds[0] if kinds else None,
    }


def find_cupti_dirs(python):
    """Folders holding libcupti.so.* for the child's LD_LIBRARY_PATH: PyTorch's own (pip
    nvidia-* packages), then the CUDA toolkit's."""
    dirs = []
    code = ("import os,glob,torch;r=os.path.dirname(os.path.dirname(torch.__file__));"
            "print('\\n'.join(sorted({os.path.dirname(p) for p in glob.glob(r+'/nvidia/**/libcupti.so*',recursive=True)})))")
    rc, out, _ = run([python, "-c", code], timeout=60)
    if rc == 0:
        dirs += [d for d in out.split("\n") if d.strip() and os.path.isdir(d.strip())]
    for pattern in ("/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64", "/usr/local/cuda/lib",
                    "/usr/local/cuda-*/extras/CUPTI/lib64", "/usr/local/cuda-*/lib64"):
        for d in glob.glob(pattern):
            if glob.glob(os.path.join(d, "libcupti.so*")) and d not in dirs:
                dirs.append(d)
    return [d.strip() for d in dirs]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="no GPU: the CPU presets, what a CPU can check")
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(os.getcwd(), "gpu-check-out"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "dist", "headless"),
                    help="the headless build folder (bin/stallscope-cli, lib/stallscope/...)")
    ap.add_argument("--cli", default=None, help="stallscope-cli to use (default: BIN/bin/stallscope-cli)")
    ap.add_argument("--python", default=None, help="a Python with PyTorch (default: the first that imports torch)")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--budget", type=float, default=450, help="seconds; later runs are skipped past it")
    ap.add_argument("--steps", type=int, default=None, help="steps per run (default: the workload preset's)")
    args = ap.parse_args()

    if args.dry_run and not self_test():
        return 1
    ck = Check()
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="stallscope-gpu-check-")
    cli = args.cli or os.path.join(args.bin, "bin", "stallscope-cli")
    python = args.python
    if python is None:
        for cand in [os.environ.get("PYTHON"), sys.executable, "python3", "/usr/bin/python3"]:
            if cand and run([cand, "-c", "import torch"], timeout=60)[0] == 0:
                python = cand
                break
    env_info = {"dry_run": args.dry_run, "cli": cli, "python": python}
    if not os.access(cli, os.X_OK):
        ck.check("binaries", "failed", f"{cli} is missing: build it with scripts/build-headless.sh and carry dist/")
        return finish(ck, args, env_info, [])
    rc, out, _ = run([cli, "--version"])
    env_info["stallscope"] = out.strip().splitlines()
    ck.check("binaries", "passed" if rc == 0 else "failed", " | ".join(out.strip().splitlines()))
    if python is None:
        ck.check("python", "failed", "no Python with PyTorch found (give --python)")
        return finish(ck, args, env_info, [])
    probe = ("import json,torch;from torch.autograd import profiler as p;"
             "c=torch.cuda.is_available();"
             "print(json.dumps({'torch':torch.__version__,'cuda':c,'gpu':torch.cuda.get_device_name(0) if c else None,"
             "'cuda_version':torch.version.cuda,'kineto':bool(getattr(p,'kineto_available',lambda:False)())}))")
    rc, out, _ = run([python, "-c", probe], timeout=120)
    info = last_json_line(out) or {}
    env_info.update(info)
    ck.check("python", "passed" if info else "failed", out.strip().splitlines()[-1] if out.strip() else "no output")
    if not info:
        return finish(ck, args, env_info, [])
    gpu = bool(info.get("cuda")) and not args.dry_run
    if not gpu and not args.dry_run:
        ck.check("gpu", "failed", "PyTorch sees no CUDA device: run on a GPU machine, or --dry-run")
        return finish(ck, args, env_info, [])
    device = "cuda" if gpu else "cpu"
    profile = "kineto" if info.get("kineto") else "legacy"
    log(ck, f"device {device} ({info.get('gpu') or 'CPU'}), torch {info.get('torch')}, profiler {profile}")

    child_env = dict(os.environ)
    if gpu:
        cupti = find_cupti_dirs(python)
        env_info["cupti_dirs"] = cupti
        child_env["LD_LIBRARY_PATH"] = ":".join(cupti + [child_env.get("LD_LIBRARY_PATH", "")]).strip(":")
    # Kineto polls for on-demand traces every second instead of five (attach).
    kineto_cfg = os.path.join(work, "kineto.conf")
    with open(kineto_cfg, "w") as f:
        f.write("ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1\n")

    names = [w for w in ORDER if not args.only or w in args.only.split(",")]
    results = []
    keep = []  # (priority, path) of traces worth bringing back
    for name in names:
        script = os.path.join(WORKLOADS, name + ".py")
        for variant in ("bad", "fixed"):
            if ck.elapsed() > args.budget:
                ck.check(f"{name}/{variant}", "skipped", f"time budget of {args.budget:.0f} s spent")
                continue
            base = [python, script, "--variant", variant, "--device", device]
            if args.steps:
                base += ["--steps", str(args.steps)]
            r = {"workload": name, "variant": variant, "modes": {}}
            stem = os.path.join(work, f"{name}-{variant}")

            # (d) no profiler: the reference step time for the capture's overhead (bad variants:
            # the time budget does not allow both).
            if variant == "bad":
                rc, out, secs = run(base + ["--profile", "none", "--nvtx", "on"], env=child_env, timeout=180)
                summary = last_json_line(out)
                r["modes"]["plain"] = {"rc": rc, "seconds": round(secs, 1), "summary": summary}
                if rc != 0:
                    log(ck, f"{name}/{variant} plain run failed: {out[-600:]}")

            # (a) torch.profiler.
            trace = stem + "-kineto.json"
            rc, out, secs = run(base + ["--profile", profile, "--out", trace], env=child_env, timeout=240)
            a, why = analyse(cli, trace) if rc == 0 and os.path.exists(trace) else (None, out[-600:])
            r["modes"]["kineto"] = {"rc": rc, "seconds": round(secs, 1), "summary": last_json_line(out),
                                    "analysis": figures(a) if a else None, "error": why if not a else None}
            if a:
                keep.append((0 if variant == "bad" else 3, trace))

            # (b) stallscope-cli record (CUPTI injection), NVTX step ranges.
            cap = stem + "-cupti.pt.trace.json.gz"
            rc, out, secs = run([cli, "record", "-o", cap, "--"] + base + ["--profile", "none", "--nvtx", "on"],
                                env=child_env, timeout=240)
            a, why = analyse(cli, cap) if os.path.exists(cap) else (None, out[-600:])
            r["modes"]["cupti"] = {"rc": rc, "seconds": round(secs, 1), "summary": last_json_line(out),
                                   "analysis": figures(a) if a else None, "error": why if not a else None,
                                   "note": next((l.strip() for l in out.splitlines() if "note:" in l), None)}
            if a and gpu:
                keep.append((1 if variant == "bad" else 4, cap))

            # (c) record --attach: the job runs with KINETO_USE_DAEMON=1 and no profiler code.
            att = stem + "-attach.pt.trace.json.gz"
            jenv = dict(child_env, KINETO_USE_DAEMON="1", KINETO_CONFIG=kineto_cfg)
            job = subprocess.Popen(base + ["--profile", "none", "--nvtx", "off", "--seconds", "40"], env=jenv,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            rc, out, secs = run([cli, "record", "--attach", "--pid", str(job.pid), "--duration", "2", "--kineto-warmup", "1",
                                 "--wait", "20" if gpu else "3", "--timeout", "60", "-o", att], env=child_env, timeout=120)
            job.send_signal(signal.SIGINT)
            try:
                job.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                job.kill()
                job.communicate()
            a, why = analyse(cli, att) if rc == 0 and os.path.exists(att) else (None, out[-800:])
            r["modes"]["attach"] = {"rc": rc, "seconds": round(secs, 1),
                                    "analysis": figures(a) if a else None, "error": why if not a else None}
            if a:
                keep.append((2 if variant == "bad" else 5, att))
            results.append(r)
            judge(ck, r, gpu, info)

    compare(ck, results, gpu)
    return finish(ck, args, env_info, results, keep)


def judge(ck, r, gpu, info):
    """Planted stall found in bad, absent in fixed (per mode)."""
    name, variant = r["workload"], r["variant"]
    planted = PLANTED[name]
    for mode in ("kineto", "cupti", "attach"):
        m = r["modes"].get(mode) or {}
        a = m.get("analysis")
        label = f"{name}/{variant}/{mode}"
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
        if not k or not c:
            ck.check(label + "/agreement", "failed", "a capture is missing")
        else:
            dk = c["kernels_per_step"] / k["kernels_per_step"] - 1 if k["kernels_per_step"] else float("inf")
            db = c["busy_ms_per_step"] / k["busy_ms_per_step"] - 1 if k["busy_ms_per_step"] else float("inf")
            ok = abs(dk) <= 0.05 and abs(db) <= 0.05
            ck.check(label + "/agreement", "passed" if ok else "failed",
                     f"kernels/step CUPTI {c['kernels_per_step']:.1f} vs Kineto {k['kernels_per_step']:.1f} ({dk:+.1%}); "
                     f"busy/step {c['busy_ms_per_step']:.3f} vs {k['busy_ms_per_step']:.3f} ms ({db:+.1%})")
        if "plain" not in r["modes"]:
            continue  # measured on the bad variants
        plain = ((r["modes"].get("plain") or {}).get("summary") or {}).get("step_ms_mean")
        rec = ((r["modes"].get("cupti") or {}).get("summary") or {}).get("step_ms_mean")
        if plain and rec:
            over = rec / plain - 1
            ck.check(label + "/overhead", "passed" if over <= 0.03 else "failed",
                     f"step {rec:.3f} ms under record vs {plain:.3f} ms without ({over:+.1%}; target <= 3 %)")
        else:
            ck.check(label + "/overhead", "failed", "a step time is missing (the workload's summary line)")


def self_test():
    """The GPU-side verdicts on made-up figures (a dry run cannot reach them otherwise)."""
    def fig(top, kinds, kernels, busy):
        return {"steps": 10, "step_ms": 5.0, "kernels_per_step": kernels, "busy_ms_per_step": busy,
                "findings": kinds, "top": top}
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
    for r in (bad, fixed):
        judge(ck, r, True, {})
    compare(ck, [bad, fixed], True)
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
    print("gpu-check self-test: the GPU verdicts behave (11 cases)")
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
    return 1 if counts["failed"] or counts["skipped"] else 0


if __name__ == "__main__":
    sys.exit(main())
