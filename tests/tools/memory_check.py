#!/usr/bin/env python3
"""Independent memory figures for Kineto traces recorded with profile_memory=True (stdlib
only), against `stallscope-cli memory --json`.

For each trace: the `[memory]` instant events (args "Device Type" 1 = a GPU by "Device Id",
0 = the host; "Bytes" > 0 an allocation, < 0 a free; "Total Allocated", "Total Reserved",
"Addr"). Times in ns are ts (us) x 1000 (read as decimals) plus baseTimeNanoseconds when the trace has
it; an operator ends at (ts + dur) x 1000.
Inside the window the CLI reports (start/end in ns, both included): the event, allocation
and free counts and byte sums, and the largest Total Allocated / Total Reserved. What was
live at the allocated peak: the events from the first one up to the peak's event replayed
by address (an allocation is live until a free of its address). Per operator (the innermost
`cpu_op` range on the event's pid/tid that holds its ts, end included): allocations, bytes
and the self increase (allocated minus freed).

Exit 0 = agree, 1 = disagree, 77 = no traces.
"""
import decimal
import gzip
import json
import os
import subprocess
import sys

TRACES = [
    "memory/kineto/sidnb13_h100_transformer_dc3b0e7228dd_851.1752215573993169006.pt.trace.json",
    "hta/df_index_resolver/df_index_resolver.json.gz",
]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        # Decimal: microsecond timestamps of ~1.7e15 times 1000 lose digits as binary floats.
        return json.load(f, parse_float=decimal.Decimal)


def figures(doc, lo, hi):
    base = int(doc.get("baseTimeNanoseconds", 0))
    ns = lambda ts: base + int((decimal.Decimal(ts) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    ops = {}  # (pid, tid) -> sorted [(start, end, name)]
    mem = []
    for e in events:
        if e.get("name") == "[memory]" and e.get("ph") == "i":
            mem.append(e)
        elif e.get("ph") == "X" and e.get("cat") == "cpu_op":
            s = ns(e["ts"])
            ops.setdefault((e.get("pid"), e.get("tid")), []).append(
                (s, ns(decimal.Decimal(e["ts"]) + decimal.Decimal(e.get("dur", 0))), e["name"]))
    for v in ops.values():
        v.sort(key=lambda x: (x[0], -x[1]))

    # The innermost operator of each event: per thread, one sweep in time order over the
    # operators (a stack of the open ones, nested) and the events.
    inner = {}
    by_thread = {}
    for k, e in enumerate(mem):
        by_thread.setdefault((e.get("pid"), e.get("tid")), []).append((ns(e["ts"]), k))
    for key, evs in by_thread.items():
        evs.sort()
        todo, stack, j = ops.get(key, []), [], 0
        for t, k in evs:
            while j < len(todo) and todo[j][0] <= t:
                while stack and stack[-1][1] <= todo[j][0]:
                    stack.pop()
                stack.append(todo[j])
                j += 1
            while stack and stack[-1][1] < t:
                stack.pop()
            inner[k] = stack[-1][2] if stack and stack[-1][0] <= t <= stack[-1][1] else None

    order = sorted(range(len(mem)), key=lambda k: ns(mem[k]["ts"]))  # stable at equal times
    devices = {}
    for k in order:
        e = mem[k]
        a = e.get("args", {})
        kind = a.get("Device Type")
        if kind not in (0, 1):
            continue
        label = "GPU %d" % a.get("Device Id") if kind == 1 else "host"
        devices.setdefault(label, []).append((ns(e["ts"]), a, inner[k]))
    out = {}
    for label, evs in devices.items():
        d = {"events": 0, "allocations": 0, "frees": 0, "allocated_bytes": 0, "freed_bytes": 0,
             "peak_allocated_bytes": -1, "peak_reserved_bytes": -1, "ops": {}}
        peak_index = None
        for i, (t, a, name) in enumerate(evs):
            if not (lo <= t <= hi):
                continue
            b = int(a.get("Bytes", 0))
            d["events"] += 1
            if b > 0:
                d["allocations"] += 1
                d["allocated_bytes"] += b
            elif b < 0:
                d["frees"] += 1
                d["freed_bytes"] += -b
            if int(a.get("Total Allocated", -1)) > d["peak_allocated_bytes"]:
                d["peak_allocated_bytes"] = int(a["Total Allocated"])
                peak_index = i
            d["peak_reserved_bytes"] = max(d["peak_reserved_bytes"], int(a.get("Total Reserved", -1)))
            if name is not None:
                o = d["ops"].setdefault(name, {"allocations": 0, "allocated_bytes": 0, "self": 0})
                if b > 0:
                    o["allocations"] += 1
                    o["allocated_bytes"] += b
                o["self"] += b
        if d["events"] == 0:
            continue
        live = {}
        unaddressed = 0
        if peak_index is not None:
            for t, a, name in evs[:peak_index + 1]:
                b, addr = int(a.get("Bytes", 0)), int(a.get("Addr", 0))
                if b > 0:
                    if addr:
                        live[addr] = b
                    else:
                        unaddressed += b
                elif b < 0 and addr:
                    live.pop(addr, None)
        d["live_attributed_bytes"] = sum(live.values()) + unaddressed
        out[label] = d
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: memory_check.py SHARED_TRACES STALLSCOPE_CLI", file=sys.stderr)
        return 2
    root, cli = sys.argv[1], sys.argv[2]
    paths = [os.path.join(root, p) for p in TRACES if os.path.exists(os.path.join(root, p))]
    if not paths:
        print("no memory traces under", root)
        return 77
    bad = 0
    for path in paths:
        run = subprocess.run([cli, "memory", "--json", "--top", "1000000", path],
                             capture_output=True, text=True, check=False)
        if run.returncode != 0:
            print(path, "memory --json failed:", run.stderr)
            return 1
        got = json.loads(run.stdout)[0]
        want = figures(load(path), got["window_start_ns"], got["window_end_ns"])
        have = {d["label"]: d for d in got["memory"]["devices"]}
        if sorted(have) != sorted(want):
            print(path, "devices differ:", sorted(have), "vs", sorted(want))
            bad += 1
            continue
        for label, w in want.items():
            h = have[label]
            for k in ("events", "allocations", "frees", "allocated_bytes", "freed_bytes",
                      "peak_allocated_bytes", "peak_reserved_bytes", "live_attributed_bytes"):
                if h[k] != w[k]:
                    print("%s %s %s: stallscope %s, independent %s" % (path, label, k, h[k], w[k]))
                    bad += 1
            ops = {o["name"]: o for o in h["operators"]}
            for name, o in w["ops"].items():
                if name not in ops:
                    print("%s %s operator %s missing" % (path, label, name))
                    bad += 1
                    continue
                mine = ops[name]
                for k, theirs in (("allocations", "allocations"), ("allocated_bytes", "allocated_bytes"),
                                  ("self_increase_bytes", "self")):
                    if mine[k] != o[theirs]:
                        print("%s %s %s %s: stallscope %s, independent %s"
                              % (path, label, name, k, mine[k], o[theirs]))
                        bad += 1
            for name, mine in ops.items():
                if (mine["allocations"] or mine["frees"]) and name not in w["ops"]:
                    print("%s %s operator %s: stallscope has events, independent none" % (path, label, name))
                    bad += 1
            print("%s %s: %d events, peak %d allocated / %d reserved, %d operators agree"
                  % (os.path.basename(path), label, w["events"], w["peak_allocated_bytes"],
                     w["peak_reserved_bytes"], len(w["ops"])))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
