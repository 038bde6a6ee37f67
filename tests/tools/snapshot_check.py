#!/usr/bin/env python3
"""Independent figures for PyTorch CUDA allocator snapshots (stdlib only), against
`stallscope-cli memory --json`.

Each snapshot in memory/snapshots (and the one embedded, base64, in the _memory_viz page) is
read with a restricted pickle.Unpickler whose find_class refuses every global: only builtins
can be built, nothing is imported or called.

Per device:
* the allocator state when the snapshot was taken, from "segments": reserved (total_size),
  allocated (allocated_size), active, requested, the segment count, blocks by state, free
  ("inactive") bytes; segments with no active block and their bytes; free bytes in segments
  that hold an active block (fragments) and the largest of them;
* the history ("device_traces") replayed: allocated rises at "alloc" and falls at
  "free_completed" (or "free"); reserved rises at "segment_alloc"/"segment_map" and falls at
  "segment_free"/"segment_unmap". Allocated before the history began = sizes the history frees
  without allocating them + blocks active at the end that the history did not allocate
  (by address); reserved before = the segments' total less the history's net segment change.
  From that: the event, allocation and free counts, byte sums and the peaks (the first event
  reaching the largest value).

The memory timeline in memory/timeline (export_memory_timeline_raw: [time_ns, action, bytes,
category] rows, gzip JSON): the running sum of bytes, its peak (the first row reaching it), the
bytes each category held at that row (categories named in the order of torch's
_memory_profiler._CATEGORY_TO_COLORS) and the row count, against the same `--json`.

Exit 0 = agree, 1 = disagree, 77 = no snapshots.
"""
import base64
import io
import json
import os
import pickle
import re
import subprocess
import sys


