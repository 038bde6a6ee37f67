#!/usr/bin/env python3
"""Independent aligned tables for `stallscope-cli diff --json BEFORE AFTER` (stdlib only).

For each pair of real traces, each side is read with json and gzip alone, over the analysis
window and the devices the diff JSON reports (the windows themselves are checked by the golden
summaries). On each side:

- operators: complete events ("ph": "X") of category cpu_op / Operator (or none, the legacy
  profiler) whose name is not ProfilerStep#N, starting inside the window, grouped by name,
  "Input Dims" (or "Input dims") and "Input type": calls and summed duration; and the GPU
  time launched from inside each (kernels, copies and memsets on the window's devices, starting
  in it, whose launch - the CPU event of the same "correlation" - lies inside the operator on
  its thread);
- kernels: kernels on the window's devices starting inside it, grouped by their name and the
  innermost operator (as above, not a step) around their launch; "" when there is none.

Then: every row of ours for which either side is present matches the independent group
exactly (calls, total time, GPU time); every independent group is in one of our rows (a
family row holds the kernels it names, absent on the other side); per-step figures divide
by the steps the JSON reports; and each row's change (added / removed / faster / slower /
same, per call, 10 %) follows from the independent numbers. Two folders of ranks (DLRM against
itself) compare rank by rank as `analyze --ranks` reports them. The memory recordings' pairs
(allocator snapshots) must give `memory --compare --json`'s output unchanged.

Exit 0 = agree, 1 = disagree, 77 = no traces.
"""
import gzip
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP

