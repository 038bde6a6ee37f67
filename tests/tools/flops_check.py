#!/usr/bin/env python3
"""Independent operator FLOPs and bytes against the "efficiency" section of
`stallscope-cli analyze --json TRACE` (stdlib only).

    flops_check.py TRACES_DIR CLI                  check every Kineto trace under TRACES_DIR
    flops_check.py TRACES_DIR CLI --independent    only print the independent figures (the
                                                   CLI's window), no comparison

Every *.json / *.json.gz file under TRACES_DIR that is a Kineto trace by content (a JSON
object with a "traceEvents" list, or a bare array of trace events as the legacy profiler and
old Kineto wrote; SQLite, pickles and rocprof JSON are skipped) is analysed by the CLI, and
read here with json and gzip alone, over the window the CLI reports:

- operators: complete events ("ph": "X") of category cpu_op / Operator (or none) whose name is
  not ProfilerStep#N, starting in [window start, window end) (ts in us read as decimals, x 1000,
  + baseTimeNanoseconds, half up);
- outermost: an operator with no enclosing operator on its (pid, tid) (nesting by time, the
  earlier-listed of two equal spans outside) whose name is in the cost table;
- groups: the table's operators with "Input Dims" (or "Input dims") in the window, by (name,
  Input Dims, Input type, Concrete Inputs): calls, outermost calls, and the FLOPs and bytes of
  one call by flops_formulas.py (an independent reading of the table);
- model FLOPs: the FLOPs of the outermost tensor-math calls whose shapes fit.

Checks: each of our rows has the independent FLOPs, bytes (relative 1e-9, null alike), exact
flag and formula class of its own (name, shapes, types, concrete inputs); its calls and
outermost calls equal the group's (calls within 1 us of the window's edges may differ); every
group is a row (unless rows were left out and the group's flops x calls is not above our
smallest listed row's); model_flops agrees, model_flops_per_step = model_flops / the steps in
the window (null without steps); a trace without "Input Dims" in the window has
"shapes": false and model_flops 0.

Exit 0 = agree, 1 = disagree, 77 = no traces folder.
"""
import gzip
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from decimal import Decimal, ROUND_HALF_UP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flops_formulas as ff  # noqa: E402

STEP = re.compile(r"ProfilerStep#\d+")
OPERATOR_CATS = {"cpu_op", "Operator"}
REL = 1e-9
EDGE_NS = 1000
CLI_TIMEOUT_S = 300
SLOW_SKIP_S = 60       # graph capture traces: skipped when the CLI takes longer than this
SLOW_CANDIDATES = ("tracelens-inference/vllm_decode_full/graph_capture",)


# ---------------------------------------------------------------------------------------
# Reading traces.

def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def kineto_events(doc):
    """The trace's event list, or None when the document is not a Kineto/legacy trace."""
    if isinstance(doc, dict):
        evs = doc.get("traceEvents")
        return evs if isinstance(evs, list) else None
    if isinstance(doc, list) and doc and all(isinstance(e, dict) for e in doc[:100]) \
            and any("ph" in e for e in doc[:100]):
        return doc
    return None


def load(path):
    """(doc, events) of a Kineto trace, or (None, None)."""
    try:
        data = read_bytes(path)
        doc = json.loads(data, parse_float=Decimal)
    except (OSError, ValueError, EOFError, UnicodeDecodeError):
        return None, None
    evs = kineto_events(doc)
    if evs is None:
        return None, None
    return (doc if isinstance(doc, dict) else {"traceEvents": doc}), evs


