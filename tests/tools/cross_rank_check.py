#!/usr/bin/env python3
"""Independent cross-rank figures for a folder of per-rank Kineto traces (stdlib only).

For each rank: the communication kernels (names containing "nccl" or "rccl", any case) that
start inside the rank's ProfilerStep span (extended to the end of its GPU work), in start
order; the n-th of every rank is taken for the same collective. The collective's last
arrival is the latest start; each rank waits (last arrival - its start), clipped to the
kernel's duration; the rest is transfer. Clocks are taken as shared (one host) unless the
median difference of the collectives' ends exceeds 50 us, as Stallscope does.

--compare CLI runs `CLI analyze --ranks --json DIR` and checks: the same number of matched
collectives, the same last-arrival counts per rank, waiting and transfer within 1 us per
collective, and the same straggler. Exit 0 = agree, 1 = disagree, 77 = no traces.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys


def figures(folder):
    files = sorted(f for f in os.listdir(folder) if ".json" in f)
    ranks = []
    for i, name in enumerate(files):
        path = os.path.join(folder, name)
        with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8", errors="replace") as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        rank = doc.get("distributedInfo", {}).get("rank", i) if isinstance(doc, dict) else i
        xs = [e for e in events if e.get("ph") == "X"]
        steps = [e for e in xs if str(e.get("name", "")).startswith("ProfilerStep#")]
        gpu = [e for e in xs if e.get("cat") in ("kernel", "Kernel", "gpu_memcpy", "gpu_memset")]
        lo = min(float(e["ts"]) for e in steps) if steps else min(float(e["ts"]) for e in gpu)
        hi_cpu = max(float(e["ts"]) + float(e.get("dur", 0)) for e in steps) if steps else None
        hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in gpu)
        if hi_cpu is not None:
            hi = max(hi_cpu, hi)
        colls = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), e["name"]) for e in gpu
                       if e.get("cat") in ("kernel", "Kernel") and ("nccl" in e["name"].lower() or "rccl" in e["name"].lower())
                       and lo <= float(e["ts"]) < hi)
        ranks.append({"rank": rank, "colls": colls})
    ranks.sort(key=lambda r: r["rank"])
    n = min(len(r["colls"]) for r in ranks)
    agreed = 0
    while agreed < n and all(r["colls"][agreed][2] == ranks[0]["colls"][agreed][2] for r in ranks):
        agreed += 1
    offsets = [0.0] * len(ranks)
    for i in range(1, len(ranks)):
        d = sorted(ranks[i]["colls"][k][1] - ranks[0]["colls"][k][1] for k in range(agreed))
        offsets[i] = d[len(d) // 2] if d else 0.0
    if all(abs(o) <= 50.0 for o in offsets):   # microseconds
        offsets = [0.0] * len(ranks)
    out = {r["rank"]: {"wait_us": 0.0, "transfer_us": 0.0, "last": 0} for r in ranks}
    for k in range(agreed):
        arrive = [r["colls"][k][0] - offsets[i] for i, r in enumerate(ranks)]
        last = max(arrive)
        who = max(range(len(ranks)), key=lambda i: (arrive[i], -i))
        out[ranks[who]["rank"]]["last"] += 1
        for i, r in enumerate(ranks):
            dur = r["colls"][k][1] - r["colls"][k][0]
            wait = min(max(last - arrive[i], 0.0), dur)
            out[r["rank"]]["wait_us"] += wait
            out[r["rank"]]["transfer_us"] += dur - wait
    return agreed, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--compare", metavar="CLI")
    a = ap.parse_args()
    if not os.path.isdir(a.folder):
        print(f"skip: {a.folder} is absent")
        return 77
    agreed, out = figures(a.folder)
    print(f"collectives matched: {agreed}")
    for rank, f in sorted(out.items()):
        print(f"rank {rank}: waiting {f['wait_us']:.1f} us, transfer {f['transfer_us']:.1f} us, last {f['last']}")
    if not a.compare:
        return 0
    cli = json.loads(subprocess.run([a.compare, "analyze", "--ranks", "--json", a.folder], check=True,
                                    capture_output=True, text=True).stdout)
    bad = []
    if cli["collectives"] != agreed:
        bad.append(f"collectives {cli['collectives']} vs {agreed}")
    tol = 1.0 * max(agreed, 1)   # 1 us per collective (the traces' resolution)
    for r in cli["ranks"]:
        f = out.get(r["rank"])
        if f is None:
            bad.append(f"rank {r['rank']} unknown")
            continue
        if r["last_arrivals"] != f["last"]:
            bad.append(f"rank {r['rank']}: last {r['last_arrivals']} vs {f['last']}")
        if abs(r["wait_ns"] / 1000 - f["wait_us"]) > tol or abs(r["transfer_ns"] / 1000 - f["transfer_us"]) > tol:
            bad.append(f"rank {r['rank']}: waiting {r['wait_ns'] / 1000:.1f}/{f['wait_us']:.1f} us, "
                       f"transfer {r['transfer_ns'] / 1000:.1f}/{f['transfer_us']:.1f} us")
    lasts = {rank: f["last"] for rank, f in out.items()}
    best = max(sorted(lasts), key=lambda k: lasts[k])
    expect = best if lasts[best] * len(lasts) >= 2 * agreed else -1
    if cli["straggler"] != expect:
        bad.append(f"straggler {cli['straggler']} vs {expect}")
    for b in bad:
        print("DISAGREE:", b)
    print("agree" if not bad else f"{len(bad)} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
