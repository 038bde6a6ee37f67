#!/usr/bin/env python3
"""Check stallscope-cli's findings on the real trace corpus against expectations.tsv.

    check_expectations.py --cli build/release/app/stallscope-cli --traces ../shared/traces
                          [--table tests/expectations/expectations.tsv] [--only SUBSTRING]

For every row of the table it runs `CLI analyze --json TRACE` and checks:
  * top:      `-`      no expectation;
              `none`   no timing finding at all;
              a context kind (graph_capture, compilation, graph_breaks): the first finding
                       is that kind and no timing finding is given;
              gpu_not_used: the first finding is that kind (a context finding about the
                       trace; the CPU-only timing findings may follow it);
              a timing kind: the timing finding with the largest saving_pct has that kind
                       (context kinds and memory_pressure, a risk with no saving, are not
                       timing findings for this purpose);
  * must:     every listed kind appears (any severity);
  * must_not: no listed kind appears (any severity, notes included).
It also fails when a trace file under --traces has no row (the table must cover the corpus)
and when a row's file is missing.

Prints one line per trace, PASS or FAIL with the reasons, and exits 1 on any failure, 0 when
all pass, 77 (CTest's skip code) when the traces folder is absent. Python 3.11 stdlib only.
The evidence for each row is in docs/expectations.md; tests/expectations/evidence.py
recomputes it from the trace JSON without Stallscope.
"""
import argparse
import json
import os
import subprocess
import sys

import corpus  # tests/expectations/corpus.py: the corpus told apart by content

# warmup as a top: the whole window is warm-up (the finding comes first and silences timing);
# a warm-up with a steady part after it is context beside the timing findings (must / must_not).
CONTEXT_KINDS = {"graph_capture", "compilation", "graph_breaks", "warmup"}
FIRST_KINDS = {"gpu_not_used", "gpu_not_recorded"}  # context, first; host-only timing may follow
TIMING_KINDS = {"data_loading", "blocking_h2d_copy", "host_sync", "cpu_dispatch", "no_tensor_cores",
                "logging_checkpoint", "comm_exposed", "low_utilization", "allocator_churn"}
RISK_KINDS = {"memory_pressure"}          # a finding with no saving: never "top"
KNOWN_KINDS = CONTEXT_KINDS | FIRST_KINDS | TIMING_KINDS | RISK_KINDS

# TRANSITIONAL: the finding kinds before issue 12 merged the CPU-dispatch family into one
# kind. Binaries built before that change print these names; they all mean cpu_dispatch now.
# Remove this table once no binary with the old names is in use.
OLD_KIND_ALIASES = {
    "launch_bound": "cpu_dispatch",
    "small_batch": "cpu_dispatch",
    "light_model": "cpu_dispatch",
    "host_bound": "cpu_dispatch",
}


def canon(kind):
    return OLD_KIND_ALIASES.get(kind, kind)


def split_list(field):
    field = field.strip()
    if field in ("", "-"):
        return []
    return [k.strip() for k in field.split(",") if k.strip()]