PAIRS = [
    ("kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
     "kineto-tb-plugin/resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz"),
    ("hta/trace_diff/control/control.json.gz", "hta/trace_diff/test/test.json.gz"),
    ("param-dlrm-8rank/worker0_step_12.1694128201545.pt.trace.json",
     "param-dlrm-8rank/worker1_step_12.1694128201556.pt.trace.json"),
]
MEMORY_PAIRS = [
    ("memory/snapshots/silmont_memory_forward_fp32_128.pickle",
     "memory/snapshots/silmont_memory_forward_bf16_128.pickle"),
    ("memory/snapshots/nothanmin_forward_without_mixed.pickle",
     "memory/snapshots/nothanmin_forward_mixed.pickle"),
]
STEP = re.compile(r"ProfilerStep#\d+")
OPERATOR_CATS = {"cpu_op", "Operator"}
GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
KERNEL_CATS = {"kernel", "Kernel"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data, parse_float=Decimal)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def to_ns(v, base):
    ns = Decimal(str(v)) * 1000 + base
    return int(ns.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def canon(v):
    return "" if v is None else json.dumps(v)


def is_operator(e):
    return ("cat" not in e or e.get("cat") in OPERATOR_CATS) and not STEP.fullmatch(str(e.get("name", "")))


def read_side(path, lo, hi, devices):
    doc = load(path)
    base = Decimal(int(doc.get("baseTimeNanoseconds", 0) or 0))
    threads = defaultdict(list)  # (pid, tid) -> CPU events
    gpu = []
    launches = {}
    for e in doc.get("traceEvents", []):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        ts, dur = to_ns(e["ts"], base), to_ns(e.get("dur", 0), Decimal(0))
        rec = {"e": e, "ts": ts, "end": ts + max(dur, 0), "dur": dur}
        args = e.get("args") or {}
        if e.get("cat") in GPU_CATS:
            dev = args.get("device", e.get("pid"))
            if str(dev) in devices:
                gpu.append(rec)
            continue
        threads[(str(e.get("pid")), str(e.get("tid")))].append(rec)
        if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver", "Driver") and "correlation" in args:
            launches[args["correlation"]] = rec
    # Nesting on each thread: outer first (earlier start, then later end).
    for evs in threads.values():
        evs.sort(key=lambda r: (r["ts"], -r["end"]))
        stack = []
        for r in evs:
            while stack and stack[-1]["end"] < r["end"]:
                stack.pop()
            r["parent"] = stack[-1] if stack else None
            stack.append(r)
    ops = defaultdict(lambda: [0, 0, 0])  # key -> calls, total, gpu
    for evs in threads.values():
        for r in evs:
            e = r["e"]
            if not is_operator(e) or not (lo <= r["ts"] < hi):
                continue
            args = e.get("args") or {}
            dims = args.get("Input Dims", args.get("Input dims"))
            r["key"] = (e["name"], canon(dims), canon(args.get("Input type")))
            o = ops[r["key"]]
            o[0] += 1
            o[1] += r["dur"]
    kernels = defaultdict(lambda: [0, 0])  # (op, kernel) -> calls, total
    for g in gpu:
        if not (lo <= g["ts"] < hi):
            continue
        launch = launches.get((g["e"].get("args") or {}).get("correlation"))
        innermost = ""
        p = launch["parent"] if launch else None
        while p is not None:
            if "key" in p:
                ops[p["key"]][2] += g["dur"]
                if not innermost:
                    innermost = p["e"]["name"]
            elif is_operator(p["e"]):  # an operator starting before the window: no row
                innermost = innermost or p["e"]["name"]
            p = p["parent"]
        if g["e"].get("cat") in KERNEL_CATS:
            k = kernels[(innermost, g["e"]["name"])]
            k[0] += 1
            k[1] += g["dur"]
    return ops, kernels


def classify(row, b, a, gpu):
    if not b[0]:
        return "added"
    if not a[0]:
        return "removed"
    pb, pa = b[gpu] / b[0], a[gpu] / a[0]
    if pb <= 0:
        return "slower" if pa > 0 else "same"
    rel = (pa - pb) / pb
    return "faster" if rel <= -0.10 else "slower" if rel >= 0.10 else "same"


def check_pair(cli, root, before, after):
    pb, pa = os.path.join(root, before), os.path.join(root, after)
    out = subprocess.run([cli, "diff", "--json", pb, pa], capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    sides = []
    for k, path in (("before", pb), ("after", pa)):
        w = d[k]
        sides.append(read_side(path, w["window_start_ns"], w["window_end_ns"], {str(x) for x in w["devices"]}))
    problems = []
    label = os.path.basename(before) + " -> " + os.path.basename(after)

    def side_of(row, i):
        s = row["before" if i == 0 else "after"]
        return s

    # Operators.
    seen = set()
    for row in d["operators"]:
        shapes = canon(json.loads(row["shapes"])) if row["shapes"] else ""
        dtypes = canon(json.loads(row["dtypes"])) if row["dtypes"] else ""
        key = (row["name"], shapes, dtypes)
        seen.add(key)
        mine = []
        for i in (0, 1):
            ind = sides[i][0].get(key, [0, 0, 0])
            s = side_of(row, i)
            if (s["calls"], s["total_ns"], s["gpu_ns"]) != tuple(ind):
                problems.append(f"{label}: operator {key} side {i}: ours {(s['calls'], s['total_ns'], s['gpu_ns'])}, "
                                f"independent {tuple(ind)}")
            mine.append(ind)
        gpu = 2 if row["compared_by"] == "gpu" else 1
        expect = classify(row, mine[0], mine[1], gpu)
        if expect != row["change"]:
            problems.append(f"{label}: operator {key}: ours {row['change']}, independent {expect}")
    for i in (0, 1):
        for key in sides[i][0]:
            if key not in seen:
                problems.append(f"{label}: operator {key} (side {i}) is in no row of ours")

    # Kernels.
    seen = set()
    for row in d["kernels"]:
        tot = []
        for i in (0, 1):
            s = side_of(row, i)
            names = s.get("kernels") if row["by_family"] else ([row["name"]] if s["calls"] else [])
            calls = total = 0
            for n in names or []:
                k = sides[i][1].get((row["operator"], n))
                if not k:
                    problems.append(f"{label}: kernel {n!r} under {row['operator']!r} side {i}: none independently")
                    continue
                calls, total = calls + k[0], total + k[1]
                seen.add((i, row["operator"], n))
            if (s["calls"], s["total_ns"]) != (calls, total):
                problems.append(f"{label}: kernel row {row['name']!r} under {row['operator']!r} side {i}: ours "
                                f"{(s['calls'], s['total_ns'])}, independent {(calls, total)}")
            if row["by_family"] and names:
                other = sides[1 - i][1]
                for n in names:
                    if (row["operator"], n) in other:
                        problems.append(f"{label}: family row holds {n!r}, present on both sides")
            tot.append([calls, total])
        expect = classify(row, tot[0], tot[1], 1)
        if expect != row["change"]:
            problems.append(f"{label}: kernel row {row['name']!r}: ours {row['change']}, independent {expect}")
    for i in (0, 1):
        for (op, n) in sides[i][1]:
            if (i, op, n) not in seen:
                problems.append(f"{label}: kernel {n!r} under {op!r} (side {i}) is in no row of ours")
    print(f"{label}: {len(d['operators'])} operator rows, {len(d['kernels'])} kernel rows, "
          f"{len(problems)} problems")
    return problems


def check_memory_pair(cli, root, before, after):
    pb, pa = os.path.join(root, before), os.path.join(root, after)
    diff = subprocess.run([cli, "diff", "--json", pb, pa], capture_output=True, text=True, check=True).stdout
    mem = subprocess.run([cli, "memory", "--compare", "--json", pb, pa], capture_output=True, text=True,
                         check=True).stdout
    ok = json.loads(diff) == json.loads(mem)
    print(f"{os.path.basename(before)} -> {os.path.basename(after)}: diff = memory --compare: {ok}")
    return [] if ok else [f"{before}: diff --json differs from memory --compare --json"]


def check_ranks(cli, root):
    """Two folders of ranks compare rank by rank: each rank's window and waiting as `analyze
    --ranks --json` gives them (checked by cross_rank_check.py), before and after."""
    folder = os.path.join(root, "param-dlrm-8rank")
    d = json.loads(subprocess.run([cli, "diff", "--json", folder, folder], capture_output=True, text=True,
                                  check=True).stdout)
    ranks = json.loads(subprocess.run([cli, "analyze", "--ranks", "--json", folder], capture_output=True,
                                      text=True, check=True).stdout)["ranks"]
    want = [{"rank": r["rank"], "before_window_ns": r["window_ns"], "after_window_ns": r["window_ns"],
             "before_wait_ns": r["wait_ns"], "after_wait_ns": r["wait_ns"]} for r in ranks]
    ok = d.get("ranks") == want and len(want) == 8
    print(f"param-dlrm-8rank vs itself: {len(d.get('ranks', []))} ranks compared, as analyze --ranks: {ok}")
    return [] if ok else ["param-dlrm-8rank: diff's ranks differ from analyze --ranks"]


def main(argv):
    if len(argv) != 3:
        print("usage: diff_check.py TRACES_DIR STALLSCOPE_CLI", file=sys.stderr)
        return 2
    root, cli = argv[1], argv[2]
    if not os.path.isdir(root):
        print("no shared traces: skipped")
        return 77
    problems = []
    for b, a in PAIRS:
        problems += check_pair(cli, root, b, a)
    for b, a in MEMORY_PAIRS:
        problems += check_memory_pair(cli, root, b, a)
    problems += check_ranks(cli, root)
    for p in problems[:40]:
        print("MISMATCH", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
