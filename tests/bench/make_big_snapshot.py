#!/usr/bin/env python3
"""Replicates a real allocator snapshot until its pickle reaches a size, for bench_snapshot.

Reads SRC with a restricted pickle.Unpickler (no globals), then appends copies of its history
(device_traces) with time_us shifted past the previous copy and addresses moved to a fresh
range, and copies of its segments at fresh addresses, until the pickle (protocol 4, as
torch.cuda.memory._dump_snapshot writes it) reaches SIZE_MB. Frames stay shared, as a real
snapshot's repeated stacks are. Stdlib only.

Usage: make_big_snapshot.py SRC OUT --size-mb N
"""
import argparse
import io
import pickle


class Builtins(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=200)
    a = ap.parse_args()
    with open(a.src, "rb") as f:
        snap = Builtins(f).load()
    trace = snap["device_traces"][0]
    segs = snap["segments"]
    t0 = min((e["time_us"] for e in trace), default=0)
    t1 = max((e["time_us"] for e in trace), default=0)
    span = t1 - t0 + 1
    shift = 1 << 40  # beyond any address of the original
    big_trace, big_segs = list(trace), list(segs)

    def size():
        return len(pickle.dumps(dict(snap, device_traces=[big_trace], segments=big_segs),
                                protocol=4))

    one = size()
    grow(trace, segs, big_trace, big_segs, 1, span, shift)
    per_copy = max(1, size() - one)  # frames are shared: a copy costs less than the first
    copies = max(2, int((a.size_mb * 1e6 - one) / per_copy) + 1)
    for k in range(2, copies):
        grow(trace, segs, big_trace, big_segs, k, span, shift)
    out = dict(snap)
    out["device_traces"] = [big_trace] + snap["device_traces"][1:]
    out["segments"] = big_segs
    with open(a.out, "wb") as f:
        pickle.dump(out, f, protocol=4)


def grow(trace, segs, big_trace, big_segs, k, span, shift):
    """Copy k of the history and the segments, later in time and at fresh addresses."""
    for e in trace:
        c = dict(e)
        c["time_us"] = e["time_us"] + k * span
        c["addr"] = e["addr"] + k * shift
        big_trace.append(c)
    for s in segs:
        c = dict(s)
        c["address"] = s["address"] + k * shift
        c["blocks"] = [dict(b, address=b["address"] + k * shift) for b in s["blocks"]]
        big_segs.append(c)


if __name__ == "__main__":
    main()