def to_ns(v, base):
    ns = Decimal(str(v)) * 1000 + base
    return int(ns.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def canon(v):
    return json.dumps(v, default=str, separators=(",", ":"))


def norm_list(v):
    """An absent or empty "Input type" / "Concrete Inputs" reads as None."""
    return v if isinstance(v, list) and v else None


def is_operator(e):
    return ("cat" not in e or e.get("cat") in OPERATOR_CATS) and not STEP.fullmatch(str(e.get("name", "")))


def independent(doc, evs, lo, hi):
    """The independent groups of the window [lo, hi) and its model FLOPs."""
    base = Decimal(int(doc.get("baseTimeNanoseconds", 0) or 0))
    threads = defaultdict(list)
    for idx, e in enumerate(evs):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e or not is_operator(e):
            continue
        ts = to_ns(e["ts"], base)
        dur = to_ns(e.get("dur", 0) or 0, Decimal(0))
        threads[(str(e.get("pid")), str(e.get("tid")))].append((ts, ts + max(dur, 0), idx, e))

    groups = {}
    outputs = defaultdict(set)   # (input, weight) of backward calls -> grad_output spatial sizes
    has_dims = False
    for evl in threads.values():
        evl.sort(key=lambda r: (r[0], -r[1], r[2]))
        stack = []   # (end, covered: this or an enclosing operator is a table operator)
        for ts, end, _, e in evl:
            while stack and stack[-1][0] < end:
                stack.pop()
            enclosed = bool(stack) and stack[-1][1]
            name = e.get("name", "")
            in_table = ff.is_table_operator(name)
            stack.append((end, enclosed or in_table))
            inside = lo <= ts < hi
            if not inside and not (lo - EDGE_NS < ts < hi + EDGE_NS):
                continue
            args = e.get("args") or {}
            dims = args.get("Input Dims", args.get("Input dims"))
            if dims is None:
                continue
            if not in_table:
                continue
            has_dims = has_dims or inside   # "shapes": the cost table's operators carry them
            types = norm_list(args.get("Input type"))
            conc = norm_list(args.get("Concrete Inputs"))
            key = (name, canon(dims), canon(types), canon(conc))
            g = groups.get(key)
            if g is None:
                g = groups[key] = {"name": name, "dims": dims, "types": types, "concrete": conc,
                                   "calls": 0, "outermost": 0, "edge": 0, "edge_outermost": 0}
            rule = ff.TABLE[name]
            if inside and rule[0] == "conv_backward":
                gout, x, w = (dims[rule[1][k]] if rule[1][k] < len(dims) else None
                              for k in ("gout", "x", "w"))
                if all(isinstance(v, list) for v in (gout, x, w)) and len(gout) > 2 and len(gout) == len(x) \
                        and ff.operator_cost(name, dims, types, conc).flops is not None:
                    outputs[(canon(x), canon(w))].add(tuple(gout[2:]))
            # Calls within 1 us of the window's edges (either side) may be counted either way.
            near_edge = abs(ts - lo) < EDGE_NS or abs(hi - ts) <= EDGE_NS
            g["calls"] += inside
            g["edge"] += near_edge
            if not enclosed:
                g["outermost"] += inside
                g["edge_outermost"] += near_edge
    # A forward convolution without recorded strides: its output from the backward of the same
    # input and weight shapes when those agree on one (docs/analysis.md "Efficiency").
    for g in groups.values():
        hint = None
        rule = ff.TABLE[g["name"]]
        if rule[0] == "conv":
            d = g["dims"]
            x, w = (d[rule[1][k]] if rule[1][k] < len(d) else None for k in ("x", "w"))
            seen = outputs.get((canon(x), canon(w)))
            if seen and len(seen) == 1:
                hint = list(next(iter(seen)))
        g["cost"] = ff.operator_cost(g["name"], g["dims"], g["types"], g["concrete"], hint)
    model = slack = 0.0
    for g in groups.values():
        c = g["cost"]
        if c.model and c.flops is not None:
            model += c.flops * g["outermost"]
            slack += c.flops * g["edge_outermost"]
    return groups, has_dims, model, slack


# ---------------------------------------------------------------------------------------
# Comparing.

def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return a == b or abs(a - b) <= REL * max(abs(a), abs(b))


def steps_in_window(a):
    st = a.get("steps") or (a.get("window") or {}).get("steps") or {}
    n = int(st.get("count", 0) or 0) - int(st.get("warmup", 0) or 0)
    return max(n, 0)


def weight(flops, calls):
    return (flops or 0.0) * calls


def compare(label, a, groups, has_dims, model, slack):
    problems = []
    eff = a.get("efficiency")
    if not isinstance(eff, dict):
        return [f"{label}: no \"efficiency\" section"], 0, None
    rows = eff.get("operators") or []
    more = int(eff.get("operators_more", 0) or 0)
    ours_model = eff.get("model_flops")

    if eff.get("shapes") is not has_dims:
        problems.append(f"{label}: shapes {eff.get('shapes')!r}, independent {has_dims} "
                        f"(table operators with Input Dims in the window)")
    if not has_dims and ours_model not in (0, 0.0):
        problems.append(f"{label}: no Input Dims in the window but model_flops {ours_model!r}")
    if ours_model is None or not (close(ours_model, model) or abs(float(ours_model) - model) <= slack):
        problems.append(f"{label}: model_flops ours {ours_model!r}, independent {model!r}"
                        + (f" (+- {slack:g} at the window's edges)" if slack else ""))

    nsteps = steps_in_window(a)
    per = eff.get("model_flops_per_step")
    if nsteps <= 0:
        if per is not None:
            problems.append(f"{label}: model_flops_per_step {per!r} without steps (want null)")
    elif per is None or ours_model is None or not close(per, float(ours_model) / nsteps):
        problems.append(f"{label}: model_flops_per_step {per!r}, want model_flops / {nsteps} steps"
                        f" = {None if ours_model is None else float(ours_model) / nsteps!r}")

    devices = eff.get("devices")
    if not isinstance(devices, dict):
        problems.append(f"{label}: efficiency.devices is not an object")
    else:
        for d, dv in devices.items():
            mfu = dv.get("mfu") if isinstance(dv, dict) else None
            if mfu is not None and (not isinstance(mfu, (int, float)) or mfu < 0):
                problems.append(f"{label}: device {d} mfu {mfu!r}")
            elif mfu and not model:
                problems.append(f"{label}: device {d} mfu {mfu!r} without model FLOPs")

    if len(rows) > 1000:
        problems.append(f"{label}: {len(rows)} operator rows (at most 1000)")
    seen = set()
    prev_w = None
    for r in rows:
        name = r.get("name")
        types = norm_list(r.get("input_types"))
        conc = norm_list(r.get("concrete_inputs"))
        dims = r.get("input_dims")
        key = (name, canon(dims), canon(types), canon(conc))
        desc = f"{label}: {name} {canon(dims)}"
        if key in seen:
            problems.append(f"{desc}: listed twice")
        seen.add(key)
        w = weight(r.get("flops"), r.get("calls", 0) or 0)
        if prev_w is not None and w > prev_w * (1 + REL):
            problems.append(f"{desc}: rows not in order of flops x calls ({w:g} after {prev_w:g})")
        prev_w = w
        known = groups.get(key)
        cost = known["cost"] if known else ff.operator_cost(name, dims, types, conc)
        if cost is None:
            problems.append(f"{desc}: not an operator of the independent table")
            continue
        if r.get("formula") != cost.formula:
            problems.append(f"{desc}: formula {r.get('formula')!r}, independent {cost.formula!r}")
        if (r.get("formula") in ff.MODEL_FORMULAS) != cost.model:
            problems.append(f"{desc}: formula {r.get('formula')!r} is "
                            f"{'' if cost.model else 'not '}tensor math independently")
        if not close(r.get("flops"), cost.flops):
            problems.append(f"{desc} types {canon(types)} concrete {canon(conc)}: flops per call "
                            f"ours {r.get('flops')!r}, independent {cost.flops!r}")
        if not close(r.get("bytes"), cost.bytes):
            problems.append(f"{desc} types {canon(types)}: bytes per call ours {r.get('bytes')!r}, "
                            f"independent {cost.bytes!r}")
        if cost.flops is not None and bool(r.get("exact")) != cost.exact:
            problems.append(f"{desc} concrete {canon(conc)}: exact {r.get('exact')!r}, "
                            f"independent {cost.exact}")
        g = groups.get(key)
        calls, outer = r.get("calls", 0) or 0, r.get("outermost_calls", 0) or 0
        if g is None:
            problems.append(f"{desc}: {calls} calls, none in the window independently")
            continue
        if abs(calls - g["calls"]) > g["edge"]:
            problems.append(f"{desc}: calls ours {calls}, independent {g['calls']}")
        if abs(outer - g["outermost"]) > g["edge_outermost"]:
            problems.append(f"{desc}: outermost calls ours {outer}, independent {g['outermost']}")

    smallest = min((weight(r.get("flops"), r.get("calls", 0) or 0) for r in rows), default=0.0)
    for key, g in groups.items():
        if key in seen:
            continue
        w = weight(g["cost"].flops, g["calls"])
        if more > 0 and w <= smallest * (1 + REL):
            continue
        if g["calls"] <= g["edge"]:
            continue   # only calls at the window's edges
        problems.append(f"{label}: {g['name']} {canon(g['dims'])} types {canon(g['types'])} "
                        f"concrete {canon(g['concrete'])}: {g['calls']} calls (flops "
                        f"{g['cost'].flops!r}) in no row of ours"
                        + (f" (operators_more {more}, smallest row {smallest:g})" if more else ""))
    return problems, len(rows), ours_model


# ---------------------------------------------------------------------------------------

def find_traces(root):
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".json") or f.endswith(".json.gz"):
                out.append(os.path.join(d, f))
    return sorted(out)


