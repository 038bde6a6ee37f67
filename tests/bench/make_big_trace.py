#!/usr/bin/env python3
"""Makes a large, realistic Kineto trace for benchmarks by replicating a real trace.

Every event of the source (a Kineto-formatted file: one event per "  {" ... "  }" block)
is repeated N times, each copy shifted in time by the source's span and given fresh
ids (flow "id", "correlation", "External id") and renumbered ProfilerStep#N names, so
the result has the category mix, layout and nesting of a real trace at any size.
Metadata (ph "M"), profiler spans and window instants are kept once.

    make_big_trace.py SOURCE(.json|.json.gz) OUT.json --size-gb 1.0
    make_big_trace.py SOURCE - --size-gb 20 | gzip -1 > OUT.json.gz     (- writes to stdout)
"""
import argparse
import gzip
import os
import re
import sys

NUM_FIELDS = re.compile(r'"(ts|id|correlation|External id|external id)": (\d+)')
STEP = re.compile(r'"name": "ProfilerStep#(\d+)"')
TS = re.compile(r'"ts": (\d+)')
DUR = re.compile(r'"dur": (\d+)')


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def split_events(text):
    start = text.index('"traceEvents"')
    start = text.index("[", start) + 1
    end = text.rindex("]")  # last ']' closes traceEvents in Kineto files (metadata keys follow)
    # Kineto writes traceEvents last but newer versions append keys after it: find the
    # array's end as the last line that is exactly "  ]" or "]".
    m = list(re.finditer(r"\n\s*\](,|\s*\})", text))
    if m:
        end = m[-1].start() + 1
    body = text[start:end]
    events, cur = [], []
    for line in body.split("\n"):
        if line.startswith("  {") and cur:
            events.append("\n".join(cur).rstrip().rstrip(","))
            cur = []
        if line.strip():
            cur.append(line)
    if cur:
        events.append("\n".join(cur).rstrip().rstrip(","))
    return text[:start], events, text[end:]


def template(ev):
    """Splits an event into literal parts and (field, value) slots to rewrite."""
    parts, slots, pos = [], [], 0
    for m in NUM_FIELDS.finditer(ev):
        parts.append(ev[pos:m.start(2)])
        slots.append((m.group(1), int(m.group(2))))
        pos = m.end(2)
    step = STEP.search(ev)
    parts.append(ev[pos:])
    return parts, slots, step


def copies_for(events, size_gb):
    per_copy = sum(len(e) + 2 for e in events)
    return max(1, int(size_gb * 1e9 / per_copy + 0.999))


def copies_needed(source, size_gb):
    return copies_for(split_events(read_text(source))[1], size_gb)


def span_us(source):
    """The source's replicated events' span in us (what one copy shifts by, less 1000)."""
    _, events, _ = split_events(read_text(source))
    lo, hi = None, 0
    for ev in events:
        if '"ph": "M"' in ev or '"cat": "Trace"' in ev or '"Record Window End"' in ev or "Iteration Start" in ev:
            continue
        t = TS.search(ev)
        if not t:
            continue
        ts = int(t.group(1))
        d = DUR.search(ev)
        lo = ts if lo is None else min(lo, ts)
        hi = max(hi, ts + (int(d.group(1)) if d else 0))
    return 0 if lo is None else hi - lo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--size-gb", type=float, default=1.0)
    a = ap.parse_args()
    replicate(a.source, a.out, a.size_gb)


def replicate(source, out_path, size_gb, period=None, copies=None):
    """Writes copies of `source` until `size_gb` (or exactly `copies`); each copy shifted by
    `period` us (default: the source's span + 1 ms). Ranks of one job pass a common period and
    count so their steps and collectives stay aligned."""
    text = read_text(source)
    head, events, tail = split_events(text)
    once, repl = [], []
    lo, hi, max_id, max_step = None, 0, 0, 0
    for ev in events:
        if '"ph": "M"' in ev or '"cat": "Trace"' in ev or '"Record Window End"' in ev or "Iteration Start" in ev:
            once.append(ev)
            continue
        t = TS.search(ev)
        if not t:
            once.append(ev)
            continue
        ts = int(t.group(1))
        d = DUR.search(ev)
        lo = ts if lo is None else min(lo, ts)
        hi = max(hi, ts + (int(d.group(1)) if d else 0))
        tpl = template(ev)
        for f, v in tpl[1]:
            if f != "ts":
                max_id = max(max_id, v)
        if tpl[2]:
            max_step = max(max_step, int(tpl[2].group(1)))
        repl.append(tpl)
    if period is None:
        period = (hi - lo) + 1000
    if copies is None:
        copies = copies_for(events, size_gb)
    id_stride = max_id + 1
    to_stdout = out_path == "-"
    f = sys.stdout if to_stdout else open(out_path, "w", encoding="utf-8", newline="\n")
    written = 0

    def put(text):
        nonlocal written
        f.write(text)
        written += len(text)

    put(head)
    put("\n")
    first = True
    for ev in once:
        put(("" if first else ",\n") + ev)
        first = False
    for r in range(copies):
        shift, off, step_off = r * period, r * id_stride, r * (max_step + 1)
        chunk = []
        for parts, slots, step in repl:
            out = [parts[0]]
            for i, (field, v) in enumerate(slots):
                out.append(str(v + shift if field == "ts" else v + off))
                out.append(parts[i + 1])
            s = "".join(out)
            if step:
                n = int(step.group(1))
                s = s.replace(f'"ProfilerStep#{n}"', f'"ProfilerStep#{n + step_off}"')
            chunk.append(s)
        put(("" if first else ",\n") + ",\n".join(chunk))
        first = False
    put("\n")
    put(tail)
    f.flush()
    if not to_stdout:
        f.close()
    size = written if to_stdout else os.path.getsize(out_path)
    print(f"{out_path}: {size / 1e6:.1f} MB, {copies} copies of {len(repl)} events "
          f"(+{len(once)} once) = {copies * len(repl) + len(once)} events", file=sys.stderr)


if __name__ == "__main__":
    main()
