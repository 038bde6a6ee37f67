#!/usr/bin/env python3
"""Independent collectives table for Kineto traces (stdlib only), against `analyze --json`.

For each trace: the communication kernels (names starting "nccl" or "rccl", any case) that
start inside the analysis window `analyze --json` reports (its start/end in ns; the trace's
ts are microseconds, plus baseTimeNanoseconds when the trace has it). Each kernel's type and
size: its own args ("Collective name", "In msg nelems", "Out msg nelems", "dtype", "Group
size"); without sizes there, the innermost enclosing `record_param_comms` or `nccl:*` event
on the thread of its launch (same correlation), whose "Input Dims"/"Input type" give the
elements of its first input; the type otherwise from the range name or the kernel name
(ncclKernel_<Type>_...). Message size = max(in, out) elements x element size. Bus bandwidth
per nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n, allgather/reducescatter/alltoall
(n-1)/n, others 1; n = the group size, else distributedInfo's world size.

Checks, per type: calls, sized calls, bytes, min/max bytes and group size exactly; kernel
time within 1 us per call; bus bandwidth within 0.5 %. Exit 0 = agree, 1 = disagree,
77 = no traces.
"""
import gzip
import json
import os
import subprocess
import sys

TRACES = [
    "hta/nccl_parser_config/nccl_data.json.gz",
    "param-dlrm-8rank/worker0_step_12.1694128201545.pt.trace.json",
    "param-dlrm-8rank/worker5_step_12.1694128201549.pt.trace.json",
]
SIZES = {"float": 4, "float32": 4, "int": 4, "half": 2, "bfloat16": 2, "c10::bfloat16": 2, "c10::half": 2,
         "double": 8, "long": 8, "long int": 8, "int64": 8, "byte": 1, "char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1}
TYPES = ["allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "sendrecv", "reduce", "send", "recv"]


def canonical(name):
    n = "".join(ch for ch in name.lower() if ch.isalnum())
    if n.startswith("nccl"):
        n = n[4:]
    for t in TYPES:
        if t in n:
            return t
    return ""


def factor(t, n):
    if not n or n <= 0:
        return None
    if t == "allreduce":
        return 2 * (n - 1) / n
    if t in ("reducescatter", "allgather", "alltoall"):
        return (n - 1) / n
    if t in ("broadcast", "reduce", "sendrecv", "send", "recv"):
        return 1.0
    return None


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def table(path, lo_ns, hi_ns):
    doc = load(path)
    base = float(doc.get("baseTimeNanoseconds", 0))
    world = doc.get("distributedInfo", {}).get("world_size")
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    ns = lambda e: base + float(e["ts"]) * 1000.0
    launches = {}
    for e in xs:
        if e.get("cat") in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e
    around = [e for e in xs if e.get("name") == "record_param_comms" or str(e.get("name", "")).startswith("nccl:")]
    rows = {}
    for k in xs:
        if k.get("cat") not in ("kernel", "Kernel"):
            continue
        if not k["name"].lower().startswith(("nccl", "rccl")):
            continue
        start = ns(k)
        if not (lo_ns <= round(start) < hi_ns):
            continue
        a = k.get("args", {})
        typ = canonical(a.get("Collective name", ""))
        dtype = a.get("dtype", "")
        group = a.get("Group size")
        elems = max(a.get("In msg nelems", -1), a.get("Out msg nelems", -1))
        if elems < 0:
            launch = launches.get(a.get("correlation"))
            if launch is not None:
                t0, t1 = float(launch["ts"]), float(launch["ts"]) + float(launch.get("dur", 0))
                enclosing = [e for e in around if e["pid"] == launch["pid"] and e["tid"] == launch["tid"]
                             and float(e["ts"]) <= t0 and float(e["ts"]) + float(e.get("dur", 0)) >= t1]
                enclosing.sort(key=lambda e: float(e["ts"]), reverse=True)  # innermost first
                for e in enclosing:
                    ea = e.get("args", {})
                    if "In msg nelems" in ea or "Out msg nelems" in ea:
                        elems = max(ea.get("In msg nelems", -1), ea.get("Out msg nelems", -1))
                    elif ea.get("Input Dims") and ea["Input Dims"][0]:
                        elems = 1
                        for d in ea["Input Dims"][0]:
                            elems *= d
                    else:
                        continue
                    typ = typ or canonical(ea.get("Collective name", "")) or (
                        canonical(e["name"]) if e["name"].startswith("nccl:") else "")
                    dtype = dtype or ea.get("dtype", "") or (ea.get("Input type") or [""])[0]
                    group = group or ea.get("Group size")
                    break
        typ = typ or canonical(k["name"].split("(")[0].split("_")[1] if "_" in k["name"] else "") or "unknown"
        if not dtype:
            last = k["name"].split("(")[0].split("_")[-1]
            dtype = last if last.lower() in SIZES else ""
        r = rows.setdefault(typ, {"count": 0, "total_ns": 0.0, "sized": 0, "sized_ns": 0.0, "bytes": 0,
                                  "min": None, "max": 0, "groups": set()})
        r["count"] += 1
        r["total_ns"] += float(k.get("dur", 0)) * 1000.0
        if group:
            r["groups"].add(group)
        size = SIZES.get(dtype.lower(), 0)
        if size and elems >= 0:
            b = elems * size
            r["sized"] += 1
            r["sized_ns"] += float(k.get("dur", 0)) * 1000.0
            r["bytes"] += b
            r["min"] = b if r["min"] is None else min(r["min"], b)
            r["max"] = max(r["max"], b)
    for t, r in rows.items():
        g = r["groups"]
        r["group"] = next(iter(g)) if len(g) == 1 else (0 if g else (world or -1))
        f = factor(t, r["group"])
        r["bus"] = r["bytes"] / r["sized_ns"] * f if r["sized_ns"] > 0 and f else None
    return rows


def main():
    if len(sys.argv) != 3:
        print("usage: collectives_check.py TRACES_DIR CLI", file=sys.stderr)
        return 2
    folder, cli = sys.argv[1], sys.argv[2]
    paths = [os.path.join(folder, t) for t in TRACES if os.path.exists(os.path.join(folder, t))]
    if not paths:
        print("no traces: skipped")
        return 77
    bad = 0
    for path in paths:
        out = subprocess.run([cli, "analyze", "--json", path], capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)[0]
        want = table(path, doc["window"]["start_ns"], doc["window"]["end_ns"])
        got = {c["type"]: c for c in doc["stats"]["collectives"]}
        name = os.path.relpath(path, folder)
        if set(want) != set(got):
            print(f"FAIL {name}: types {sorted(got)} != {sorted(want)}")
            bad += 1
            continue
        for t, w in want.items():
            g = got[t]
            checks = [("count", g["count"], w["count"]), ("sized_count", g["sized_count"], w["sized"]),
                      ("bytes", g["bytes"], w["bytes"]), ("min_bytes", g["min_bytes"], w["min"] or 0),
                      ("max_bytes", g["max_bytes"], w["max"]), ("group_size", g["group_size"], w["group"])]
            for what, a, b in checks:
                if a != b:
                    print(f"FAIL {name} {t}: {what} {a} != {b}")
                    bad += 1
            if abs(g["total_ns"] - w["total_ns"]) > 1000 * w["count"]:
                print(f"FAIL {name} {t}: total_ns {g['total_ns']} != {w['total_ns']:.0f}")
                bad += 1
            if (g["bus_gb_per_s"] is None) != (w["bus"] is None) or (
                    w["bus"] is not None and abs(g["bus_gb_per_s"] - w["bus"]) > 0.005 * w["bus"] + 0.001):
                print(f"FAIL {name} {t}: bus bandwidth {g['bus_gb_per_s']} != {w['bus']}")
                bad += 1
        kinds = ", ".join("%s x%d" % (t, w["count"]) for t, w in want.items())
        print(f"{name}: {kinds}: {'agree' if not bad else 'differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
