"""The claims audit's measures for the findings about a busy GPU's own work that read operator
shapes (docs/claims.md `unaligned_gemms`, `attention_blocks`), recomputed from the trace's
events as docs/analysis.md describes gemm_padding and unfused_attention: a second reading,
sharing no code with the C++ detectors. Python 3.11 standard library only."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import flops_formulas as F  # noqa: E402

TENSOR_FAMILIES = {"gemm", "grouped_gemm", "conv", "attention"}
MATRIX_FORMULAS = {"mm", "bmm", "matmul", "linear"}


class Problem(Exception):
    pass


def _dims(ev):
    d = ev.args.get("Input Dims")
    if d is None:
        d = ev.args.get("Input dims")
    return d if isinstance(d, list) else None


def _compact(v):
    return json.dumps(v, separators=(", ", ": "))


def _table_outermost(ev):
    """The outermost operator of the cost table around (or at) a CPU slice; None."""
    out = None
    q = ev
    while q is not None:
        if q.kind == "op" and q.name in F.TABLE:
            out = q
        q = q.parent
    return out


def _in_window(ctx, ev):
    return ctx.jwin.start <= ev.ts < ctx.jwin.end


def _tensor_ns_by_call(ctx, dev):
    """Kernel time of the GEMM/conv/attention kernels on `dev` starting in the window, by the
    outermost cost-table operator around their launch call (the Ev object's index)."""
    key = ("busy_tensor", dev, ctx.jwin.start, ctx.jwin.end)
    if key in ctx._att:
        return ctx._att[key]
    tr = ctx.tr
    out = {}
    for g in tr.gpu:
        if g.dev != dev or g.kind != "kernel" or not _in_window(ctx, g):
            continue
        if tr.kernels.classify(g.name)["family"] not in TENSOR_FAMILIES:
            continue
        lt = tr.launch_of.get(g.corr) if g.corr is not None else None
        op = _table_outermost(lt.parent) if lt is not None and lt.parent is not None else None
        if op is not None and _in_window(ctx, op):
            out[op.idx] = out.get(op.idx, 0) + (g.end - g.ts)
    ctx._att[key] = out
    return out


def _mnk(name, dims):
    """(M, N, K) of one matrix multiply from its recorded inputs, by the schema positions."""
    rule = F.TABLE.get(name)
    if rule is None or rule[0] not in MATRIX_FORMULAS:
        return None
    formula, p = rule[0], rule[1]
    shapes = [d if isinstance(d, list) else [] for d in dims]
    if formula == "linear":
        x, w = shapes[p["x"]], shapes[p["w"]]
        if not x or len(w) != 2:
            return None
        m = 1
        for v in x[:-1]:
            m *= v
        return m, w[0], x[-1]
    a, b = shapes[p["a"]], shapes[p["b"]]
    if not a or not b:
        return None
    if len(a) == 1:
        a = [1] + a
    if len(b) == 1:
        b = b + [1]
    return a[-2], b[-1], a[-1]


def m_unaligned_gemms(ctx, p):
    """gemm_padding's numbers: a row's calls, its M/N/K size, its achieved TFLOP/s; the listed
    rows' GEMM kernel time (`ns`) and count (`shapes`)."""
    dev, st = p["device"], p.get("stat")
    per_call = _tensor_ns_by_call(ctx, dev)
    calls = [ev for ev in ctx.tr.cpu if ev.kind == "op" and ev.idx in per_call]

    def row_calls(name, dims):
        return [ev for ev in calls if ev.name == name and _dims(ev) is not None and
                _compact(_dims(ev)) == dims and _table_outermost(ev) is ev]
    if st in ("calls", "dim", "tflops"):
        # a shape shown as a name: {"operator": op, "name": dims}
        name, dims = (p["operator"], p["name"]) if "operator" in p else (p["name"], p["dims"])
        rows = row_calls(name, dims)
        if st == "calls":
            return len(rows)
        if not rows:
            raise Problem(f"unaligned_gemms: no outermost {name} on {dims} with GEMM kernels")
        mnk = _mnk(name, _dims(rows[0]))
        if st == "dim":
            return None if mnk is None else mnk["MNK".index(p["axis"])]
        c = F.operator_cost(name, _dims(rows[0]), rows[0].args.get("Input type"),
                            rows[0].args.get("Concrete Inputs"))
        ns = sum(per_call[ev.idx] for ev in rows)
        return None if c is None or c.flops is None or not ns else c.flops * len(rows) / (ns * 1e-9)
    if st in ("ns", "shapes"):
        listed = p.get("rows") or []
        if st == "shapes":
            return len(listed)
        total = 0
        for row in listed:
            name, dims = row.split(" ", 1)
            rows = row_calls(name, dims)
            for ev in rows:
                types = [t for t in (ev.args.get("Input type") or []) if t]
                mnk = _mnk(name, _dims(ev))
                align = 8 if any(t in ("c10::Half", "c10::BFloat16", "Half", "BFloat16") for t in types[:1]) \
                    else 16 if types and "Float8" in types[0] else 0
                if not align or mnk is None or not any(v >= 64 and v % align for v in mnk):
                    raise Problem(f"unaligned_gemms: {name} {dims} is not an unaligned 16/8-bit product")
            total += sum(per_call[ev.idx] for ev in rows)
        return total
    raise Problem(f"unaligned_gemms: unknown stat {st!r}")


# ------------------------------------------------------------------ unfused attention

SOFTMAX = {"aten::softmax", "aten::_softmax", "aten::_safe_softmax"}
PRODUCT_FIRST = {"aten::matmul": 0, "aten::bmm": 0, "aten::baddbmm": 1}


def _children(ctx):
    key = ("children",)
    if key not in ctx._att:
        kids = {}
        for ev in ctx.tr.cpu:
            kids.setdefault((ev.thread, ev.parent.idx if ev.parent is not None else None), []).append(ev)
        for v in kids.values():
            v.sort(key=lambda e: (e.ts, -e.end))
        ctx._att[key] = kids
    return ctx._att[key]


def _numel(shape):
    n = 1
    for v in shape:
        n *= v
    return n


def attention_blocks(ctx):
    """(softmax, first product, second product) of each softmax over a rank >= 3 tensor (not
    inside another softmax) starting in the window whose nearest matrix-multiply siblings (at
    most 12 siblings away) make and take its shape."""
    key = ("attention", ctx.jwin.start, ctx.jwin.end)
    if key in ctx._att:
        return ctx._att[key]
    kids = _children(ctx)
    blocks = []
    for ev in ctx.tr.cpu:
        if ev.kind != "op" or ev.name not in SOFTMAX or not _in_window(ctx, ev):
            continue
        if ev.parent is not None and ev.parent.name in SOFTMAX:
            continue
        sib = kids[(ev.thread, ev.parent.idx if ev.parent is not None else None)]
        i = next(k for k, s in enumerate(sib) if s is ev)

        def near(rng):
            seen = 0
            for k in rng:
                if sib[k].name in PRODUCT_FIRST:
                    return sib[k]
                seen += 1
                if seen > 12:
                    return None
            return None
        before = near(range(i - 1, -1, -1))
        after = near(range(i + 1, len(sib)))
        x = _dims(ev)
        if before is None or after is None or not x or not isinstance(x[0], list) or len(x[0]) < 3:
            continue
        scores = x[0]
        lq, lk = scores[-2], scores[-1]
        batch = _numel(scores) // max(1, lq * lk)
        db, da = _dims(before), _dims(after)
        fb, fa = PRODUCT_FIRST[before.name], PRODUCT_FIRST[after.name]
        if not db or not da or len(db) <= fb + 1 or len(da) <= fa:
            continue
        a, b = db[fb], db[fb + 1]
        if len(a) < 3 or len(b) < 2:
            continue
        if (max(_numel(a[:-2]), _numel(b[:-2])), a[-2], b[-1]) != (batch, lq, lk):
            continue
        q = da[fa]
        if len(q) < 2 or (q[-2], q[-1]) != (lq, lk) or _numel(q) != _numel(scores):
            continue
        blocks.append((ev, before, after))
    ctx._att[key] = blocks
    return blocks


def m_attention_blocks(ctx, p):
    dev, st = p["device"], p.get("stat")
    tr = ctx.tr
    launched = {}
    for g in tr.gpu:
        if g.dev == dev and g.kind == "kernel":
            lt = tr.launch_of.get(g.corr) if g.corr is not None else None
            if lt is not None:
                launched.setdefault(lt.thread, []).append((lt.ts, g.end - g.ts))
    per = []
    for sm, before, after in attention_blocks(ctx):
        ks = [d for t, d in launched.get(sm.thread, []) if before.ts <= t < after.end]
        per.append((sm, before, after, ks))
    mine = [b for b in per if b[3]]
    if st == "blocks":
        return len(mine)
    if st == "kernels":
        return sum(len(b[3]) for b in mine)
    if st == "ns":
        return sum(sum(b[3]) for b in mine)
    if st == "calls":
        n = p["name"]
        return sum(1 for sm, b, a, _ in mine for e in (sm, b, a) if e.name == n) + \
            sum(1 for sm, _, _, _ in mine for q in _ancestors(sm) if q.name == n)
    if st in ("shape_calls", "shape_bytes"):
        rows = [sm for sm, _, _, _ in mine if _compact(_dims(sm)[0]) == p["name"]]
        if st == "shape_calls":
            return len(rows)
        if not rows:
            return None
        t = (rows[0].args.get("Input type") or [""])[0]
        return _numel(_dims(rows[0])[0]) * F.DTYPE_SIZE[t] if t in F.DTYPE_SIZE else None
    raise Problem(f"attention_blocks: unknown stat {st!r}")


def _ancestors(ev):
    q = ev.parent
    while q is not None:
        yield q
        q = q.parent


# ------------------------------------------------------------------ launch statistics

def check_launch_stats(ctx):
    """devices[d].launch_stats against HTA's launch statistics recomputed here: each kernel,
    copy and memset starting in the window with the runtime call of its correlation."""
    out = []
    for d, dev in (ctx.a.get("devices") or {}).items():
        ls = dev.get("launch_stats")
        if ls is None:
            out.append(f"launch_stats: device {d} has none")
            continue
        n = short = slow = late = 0
        for g in ctx.tr.gpu:
            if g.dev != int(d) or not _in_window(ctx, g):
                continue
            lt = ctx.tr.launch_of.get(g.corr) if g.corr is not None else None
            if lt is None:
                continue
            call = lt.end - lt.ts
            n += 1
            short += (g.end - g.ts) < call
            slow += call > 50_000
            late += (g.ts - lt.end) > 100_000
        got = (ls["items"], ls["shorter_than_launch"], ls["slow_calls"], ls["delay_outliers"])
        if got != (n, short, slow, late):
            out.append(f"launch_stats: device {d} items/shorter/slow/late {got} vs recomputed {(n, short, slow, late)}")
    return out