def read_table(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 5:
                raise SystemExit(f"{path}:{n}: expected 5 tab-separated columns, got {len(cols)}")
            trace, top, must, must_not, evidence = (c.strip() for c in cols)
            for k in split_list(must) + split_list(must_not) + ([top] if top not in ("-", "none") else []):
                if k not in KNOWN_KINDS:
                    raise SystemExit(f"{path}:{n}: unknown finding kind {k!r}")
            rows.append({"line": n, "trace": trace, "top": top, "must": split_list(must),
                         "must_not": split_list(must_not), "evidence": evidence})
    return rows


def trace_files(root):
    # The Kineto/Chrome traces, told apart by content (corpus.py), not by name: rocprofv3 JSON
    # and memory timelines are not traces; SQLite, pickle and HTML files are checked apart.
    return corpus.kineto_traces(root)


def run_cli(cli, path, timeout):
    p = subprocess.run([cli, "analyze", "--json", path], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip()[:300]}")
    doc = json.loads(p.stdout)
    objs = doc if isinstance(doc, list) else [doc]
    findings = []
    for o in objs:
        for f in o.get("findings", []):
            findings.append({"kind": canon(f.get("kind", "")), "raw": f.get("kind", ""),
                             "saving_pct": float(f.get("saving_pct") or 0.0),
                             "severity": f.get("severity", "")})
    return findings


def describe(findings):
    if not findings:
        return "(no findings)"
    parts = []
    for f in findings:
        alias = f" [{f['raw']}]" if f["raw"] != f["kind"] else ""
        parts.append(f"{f['kind']}{alias} {f['saving_pct']:.1f}%")
    return ", ".join(parts)


def check(row, findings):
    reasons = []
    kinds = {f["kind"] for f in findings}
    timing = [f for f in findings if f["kind"] in TIMING_KINDS]
    top = row["top"]
    if top in FIRST_KINDS:
        if not findings or findings[0]["kind"] != top:
            reasons.append(f"expected {top} first, got {findings[0]['kind'] if findings else 'nothing'}")
    elif top == "none":
        if timing:
            reasons.append(f"expected no timing finding, got {timing[0]['kind']}")
    elif top in CONTEXT_KINDS:
        if not findings or findings[0]["kind"] != top:
            reasons.append(f"expected context finding {top} first, got "
                           f"{findings[0]['kind'] if findings else 'nothing'}")
        if timing:
            reasons.append(f"expected no timing finding under {top}, got "
                           + ", ".join(sorted({f['kind'] for f in timing})))
    elif top != "-":
        if not timing:
            reasons.append(f"expected top timing finding {top}, got none")
        else:
            best = max(timing, key=lambda f: f["saving_pct"])   # max() keeps the first of ties
            if best["kind"] != top:
                reasons.append(f"expected top {top}, got {best['kind']} ({best['saving_pct']:.1f}%)")
    for k in row["must"]:
        if k not in kinds:
            reasons.append(f"missing {k}")
    for k in row["must_not"]:
        if k in kinds:
            f = next(f for f in findings if f["kind"] == k)
            reasons.append(f"unexpected {k} ({f['severity']}, {f['saving_pct']:.2f}%)")
    return reasons


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="check stallscope-cli findings against expectations.tsv")
    ap.add_argument("--cli", required=True, help="path to stallscope-cli")
    ap.add_argument("--traces", required=True, help="the real trace corpus (../shared/traces)")
    ap.add_argument("--table", default=os.path.join(here, "expectations.tsv"))
    ap.add_argument("--only", default=None, help="check only rows whose path contains this")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per CLI run")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the findings of passing rows too")
    a = ap.parse_args()

    if not os.path.isdir(a.traces):
        print(f"SKIP: traces folder {a.traces} not found (the real trace corpus is not checked out)")
        return 77
    if not (os.path.isfile(a.cli) and os.access(a.cli, os.X_OK)):
        print(f"FAIL: {a.cli} is not an executable")
        return 1
    rows = read_table(a.table)
    failures = 0
    listed = {r["trace"] for r in rows}
    if a.only is None:
        for rel in sorted(trace_files(a.traces) - listed):
            print(f"FAIL {rel}: no row in {os.path.basename(a.table)} (every trace file needs one)")
            failures += 1
    for row in rows:
        if a.only is not None and a.only not in row["trace"]:
            continue
        path = os.path.join(a.traces, row["trace"])
        if not os.path.isfile(path):
            print(f"FAIL {row['trace']}: file missing under {a.traces}")
            failures += 1
            continue
        try:
            findings = run_cli(a.cli, path, a.timeout)
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            print(f"FAIL {row['trace']}: stallscope-cli failed: {e}")
            failures += 1
            continue
        reasons = check(row, findings)
        if reasons:
            failures += 1
            print(f"FAIL {row['trace']} [{row['evidence']}]: " + "; ".join(reasons)
                  + f"  -- findings: {describe(findings)}")
        else:
            extra = f"  -- findings: {describe(findings)}" if a.verbose else ""
            print(f"PASS {row['trace']} (top {row['top']}){extra}")
    # The files that are not traces (corpus.py): each must be refused with its one line.
    failures += corpus.check_not_traces(a.cli, a.traces, a.only, a.timeout)
    print(f"{failures} failure(s)" if failures else "all expectations met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