def run_cli(cli, path, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run([cli, "analyze", "--json", path], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", time.monotonic() - t0
    dt = time.monotonic() - t0
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {p.stderr.strip()[:300]}", dt
    try:
        return json.loads(p.stdout), None, dt
    except ValueError as ex:
        return None, f"output is not JSON ({ex})", dt


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    only_independent = "--independent" in argv
    if len(args) != 2:
        print(__doc__)
        return 2
    root, cli = args
    if not os.path.isdir(root):
        print(f"flops_check: no traces folder {root}: skipped")
        return 77
    if not os.access(cli, os.X_OK):
        print(f"flops_check: {cli} is not an executable")
        return 1
    problems = []
    checked = 0
    t_start = time.monotonic()
    for path in find_traces(root):
        rel = os.path.relpath(path, root)
        doc, evs = load(path)
        if doc is None:
            continue
        slow_ok = any(rel.replace(os.sep, "/").startswith(s) for s in SLOW_CANDIDATES)
        out, err, dt = run_cli(cli, path, SLOW_SKIP_S if slow_ok else CLI_TIMEOUT_S)
        if out is None and slow_ok and "timed out" in err:
            print(f"{rel}: skipped (the CLI took over {SLOW_SKIP_S} s)")
            continue
        if out is None:
            problems.append(f"{rel}: the CLI failed: {err}")
            print(f"{rel}: CLI failed")
            continue
        if not isinstance(out, list) or len(out) != 1:
            print(f"{rel}: {len(out) if isinstance(out, list) else 'no'} analyses for one file: skipped")
            continue
        a = out[0]
        w = a.get("window") or {}
        lo, hi = w.get("start_ns"), w.get("end_ns")
        if lo is None or hi is None:
            problems.append(f"{rel}: no window in the CLI's JSON")
            continue
        groups, has_dims, model, slack = independent(doc, evs, lo, hi)
        checked += 1
        nsteps = steps_in_window(a)
        if only_independent:
            per = f", {model / nsteps:.4g} per step ({nsteps})" if nsteps else ""
            print(f"{rel}: {len(groups)} groups, shapes {has_dims}, model FLOPs {model:.6g}{per}")
            top = sorted(groups.values(), key=lambda g: -weight(g["cost"].flops, g["outermost"]
                                                                 if g["cost"].model else 0))
            for g in top[:4]:
                c = g["cost"]
                if not c.model or c.flops is None:
                    continue
                print(f"    {g['name']} {canon(g['dims'])[:70]} x{g['calls']} "
                      f"(outermost {g['outermost']}): {c.flops:.6g} FLOPs, "
                      f"{'-' if c.bytes is None else f'{c.bytes:.6g}'} bytes, exact {c.exact}")
            continue
        ps, nrows, ours_model = compare(rel, a, groups, has_dims, model, slack)
        problems.extend(ps)
        print(f"{rel}: {nrows} rows, model FLOPs ours {ours_model!r}, independent {model:.6g}"
              + (f" -- {len(ps)} problem(s)" if ps else ""))
    if checked == 0:
        print("flops_check: no Kineto traces found: skipped")
        return 77
    for p in problems:
        print("DISAGREE", p)
    print(f"flops_check: {checked} traces, {len(problems)} disagreement(s), "
          f"{time.monotonic() - t_start:.1f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
