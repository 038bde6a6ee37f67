#!/usr/bin/env python3
"""Makes N ranks of one job for the many-ranks benchmark from the 8 DLRM ranks.

Each of the 8 workers of ../shared/traces/param-dlrm-8rank is replicated (make_big_trace.py)
to at least SIZE_MB, all with the same number of steps and one common step period, so every rank's steps and collectives stay aligned on
the shared clock; rank r is worker r % 8 with its distributedInfo rewritten to rank r of N
(the later ranks are byte copies of the first 8 but for that header).

    make_rank_traces.py DLRM_FOLDER OUT_FOLDER --ranks 128 --size-mb 50
"""
import argparse
import glob
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_big_trace  # noqa: E402

RANK = re.compile(r'("rank":\s*)(\d+)')
WORLD = re.compile(r'("world_size":\s*)(\d+)')


def rewrite_copy(src, dst, rank, world):
    """Copies src to dst with distributedInfo's rank and world_size replaced (in the header
    before traceEvents, which Kineto writes first)."""
    with open(src, "rb") as f:
        data = f.read()
    cut = data.index(b'"traceEvents"')
    head = data[:cut].decode("utf-8")
    head, n = RANK.subn(lambda m: m.group(1) + str(rank), head, count=1)
    if n != 1:
        sys.exit(f"{src}: no distributedInfo rank before traceEvents")
    head = WORLD.sub(lambda m: m.group(1) + str(world), head, count=1)
    with open(dst, "wb") as f:
        f.write(head.encode("utf-8"))
        f.write(data[cut:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlrm")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=128)
    ap.add_argument("--size-mb", type=float, default=50)
    a = ap.parse_args()
    sources = sorted(glob.glob(os.path.join(a.dlrm, "worker*.pt.trace.json")))
    if len(sources) != 8:
        sys.exit(f"{a.dlrm}: expected the 8 DLRM worker files, found {len(sources)}")
    os.makedirs(a.out, exist_ok=True)
    period = max(make_big_trace.span_us(s) for s in sources) + 1000
    copies = max(make_big_trace.copies_needed(s, a.size_mb / 1000.0) for s in sources)
    base = os.path.join(a.out, "base")
    os.makedirs(base, exist_ok=True)
    made = []
    for i, s in enumerate(sources):
        dst = os.path.join(base, f"worker{i}.json")
        if not os.path.exists(dst):
            make_big_trace.replicate(s, dst, a.size_mb / 1000.0, period, copies)
        made.append(dst)
    width = len(str(a.ranks - 1))
    for r in range(a.ranks):
        dst = os.path.join(a.out, f"rank{r:0{width}d}.pt.trace.json")
        rewrite_copy(made[r % 8], dst, r, a.ranks)
    shutil.rmtree(base)
    total = sum(os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out))
    print(f"{a.out}: {a.ranks} ranks, {total / 1e9:.2f} GB", file=sys.stderr)


if __name__ == "__main__":
    main()
