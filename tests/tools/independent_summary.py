#!/usr/bin/env python3
"""Independent reader for Stallscope's golden values.

Recomputes, with the Python standard library only, the counts that
`stallscope-cli info --json` reports, so the golden files are cross-checked by a
second implementation rather than being "whatever the importer said".

    independent_summary.py TRACE...            print one summary object per trace
    independent_summary.py --compare CLI TRACE...
                                               run `CLI info --json TRACE` and compare
    independent_summary.py --compare-shared CLI DIR
                                               the same for every trace under DIR (77 = absent)

Definitions (the same as docs/metrics.md):
  events          elements of traceEvents (or of the bare array)
  by_phase        {ph: count} over elements whose "ph" is a string
  by_category     {cat: count} over elements whose "cat" is a string
  gpu             X events by category: kernel|Kernel, gpu_memcpy|Memcpy, gpu_memset|Memset
  profiler_steps  X events named ProfilerStep#<digits>
  devices         per pid of GPU-work X events: busy_us = union of [ts, ts+dur],
                  span_us = last end - first start (exact decimals, no floats)
"""
import decimal
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

D = decimal.Decimal
GPU_KINDS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
             "gpu_memset": "memset", "Memset": "memset"}
STEP = re.compile(r"ProfilerStep#\d+")


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data, parse_float=D)


def to_ns(v):
    """Microseconds (int, Decimal or numeric string) to integer nanoseconds, half-up."""
    ns = D(str(v)) * 1000
    return int(ns.quantize(D(1), rounding=decimal.ROUND_HALF_UP))


def micros(ns):
    return D(ns) / 1000


def summarize(path):
    doc = load(path)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    by_phase, by_cat = Counter(), Counter()
    gpu = {"kernel": 0, "memcpy": 0, "memset": 0}
    steps = 0
    intervals = defaultdict(list)
    for e in events:
        if not isinstance(e, dict):
            continue
        ph, cat = e.get("ph"), e.get("cat")
        if isinstance(ph, str):
            by_phase[ph] += 1
        if isinstance(cat, str):
            by_cat[cat] += 1
        if ph != "X":
            continue
        name = e.get("name")
        if isinstance(name, str) and STEP.fullmatch(name):
            steps += 1
        kind = GPU_KINDS.get(cat)
        if kind:
            gpu[kind] += 1
            ts, dur = to_ns(e["ts"]), to_ns(e["dur"])
            intervals[int(e["pid"])].append((ts, ts + max(dur, 0)))
    devices = {}
    for dev, iv in intervals.items():
        iv.sort()
        busy, (cs, ce) = 0, iv[0]
        for s, t in iv[1:]:
            if s > ce:
                busy += ce - cs
                cs, ce = s, t
            else:
                ce = max(ce, t)
        busy += ce - cs
        first, last = iv[0][0], max(t for _, t in iv)
        devices[str(dev)] = {"busy_us": micros(busy), "span_us": micros(last - first)}
    return {"events": len(events), "by_phase": dict(by_phase), "by_category": dict(by_cat),
            "gpu": gpu, "profiler_steps": steps, "devices": devices}


FIELDS = ("events", "by_phase", "by_category", "gpu", "profiler_steps", "devices")


def compare(cli, paths):
    failures = 0
    for path in paths:
        before = failures
        out = subprocess.run([cli, "info", "--json", path], capture_output=True, check=False)
        if out.returncode != 0:
            print(f"FAIL {path}: stallscope-cli exited {out.returncode}: {out.stderr.decode()}")
            failures += 1
            continue
        got = json.loads(out.stdout, parse_float=D)[0]
        want = summarize(path)
        for field in FIELDS:
            g = got[field]
            if field == "devices":
                g = {k: {"busy_us": v["busy_us"], "span_us": v["span_us"]} for k, v in g.items()}
            if g != want[field]:
                print(f"FAIL {path}: {field}\n  stallscope:  {g}\n  independent: {want[field]}")
                failures += 1
        if failures == before:
            print(f"ok   {path}")
    return failures


def shared_traces(root):
    # Kineto traces told apart by content (tests/expectations/corpus.py), not by name: the
    # corpus also holds rocprofv3 JSON and memory timelines.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "expectations"))
    import corpus
    return sorted(os.path.join(root, rel) for rel in corpus.kineto_traces(root) if "expected" not in rel)


def main(argv):
    if len(argv) == 4 and argv[1] == "--compare-shared":
        if not os.path.isdir(argv[3]):
            print(f"SKIP: {argv[3]} is absent: real-trace comparison skipped")
            return 77
        return 1 if compare(argv[2], shared_traces(argv[3])) else 0
    if len(argv) >= 3 and argv[1] == "--compare":
        return 1 if compare(argv[2], argv[3:]) else 0
    json.dump([summarize(p) for p in argv[1:]], sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