class Builtins(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def load(path):
    data = open(path, "rb").read()
    if path.endswith(".html"):
        m = re.search(rb'"base64": "([^"]*)"', data)
        data = base64.b64decode(m.group(1))
    return Builtins(io.BytesIO(data)).load()


ACTIVE = ("active_allocated", "active_pending_free")


def figures(snap):
    out = {}
    segs = snap if isinstance(snap, list) else snap.get("segments", [])
    traces = [] if isinstance(snap, list) else snap.get("device_traces", [])
    devices = sorted(set(s["device"] for s in segs) | set(range(len(traces))))
    for dev in devices:
        mine = [s for s in segs if s["device"] == dev]
        st = dict(reserved=0, allocated=0, active=0, requested=0, segments=len(mine),
                  blocks_allocated=0, blocks_pending_free=0, blocks_inactive=0, inactive=0,
                  empty_segments=0, empty_bytes=0, fragments=0, largest_fragment=0)
        active_at_end = {}
        for s in mine:
            st["reserved"] += s["total_size"]
            st["allocated"] += s.get("allocated_size", 0)
            st["active"] += s.get("active_size", 0)
            st["requested"] += s.get("requested_size", 0)
            blocks = s.get("blocks", [])
            free = sum(b["size"] for b in blocks if b["state"] == "inactive")
            st["inactive"] += free
            st["blocks_allocated"] += sum(b["state"] == "active_allocated" for b in blocks)
            st["blocks_pending_free"] += sum(b["state"] == "active_pending_free" for b in blocks)
            st["blocks_inactive"] += sum(b["state"] == "inactive" for b in blocks)
            if any(b["state"] in ACTIVE for b in blocks):
                st["fragments"] += free
                st["largest_fragment"] = max([st["largest_fragment"]] +
                                             [b["size"] for b in blocks if b["state"] == "inactive"])
            else:
                st["empty_segments"] += 1
                st["empty_bytes"] += s["total_size"]
            for b in blocks:
                if b["state"] in ACTIVE:
                    active_at_end[b["address"]] = b["size"]
        entries = traces[dev] if dev < len(traces) else []
        live, before, net = {}, 0, 0
        for e in entries:
            a = e["action"]
            if a == "alloc":
                live[e["addr"]] = e["size"]
            elif a in ("free_completed", "free"):
                if live.pop(e["addr"], None) is None:
                    before += e["size"]
            elif a in ("segment_alloc", "segment_map"):
                net += e["size"]
            elif a in ("segment_free", "segment_unmap"):
                net -= e["size"]
        before += sum(size for addr, size in active_at_end.items() if addr not in live)
        allocated, reserved = before, max(0, st["reserved"] - net)
        rep = dict(events=0, allocations=0, frees=0, allocated_bytes=0, freed_bytes=0,
                   peak_allocated=-1, peak_reserved=-1)
        for e in entries:
            a = e["action"]
            if a == "alloc":
                allocated += e["size"]
                rep["allocations"] += 1
                rep["allocated_bytes"] += e["size"]
            elif a in ("free_completed", "free"):
                allocated -= e["size"]
                rep["frees"] += 1
                rep["freed_bytes"] += e["size"]
            elif a in ("segment_alloc", "segment_map"):
                reserved += e["size"]
            elif a in ("segment_free", "segment_unmap"):
                reserved -= e["size"]
            else:
                continue
            rep["events"] += 1
            rep["peak_allocated"] = max(rep["peak_allocated"], allocated)
            rep["peak_reserved"] = max(rep["peak_reserved"], reserved)
        if not entries:
            rep.update(events=1, peak_allocated=allocated, peak_reserved=reserved)
        out[dev] = (st, rep)
    return out


CATEGORIES = ["parameter", "optimizer state", "input", "temporary", "activation", "gradient",
              "autograd detail", "unknown"]


def check_timeline(path, cli):
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = json.load(f)
    total, peak, peak_row = 0, -1, -1
    for i, (_, _, nbytes, _) in enumerate(rows):
        total += nbytes
        if total > peak:
            peak, peak_row = total, i
    held = {}
    for _, _, nbytes, cat in rows[:peak_row + 1]:
        name = CATEGORIES[cat] if 0 <= cat < len(CATEGORIES) else f"category {cat}"
        held[name] = held.get(name, 0) + nbytes
    held = {k: v for k, v in held.items() if v > 0}
    run = subprocess.run([cli, "memory", "--json", "--top", "100", path], capture_output=True,
                         text=True)
    name = os.path.basename(path)
    if run.returncode != 0:
        print(f"FAIL {name}: stallscope-cli exit {run.returncode}: {run.stderr.strip()}")
        return 1
    d = json.loads(run.stdout)[0]["memory"]["devices"][0]
    got = {g["name"]: g["bytes"] for g in d["live_by_category"]}
    wrong = []
    if d["peak_allocated_bytes"] != peak:
        wrong.append(f"peak: ours {d['peak_allocated_bytes']} independent {peak}")
    if d["events"] != len(rows):
        wrong.append(f"events: ours {d['events']} independent {len(rows)}")
    if got != held:
        wrong.append(f"by category: ours {got} independent {held}")
    if wrong:
        print(f"FAIL {name}: " + "; ".join(wrong))
        return 1
    print(f"ok   {name}: peak {peak} at row {peak_row}, {len(rows)} rows, by category {held}")
    return 0


def main():
    shared, cli = sys.argv[1], sys.argv[2]
    folder = os.path.join(shared, "memory", "snapshots")
    if not os.path.isdir(folder):
        print("no snapshots in", folder)
        return 77
    bad = 0
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        want = figures(load(path))
        run = subprocess.run([cli, "memory", "--json", path], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {name}: stallscope-cli exit {run.returncode}: {run.stderr.strip()}")
            bad += 1
            continue
        got = {d["device"]: d for d in json.loads(run.stdout)[0]["memory"]["devices"]}
        for dev, (st, rep) in want.items():
            d = got.get(dev)
            if d is None:
                print(f"FAIL {name}: GPU {dev} missing")
                bad += 1
                continue
            a = d["allocator"]
            pairs = [
                ("reserved", st["reserved"], a["reserved_bytes"]),
                ("allocated", st["allocated"], a["allocated_bytes"]),
                ("active", st["active"], a["active_bytes"]),
                ("requested", st["requested"], a["requested_bytes"]),
                ("segments", st["segments"], a["segments"]),
                ("blocks allocated", st["blocks_allocated"], a["blocks_allocated"]),
                ("blocks pending free", st["blocks_pending_free"], a["blocks_pending_free"]),
                ("blocks inactive", st["blocks_inactive"], a["blocks_inactive"]),
                ("inactive bytes", st["inactive"], a["inactive_bytes"]),
                ("empty segments", st["empty_segments"], a["empty_segments"]),
                ("empty segment bytes", st["empty_bytes"], a["empty_segment_bytes"]),
                ("fragment bytes", st["fragments"], a["fragment_bytes"]),
                ("largest fragment", st["largest_fragment"], a["largest_fragment_bytes"]),
                ("events", rep["events"], d["events"]),
                ("allocations", rep["allocations"], d["allocations"]),
                ("frees", rep["frees"], d["frees"]),
                ("allocated bytes", rep["allocated_bytes"], d["allocated_bytes"]),
                ("freed bytes", rep["freed_bytes"], d["freed_bytes"]),
                ("peak allocated", rep["peak_allocated"], d["peak_allocated_bytes"]),
                ("peak reserved", rep["peak_reserved"], d["peak_reserved_bytes"]),
            ]
            wrong = [f"{k}: ours {g} independent {w}" for k, w, g in pairs if w != g]
            if wrong:
                bad += 1
                print(f"FAIL {name} GPU {dev}: " + "; ".join(wrong))
            else:
                print(f"ok   {name} GPU {dev}: peak allocated {rep['peak_allocated']}, "
                      f"peak reserved {rep['peak_reserved']}, reserved {st['reserved']} in "
                      f"{st['segments']} segments, {rep['events']} events")
    # The pairs of one change (MANIFEST.md): `memory --compare` gives each side's figures.
    for before, after in [("silmont_memory_forward_fp32_128.pickle",
                           "silmont_memory_forward_bf16_128.pickle"),
                          ("nothanmin_forward_without_mixed.pickle",
                           "nothanmin_forward_mixed.pickle")]:
        pb, pa = os.path.join(folder, before), os.path.join(folder, after)
        if not (os.path.exists(pb) and os.path.exists(pa)):
            continue
        (sb, rb), (sa, ra) = figures(load(pb))[0], figures(load(pa))[0]
        run = subprocess.run([cli, "memory", "--compare", "--json", pb, pa], capture_output=True,
                             text=True)
        if run.returncode != 0:
            print(f"FAIL compare {before} {after}: exit {run.returncode}: {run.stderr.strip()}")
            bad += 1
            continue
        d = json.loads(run.stdout)["devices"][0]
        want = {"peak_allocated_bytes": [rb["peak_allocated"], ra["peak_allocated"]],
                "peak_reserved_bytes": [rb["peak_reserved"], ra["peak_reserved"]],
                "snapshot_reserved_bytes": [sb["reserved"], sa["reserved"]],
                "snapshot_allocated_bytes": [sb["allocated"], sa["allocated"]],
                "snapshot_empty_segment_bytes": [sb["empty_bytes"], sa["empty_bytes"]],
                "snapshot_fragment_bytes": [sb["fragments"], sa["fragments"]]}
        wrong = [f"{k}: ours {d[k]} independent {v}" for k, v in want.items() if d[k] != v]
        if wrong:
            bad += 1
            print(f"FAIL compare {before} -> {after}: " + "; ".join(wrong))
        else:
            print(f"ok   compare {before} -> {after}: peak allocated "
                  f"{rb['peak_allocated']} -> {ra['peak_allocated']}")
    timelines = os.path.join(shared, "memory", "timeline")
    if os.path.isdir(timelines):
        for name in sorted(os.listdir(timelines)):
            bad += check_timeline(os.path.join(timelines, name), cli)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
