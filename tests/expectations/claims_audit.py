#!/usr/bin/env python3
"""The independent claims audit (docs/claims.md): every number and name a finding states,
recomputed from the trace by a second reading of docs/analysis.md.

    claims_audit.py --cli build/release/app/stallscope-cli [--traces ../shared/traces]
                    [--only SUBSTRING] [--verbose]

For every Kineto trace of the corpus (told apart by content: corpus.py) it runs
`stallscope-cli analyze --json TRACE` and checks each finding:
  1. coverage: every standalone number and every back-quoted name of its title, explanation
     and fix lies inside the text of one of its claims (each claim covers one occurrence);
  2. value: each claim's measure recomputed from the trace JSON (gzip + json, never
     Stallscope's code) agrees with the number its text shows (docs/claims.md "Agreement");
  3. premises (docs/claims.md "Premises"): the window and warm-up recomputed, every idle cause
     backed by calls of its family, order and severity, and the words each sentence needs.

Prints one line per trace (PASS, or FAIL with the failing claims: finding, claim text, measure,
shown vs recomputed); exits 0 when all pass, 1 on any failure, 77 when the traces folder is
absent (CTest's skip code). Python 3.11 standard library only. The audit's own reading of the
rules lives in claims_model.py; test_claims_audit_unit.py pins it on tiny inline traces.

Readings of docs/claims.md's measures where it leaves a choice:
  * kernel_ns: "total duration" is the union of the class's kernels inside the window
    (overlapping collectives on two streams count once, as the communication time does).
  * kernel_median_ns: for an even count the mean, lower or upper middle are all accepted.
  * launch_bound: "regions" are the steps (tiles; the window without steps) the test applies to
    (>= 50 kernels or >= 1 ms); mean_queue is the kernels' queued time (launch end to start)
    over the time not spent loading data or logging, pooled over the launch-bound steps.
  * matmul_flops: the operators of the first whole step with a tensor-math formula of
    tests/tools/flops_formulas.py (matrix multiplies, convolutions, attention) that no operator
    of its table encloses, each sized by that formula (docs/analysis.md "Efficiency").
  * copies: MB = 10^6 bytes; "larger than 64 KB" = more than 65,536 bytes.
  * sync_calls: a synchronous copy of unknown direction is a wait; "inside steps" = starting
    inside a ProfilerStep range of the window. sync_idle_ns counts the blocking-copy idle inside
    the copy calls among those waits.
  * device_prop reads deviceProperties, or the 2021 plugin files' computeProperties (major).
  * Premises: TF32 advice needs NVIDIA at computeMajor >= 8; bfloat16 advice computeMajor >= 8
    (docs/analysis.md allows bf16 autocast on AMD; claims.md says "not AMD" for both). Advice is
    a sentence of the fix naming TF32/bfloat16 without "need"/"no"/"not".
  * Coverage: digits glued to letters are identifiers (fp32, H100) except "Nx" and "N-bit",
    which the constants table lists; a claim's text matches on number boundaries, never at a
    list ordinal or inside a back-quoted name.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import json
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import claims_model as M  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import flops_formulas as F  # noqa: E402
import busy_measures as B  # noqa: E402
from claims_model import US, MS, merge, total, clip, intersect, subtract  # noqa: E402

SEVERITY_RANK = {"high": 3, "medium": 2, "low": 1, "note": 0}
CONTEXT_KINDS = {"graph_capture", "compilation", "graph_breaks", "gpu_not_used", "gpu_not_recorded", "warmup"}
FINDING_CAUSES = {
    "data_loading": ["data_loading"],
    "cpu_dispatch": ["launch_overhead", "cpu_compute", "optimizer_cpu", "host_untraced"],
    "logging_checkpoint": ["io_logging_checkpoint"],
    "allocator_churn": ["allocator"],
}
# tests/data/traces/ (make_traces.py) audited beside the shared corpus: gemm_padding and
# unfused_attention with numbers known by hand; a stream wait and graph replays (stream_wait_graph).
SYNTHETIC = ["unaligned_bf16_gemm.json", "mha_attention_weights.json", "stream_wait_graph.json"]
SILENCING_KINDS = {"graph_capture", "warmup", "compilation", "gpu_not_used", "gpu_not_recorded"}
CONSTANTS = {"2x", "2-8x", "16-bit", "8-bit", "~1 us", "10-100", "50%", "8.0", "stride 1", "PyTorch 2.0", "3",
             "8", "16", "64"}


Problem = B.Problem  # one exception for the measures here and in busy_measures.py


# ------------------------------------------------------------------ numbers shown in a text

NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
DUR_RE = re.compile(r"(" + NUM + r")\s*(ns|us|µs|ms|s)\b")
SHARE_RE = re.compile(r"(" + NUM + r")\s*%")
BW_RE = re.compile(r"(" + NUM + r")\s*(GB/s|MB/s)")
BYTES_RE = re.compile(r"(" + NUM + r")\s*(B|KB|MB|GB|TB|KiB|MiB|GiB)\b(?!/)")
FLOP_RE = re.compile(r"(" + NUM + r")\s*(MFLOP|GFLOP|TFLOP|PFLOP)\b")
CAP_RE = re.compile(r"\b(\d+)\.x\b")
TIMES_RE = re.compile(r"×\s*(" + NUM + r")")
PLAIN_RE = re.compile(r"(?<![\w.#])(" + NUM + r")(?![\w.])")
UNIT_NS = {"ns": 1, "us": US, "µs": US, "ms": MS, "s": 1000 * MS}
UNIT_B = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
UNIT_FLOP = {"MFLOP": 1e6, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15}


def _num(s):
    return float(s.replace(",", ""))


def _decimals(s):
    return len(s.split(".")[1]) if "." in s else 0


def strip_names(text):
    return re.sub(r"`[^`]*`", " ", text)


def shown_number(text):
    """(kind, value in base units, unit, decimals) of the number a claim's text shows, or None."""
    t = strip_names(text)

    def out(kind, s, unit):
        return kind, _num(s) * unit, unit, _decimals(s)
    m = BW_RE.search(t)
    if m:
        return out("bw", m.group(1), 1.0 if m.group(2) == "GB/s" else 1e-3)
    m = FLOP_RE.search(t)
    if m:
        return out("flop", m.group(1), UNIT_FLOP[m.group(2)])
    m = DUR_RE.search(t)
    if m:
        return out("dur", m.group(1), UNIT_NS[m.group(2)])
    m = SHARE_RE.search(t)
    if m:
        return out("share", m.group(1), 0.01)
    m = BYTES_RE.search(t)
    if m:
        return out("bytes", m.group(1), UNIT_B[m.group(2)])
    m = CAP_RE.search(t)
    if m:
        return "cap", float(m.group(1)), 1.0, 0
    m = TIMES_RE.search(text)
    if m:
        return out("count", m.group(1), 1.0)
    m = re.search(r"#(\d+)", t) or re.search(r"\bstream (\d+)", t) or PLAIN_RE.search(t)
    if m:
        s = m.group(1)
        return out("count" if "." not in s else "plain", s, 1.0)
    return None


def names_in(text):
    return re.findall(r"`([^`]*)`", text)


def agree(kind, shown, unit, decimals, rec):
    """docs/claims.md "Agreement": rounds to the shown figure, or within the tolerance."""
    if rec is None:
        return False
    if kind == "count":
        return abs(rec - shown) < 1e-9
    if kind == "cap":
        return int(rec) == int(shown)
    if _round_half(rec / unit, decimals) == round(shown / unit, decimals):
        return True
    last = unit * 10 ** -decimals
    if kind == "dur":
        return abs(rec - shown) <= max(0.02 * abs(rec), 5 * US) + last
    if kind == "share":
        return abs(rec - shown) <= 0.01 + last
    if kind in ("bytes", "flop", "bw"):
        return abs(rec - shown) <= 0.02 * abs(rec)
    return abs(rec - shown) <= 0.02 * abs(rec) + last


def _round_half(x, digits):
    q = 10 ** digits
    return math.floor(x * q + 0.5 + 1e-9) / q


# ------------------------------------------------------------------ coverage

ORDINAL_RE = re.compile(r"(?:^|(?<=; )|(?<=\. ))\d+\. ")
COVER_NUM_RE = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?:-\d+(?:,\d{3})*(?:\.\d+)?)?")


def coverage(finding):
    """Numbers and back-quoted names of the texts not inside a claim's text."""
    texts = [finding.get("title") or "", finding.get("explanation") or "", finding.get("fix") or ""]
    full = "\n".join(texts)
    quoted = [(m.start(), m.end()) for m in re.finditer(r"`[^`]*`", full)]
    masked = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), full)
    # list ordinals at the start of the fix or after "; " / ". "
    fix_at = len(texts[0]) + 1 + len(texts[1]) + 1
    ords = {fix_at + m.start() for m in ORDINAL_RE.finditer(masked[fix_at:])}
    spans = []
    claims = sorted((c.get("text") or "" for c in finding.get("claims") or []), key=len, reverse=True)
    for ct in claims:
        if not ct:
            continue
        occ = []
        i = full.find(ct)
        while i >= 0:
            occ.append((i, i + len(ct)))
            i = full.find(ct, i + 1)
        occ = [o for o in occ if _token_bounded(full, o, ct) and o[0] not in ords
               and not (ct[:1] != "`" and any(q[0] < o[0] < q[1] for q in quoted))]
        free = [o for o in occ if o not in spans and not any(s[0] <= o[0] and o[1] <= s[1] for s in spans)]
        pick = free[0] if free else next((o for o in occ if o not in spans), None)
        if pick is not None:
            spans.append(pick)
    missing = []
    # back-quoted names
    for m in re.finditer(r"`[^`]*`", full):
        if not any(s[0] <= m.start() and m.end() <= s[1] for s in spans):
            missing.append(m.group(0))
    for m in COVER_NUM_RE.finditer(masked):
        a, b = m.start(), m.end()
        if a in ords:
            continue
        nxt = masked[b:b + 1]
        if nxt.isalpha() or nxt == "_":
            # digits glued to letters: an identifier (H100 ends before, "2x" is a claim)
            if not (nxt == "x" and not masked[b + 1:b + 2].isalpha()):
                if not masked[b:b + 4] == "-bit":
                    continue
        if masked[a - 1:a].isalpha() and a > 0:
            continue
        if not any(s[0] <= a and b <= s[1] for s in spans):
            missing.append(f"{m.group(0)} (in ...{full[max(0, a - 30):b + 20]}...)".replace("\n", " "))
    return missing


def _token_bounded(full, o, ct):
    a, b = o
    if ct[:1].isdigit() and a > 0 and (full[a - 1].isdigit() or full[a - 1] in ".,"):
        return False
    if ct[-1:].isdigit() and b < len(full) and (full[b].isdigit() or
                                                (full[b] in ".," and full[b + 1:b + 2].isdigit())):
        return False
    return True


# ------------------------------------------------------------------ one trace's context

class Ctx:
    def __init__(self, tr, a):
        self.tr = tr
        self.a = a
        self.problems = []          # premise / window problems
        self.whole = M.default_window(tr)
        w = a.get("window") or {}
        self.jwin = M.window_from_json(tr, w, self.whole) if w else self.whole
        wu = a.get("warmup") or None
        self.jwhole = M.window_from_json(tr, wu["whole"], self.whole) if wu and wu.get("whole") else self.jwin
        self._att = {}
        self.step_thread = None
        steps = tr.steps_raw()
        if steps:
            c = Counter(s.thread for s in steps)
            self.step_thread = c.most_common(1)[0][0]

    # ---------------------------------------------------------- attributions
    def att(self, dev, over=None):
        win = self.jwhole if over == "whole" else self.jwin
        key = (dev, win.start, win.end)
        at = self._att.get(key)
        if at is None:
            if dev == -1:
                th = self.step_thread
                if th is None:
                    th = max(self.tr.threads, key=lambda k: len(self.tr.threads[k].slices), default=None)
                at = M.Attribution(self.tr, -1, win, host_only=True, thread=th)
            else:
                at = M.Attribution(self.tr, dev, win)
            self._att[key] = at
        return at

    def busiest(self, win):
        best, bt = None, -1
        for d in self.tr.devices:
            b = total(self.tr.busy(d, win.start, win.end))
            if b > bt:
                best, bt = d, b
        return best

    # ---------------------------------------------------------- sync waits
    def sync_waits(self):
        if hasattr(self, "_waits"):
            return self._waits
        tr, win = self.tr, self.jwin
        steps = [(s, e) for _, s, e in win.steps]

        def is_wait(s):
            if s.fam == "sync":
                return True
            if s.kind != "runtime":
                return False
            if s.fam == "copy_sync":
                return copy_dir(s) != "HtoD"
            if s.fam == "copy":
                return any(w.kind == "memcpy" and "DtoH" in w.name and "Pageable" in w.name for w in (s.work or ()))
            return False
        out = []
        for s in tr.cpu:
            if not (win.start <= s.ts < win.end) or not is_wait(s):
                continue
            if steps and not any(a <= s.ts <= b for a, b in steps):
                continue
            p = s.parent
            outer = True
            while p is not None:
                if is_wait(p):
                    outer = False
                    break
                p = p.parent
            if outer:
                out.append(s)
        out.sort(key=lambda s: s.ts)
        self._waits = out
        return out


def copy_dir(s):
    for w in (s.work or ()):
        if w.kind == "memcpy":
            for d in ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP"):
                if d in w.name or w.args.get("kind") == d:
                    return d
    for d in ("HtoD", "DtoH", "DtoD"):
        if d in s.name:
            return d
    return None


# ------------------------------------------------------------------ measures

def m_idle_ns(ctx, p):
    dev = p["device"]
    over = p.get("over")
    at = ctx.att(dev, over)
    lo, hi = p.get("from_ns"), p.get("to_ns")
    if p.get("causes") is None:
        return at.idle_ns(None, lo, hi)
    return at.idle_ns(p["causes"], lo, hi)


def finding_idle(ctx, kind, dev):
    at = ctx.att(dev)
    if kind in FINDING_CAUSES:
        return at.idle_ns(FINDING_CAUSES[kind])
    if kind == "host_sync":
        return m_sync_idle_ns(ctx, {"device": dev})
    if kind == "blocking_h2d_copy":
        return at.idle_ns(["blocking_copy"]) - sync_copy_idle(ctx, dev)
    return 0


def sync_copy_idle(ctx, dev):
    at = ctx.att(dev)
    d2h = merge([[s.ts, s.end] for s in ctx.sync_waits() if s.kind == "runtime" and s.fam in ("copy", "copy_sync")])
    inside = total(intersect(at.ranges(["blocking_copy"]), d2h))
    return min(inside, at.idle_ns(["blocking_copy"]))


def m_sync_idle_ns(ctx, p):
    return ctx.att(p["device"]).idle_ns(["host_sync"]) + sync_copy_idle(ctx, p["device"])


def m_findings_idle_ns(ctx, p, finding):
    dev = p["device"]
    t = 0
    for f in ctx.a.get("findings") or []:
        if f is finding or f.get("device") != dev:
            continue
        t += finding_idle(ctx, f.get("kind"), dev)
    return t


def m_calls(ctx, p):
    names = set(p.get("names") or [])
    lo = p.get("from_ns", ctx.jwin.start)
    hi = p.get("to_ns", ctx.jwin.end)
    sel = [s for s in ctx.tr.cpu if s.name in names and lo <= s.ts < hi]
    if p.get("first_use"):
        sel = [s for s in sel if s.slow_first]
    if p.get("stat") == "ns":
        return sum(s.dur for s in sel)
    return len(sel)


def m_sync_calls(ctx, p):
    w = ctx.sync_waits()
    if p.get("name"):
        w = [s for s in w if s.name == p["name"]]
    return sum(s.dur for s in w) if p.get("stat") == "ns" else len(w)


def m_sync_after_idle(ctx, p):
    at = ctx.att(p["device"])
    t = 0
    for s in ctx.sync_waits():
        for gs, ge in at.gaps:
            if gs <= s.end < ge:
                t += min(s.dur, ge - s.end)
                break
    return t


def slice_of(ctx, ref):
    s = ctx.tr.find_slice(ref)
    if s is None:
        raise Problem(f"no event {ref.get('name')!r} starting at {ref.get('start_ns')}")
    return s


def m_gap(ctx, p):
    def edge(r):
        s = slice_of(ctx, r.get("s") or r.get("slice") or r)
        return s.ts if r.get("edge") == "start" else s.end
    return edge(p["to"]) - edge(p["from"])


def m_stream_of(ctx, p):
    s = slice_of(ctx, p["slice"])
    st = s.args.get("stream")
    if st is None:
        m = re.search(r"(\d+)", str(s.tid))
        st = int(m.group(1)) if m else None
    return int(st) if st is not None else None


def m_graph_of(ctx, p):
    """The graph replay holding a GPU slice: stat "id" its kernels' Kineto "graph id", stat
    "launched" 1 when the call that launched it (by correlation) is a graph launch."""
    s = slice_of(ctx, p["slice"])
    if p.get("stat") == "id":
        gid = s.args.get("graph id")
        return int(gid) if isinstance(gid, (int, float)) and gid >= 0 else None
    lt = ctx.tr.launch_of.get(s.corr) if s.corr is not None else None
    return 1 if lt is not None and "GraphLaunch" in lt.name else 0


def m_idle_gap(ctx, p):
    at = ctx.att(p["device"])
    for gs, ge in at.gaps:
        if abs(ge - p["end_ns"]) <= US:
            return ge - gs
    raise Problem(f"no idle gap of device {p['device']} ends at {p['end_ns']}")


def launching_op(tr, g):
    lt = tr.launch_of.get(g.corr) if g.corr is not None else None
    p = lt.parent if lt is not None else None
    while p is not None and p.kind != "op":
        p = p.parent
    return p


TYPE_PRECISION = {"float": "fp32", "double": "fp64", "c10::Half": "fp16", "c10::BFloat16": "bf16",
                  "Half": "fp16", "BFloat16": "bf16"}


def op_types(op):
    """The element types among an operator's `Input type` (None: the operator carries none)."""
    if op is None:
        return None
    t = op.args.get("Input type")
    if not isinstance(t, list):
        return None
    t = [x for x in t if isinstance(x, str) and x]
    if not t:
        return None
    d = [x for x in t if x in TYPE_PRECISION or x.startswith("c10::")]
    return d or ["?"]


def kernel_classes(ctx, dev):
    """Per kernel of the device in the window: (clipped ns, classes set)."""
    key = ("kc", dev, ctx.jwin.start, ctx.jwin.end)
    if key in ctx._att:
        return ctx._att[key]
    tr, win = ctx.tr, ctx.jwin
    out = []
    for g in tr.gpu:
        if g.dev != dev or g.kind != "kernel":
            continue
        d = min(g.end, win.end) - max(g.ts, win.start)
        if d <= 0 and not (win.start <= g.ts < win.end):
            continue
        d = max(d, 0)
        c = tr.kernels.classify(g.name)
        cls = set()
        if c["family"] == "comm":
            cls.add("comm")
        if M.KernelCatalogue.is_matmul(c):
            cls.add("matmul")
            op = launching_op(tr, g)
            types = op_types(op)
            prec = c["precision"]
            if prec is None and types:
                prec = TYPE_PRECISION.get(types[0])
            tc = M.KernelCatalogue.on_tensor_cores(c, prec)
            if tc:
                cls.add("tensor_core_matmul")
            else:
                if types is not None:
                    if types[0] == "float" and (c["library"] or op.name.startswith("aten::")):
                        cls.add("fp32_matmul")
                        cls.add("fp32_matmul_typed")
                elif c["library"] and c["precision"] == "fp32":
                    cls.add("fp32_matmul")
        out.append((g, d, cls))
    ctx._att[key] = out
    return out


def m_kernel_ns(ctx, p):
    dev, cl = p["device"], p["class"]
    ks = kernel_classes(ctx, dev)
    if cl == "comm_exposed":
        win = ctx.jwin
        comm = merge(clip([[g.ts, g.end] for g, _, c in ks if "comm" in c], win.start, win.end))
        comp = merge(clip([[g.ts, g.end] for g, _, c in ks if "comm" not in c], win.start, win.end))
        return total(subtract(comm, comp))
    # the time the class's kernels ran: their union (overlapping collectives on two streams
    # count once, as the device metrics' communication time does)
    win = ctx.jwin
    return total(merge(clip([[g.ts, g.end] for g, _, c in ks if cl in c], win.start, win.end)))


def m_busy_ns(ctx, p):
    return total(ctx.tr.busy(p["device"], ctx.jwin.start, ctx.jwin.end))


def step_ranges(ctx):
    return [(s, e) for _, s, e in ctx.jwin.steps] or [(ctx.jwin.start, ctx.jwin.end)]


FUSABLE = {"elementwise", "reduction", "norm"}


def outermost_op(tr, g):
    """The outermost operator (not a ProfilerStep) around a GPU slice's launch; None."""
    lt = tr.launch_of.get(g.corr) if g.corr is not None else None
    out = None
    q = lt.parent if lt is not None else None
    while q is not None:
        if q.kind == "op" and not q.name.startswith("ProfilerStep#"):
            out = q
        q = q.parent
    return out


def fusion_chains(ctx, dev):
    """Runs of >= 3 elementwise/reduction/norm kernels (not triton_*) in a row on a stream,
    starting inside the window: each a list of GPU slices."""
    key = ("fusion", dev, ctx.jwin.start, ctx.jwin.end)
    if key in ctx._att:
        return ctx._att[key]
    win = ctx.jwin
    runs, chains, opt = {}, [], {}

    def close(run):
        if len(run) >= 3:
            chains.append(list(run))
        run.clear()
    for g in ctx.tr.gpu:
        if g.dev != dev:
            continue
        run = runs.setdefault((g.pid, g.tid), [])
        ok = (g.kind == "kernel" and win.start <= g.ts < win.end and not g.name.startswith("triton_")
              and ctx.tr.kernels.classify(g.name)["family"] in FUSABLE)
        if not ok:
            close(run)
            continue
        opt[g.idx] = in_optimizer(ctx.tr, g)
        if run and opt[run[0].idx] != opt[g.idx]:
            close(run)   # the model's and the optimizer's kernels are chained apart
        run.append(g)
    for run in runs.values():
        close(run)
    ctx._att[key] = ([ch for ch in chains if not opt[ch[0].idx]], [ch for ch in chains if opt[ch[0].idx]])
    return ctx._att[key]


def in_optimizer(tr, g):
    """A GPU slice launched inside the optimizer: an ancestor of its launch call named as
    docs/analysis.md's optimizer rule says (Optimizer.step#/zero_grad#, optimizer.py, an
    optim ": step")."""
    lt = tr.launch_of.get(g.corr) if g.corr is not None else None
    q = lt.parent if lt is not None else None
    while q is not None:
        n = q.name
        if n.startswith(("Optimizer.step#", "Optimizer.zero_grad#")) or "optimizer.py" in n or \
                (": step" in n and "optim" in n):
            return True
        q = q.parent
    return False


def m_fusion_chains(ctx, p):
    chains, optimizer = fusion_chains(ctx, p["device"])
    st = p.get("stat")
    if st == "optimizer_chains":
        return len(optimizer)
    if st == "optimizer_ns":
        return sum(g.end - g.ts for ch in optimizer for g in ch)

    def signature(ch):
        names = []
        for g in ch:
            op = outermost_op(ctx.tr, g)
            names.append(op.name if op is not None else "?")
        return " > ".join(names)
    if st == "chains":
        return len(chains)
    if st == "kernels":
        return sum(len(ch) for ch in chains)
    if st == "ns":
        return sum(g.end - g.ts for ch in chains for g in ch)
    if st in ("signature_count", "signature_ns"):
        mine = [ch for ch in chains if signature(ch) == p["signature"]]
        return len(mine) if st == "signature_count" else sum(g.end - g.ts for ch in mine for g in ch)
    if st == "operator":
        ops = [outermost_op(ctx.tr, g) for ch in chains for g in ch]
        return sum(1 for op in ops if op is not None and op.name == p["name"])
    raise Problem(f"fusion_chains: unknown stat {st!r}")


def m_kernel_median_ns(ctx, p):
    rs = step_ranges(ctx)
    durs = sorted(g.dur for g in ctx.tr.gpu if g.dev == p["device"] and g.kind == "kernel"
                  and any(a <= g.ts < b for a, b in rs))
    if not durs:
        return None
    return [statistics.median(durs), statistics.median_low(durs), statistics.median_high(durs)]


def m_matmul_blocks(ctx, p):
    num = den = 0.0
    for g, d, c in kernel_classes(ctx, p["device"]):
        if "matmul" in c:
            b = M.num(g.args.get("blocks per SM"))
            if b is not None:
                num += b * g.dur
                den += g.dur
    return num / den if den else None


def m_copies(ctx, p):
    dev = p["device"]
    win = ctx.jwin
    sel = []
    for g in ctx.tr.gpu:
        if g.dev != dev or g.kind != "memcpy" or not (win.start <= g.ts < win.end):
            continue
        if not ("HtoD" in g.name or g.args.get("kind") == "HtoD"):
            continue
        lt = ctx.tr.launch_of.get(g.corr) if g.corr is not None else None
        b = M.num(g.args.get("bytes")) or 0
        if "Pageable" in g.name or (lt is not None and lt.fam == "copy_sync" and b > 64 * 1024):
            sel.append((g, b))
    st = p.get("stat")
    if st == "count":
        return len(sel)
    if st == "bytes":
        return sum(b for _, b in sel)
    if st == "ns":
        return sum(g.dur for g, _ in sel)
    if st == "gb_per_s":
        ns = sum(g.dur for g, _ in sel)
        return sum(b for _, b in sel) / ns if ns else None
    raise Problem(f"copies: unknown stat {st!r}")


def m_launch_bound(ctx, p):
    """cpu_dispatch's launch-bound step test (docs/analysis.md): over the steps (tiles; the window
    without steps) with >= 50 kernels or >= 1 ms ("regions"), those where busy < 60 % of the time
    not spent loading data or logging, most kernels ran shorter than their launch call, and the
    kernels' mean queue depth (queued time from the launch's end to the start, over that same
    time) < 0.5."""
    dev = p["device"]
    tr, win = ctx.tr, ctx.jwin
    at = ctx.att(dev)
    units = [(s, e) for _, s, e in win.tiles()] or [(win.start, win.end)]
    work = [g for g in tr.gpu if g.dev == dev and g.kind == "kernel"]
    regions = lb = 0
    kern = short = 0
    queued = length = 0
    for s, e in units:
        ks = [g for g in work if s <= g.ts < e]
        n = len(ks)
        if not (n >= 50 or e - s >= MS):
            continue
        regions += 1
        busy = total(clip(at.busy, s, e))
        avail = e - s - at.idle_ns(["data_loading", "io_logging_checkpoint"], s, e)
        if not busy < 0.6 * avail:
            continue
        sh = q = 0
        for g in ks:
            lt = tr.launch_of.get(g.corr) if g.corr is not None else None
            if lt is None:
                continue
            if g.dur < lt.dur:
                sh += 1
            if g.ts > lt.end:
                q += g.ts - lt.end
        if not (n and sh * 2 >= n) or not (avail > 0 and q / avail < 0.5):
            continue
        lb += 1
        kern += n
        short += sh
        queued += q
        length += avail
    st = p.get("stat")
    if st == "steps":
        return lb
    if st == "regions":
        return regions
    if st == "short_share":
        return short / kern if kern else None
    if st == "mean_queue":
        return queued / length if length else None
    raise Problem(f"launch_bound: unknown stat {st!r}")


def op_flops(op):
    """Model FLOPs of one operator call by tests/tools/flops_formulas.py (FlopCounterMode's
    formulas written out): None when its shapes do not fit or are not recorded."""
    dims = op.args.get("Input Dims") or op.args.get("Input dims")
    if not isinstance(dims, list) or not dims:
        return None
    c = F.operator_cost(op.name, dims, op.args.get("Input type"), op.args.get("Concrete Inputs"))
    return None if c is None or c.flops is None else c.flops


def m_matmul_flops(ctx, p):
    tr, win = ctx.tr, ctx.jwin
    steps = [(s, e) for _, s, e in win.steps if win.start <= s and e <= win.end]
    lo, hi = steps[0] if steps else (win.start, win.end)
    ops = []
    for s in tr.cpu:
        rule = F.TABLE.get(s.name)
        if s.kind == "op" and rule and rule[0] in F.MODEL_FORMULAS and lo <= s.ts < hi:
            q = s.parent
            nested = False
            while q is not None:
                if q.name in F.TABLE:
                    nested = True
                    break
                q = q.parent
            if not nested:
                ops.append(s)
    st = p.get("stat")
    fl = [op_flops(o) for o in ops]
    if st == "ops":
        return len(ops)
    if st == "with_shapes":
        return sum(1 for f in fl if f is not None)
    if st == "read":
        return sum(1 for f in fl if f is not None)
    if st == "flops":
        return sum(f for f in fl if f is not None)
    raise Problem(f"matmul_flops: unknown stat {st!r}")


def m_capture(ctx, p):
    tr = ctx.tr
    launches = [rt for rt in tr.runtime if rt.fam in ("launch", "copy")]
    st = p.get("stat")
    if st == "launches":
        return len(launches)
    if st == "ran":
        return sum(1 for rt in launches if rt.work)
    if st == "captured":
        spans = defaultdict(list)
        opened = {}
        for rt in sorted(tr.runtime, key=lambda r: r.ts):
            if "StreamBeginCapture" in rt.name:
                opened[rt.thread] = rt.ts
            elif "StreamEndCapture" in rt.name and rt.thread in opened:
                spans[rt.thread].append((opened.pop(rt.thread), rt.end))
        for th, t in opened.items():
            spans[th].append((t, tr.span[1]))
        return sum(1 for rt in launches if any(a <= rt.ts <= b for a, b in spans.get(rt.thread, ())))
    raise Problem(f"capture: unknown stat {st!r}")


def m_steps(ctx, p):
    win = ctx.jwin
    st = p.get("stat")
    tiles = win.tiles()
    if st == "count":
        return len(tiles)
    at = ctx.att(p["device"]) if "device" in p else None
    if st == "with_idle":
        return sum(1 for _, s, e in tiles if at.idle_ns([p["cause"]], s, e) > 0)
    if st == "long_with_idle":
        med = statistics.median([e - s for _, s, e in tiles]) if tiles else 0
        return sum(1 for _, s, e in tiles if e - s > p.get("factor", 1.5) * med and at.idle_ns([p["cause"]], s, e) > 0)
    raise Problem(f"steps: unknown stat {st!r}")


def m_graph_items(ctx, p):
    win = ctx.jwin
    items = [g for g in ctx.tr.gpu if g.dev == p["device"] and win.start <= g.ts < win.end]
    if p.get("stat") == "items":
        return len(items)
    n = 0
    for g in items:
        lt = ctx.tr.launch_of.get(g.corr) if g.corr is not None else None
        if lt is not None and "GraphLaunch" in lt.name:
            n += 1
    return n


def m_memory_peak(ctx, p):
    peak = None
    single = len(ctx.tr.devices) == 1
    for _, a in ctx.tr.memory:
        if a.get("Device Type") in (1, 6) and (a.get("Device Id") == p["device"] or single):
            v = M.num(a.get("Total Reserved"))
            if v is not None:
                peak = v if peak is None else max(peak, v)
    return peak


def outside_warmup(ctx):
    wu = ctx.a.get("warmup")
    lo = ctx.jwin.start
    if wu and not wu.get("whole_window"):
        lo = max(lo, wu.get("end_ns", lo))
    return lo, ctx.jwin.end


def m_compile_ns(ctx, p):
    lo, hi = outside_warmup(ctx)
    iv = []
    for s in ctx.tr.cpu:
        if s.fam == "compile":
            q = s.parent
            while q is not None and q.fam != "compile":
                q = q.parent
            if q is None:
                iv.append([s.ts, s.end])
    return total(clip(merge(iv), lo, hi))


def m_recompiled(ctx, p):
    lo, hi = outside_warmup(ctx)
    best = None
    for s in ctx.tr.cpu:
        m = M.REGION_RE.match(s.name)
        if m and lo <= s.ts < hi and str(m.group(1)) == str(p.get("frame")):
            best = max(best or 0, int(m.group(2)))
    return best


def m_graph_frames(ctx, p):
    regions = []
    for s in ctx.tr.cpu:
        m = M.REGION_RE.match(s.name)
        if m and ctx.jwin.start <= s.ts < ctx.jwin.end:
            regions.append((s.ts, int(m.group(1))))
    regions.sort()
    tiles = ctx.jwin.tiles()
    units = []
    if tiles:
        for _, s, e in tiles:
            units.append({f for t, f in regions if s <= t < e})
    elif regions:
        low = min(f for _, f in regions)
        cur = None
        for t, f in regions:
            if f == low:
                cur = {f}
                units.append(cur)
            elif cur is not None:
                cur.add(f)
    st = p.get("stat")
    if st == "max":
        return max((len(u) for u in units), default=0)
    if st == "with_breaks":
        return sum(1 for u in units if len(u) >= 2)
    if st == "units":
        return len(units)
    raise Problem(f"graph_frames: unknown stat {st!r}")


def m_warmup_steps(ctx, p):
    return len(p.get("numbers") or [])


def measure(ctx, c, finding):
    """The recomputed value of a claim's measure (a number, or a list of acceptable numbers)."""
    m, p = c.get("measure"), c.get("params") or {}
    tr = ctx.tr
    if m == "ratio":
        num = measure(ctx, {"measure": p["num"]["measure"], "params": p["num"].get("params") or {}}, finding)
        den = measure(ctx, {"measure": p["den"]["measure"], "params": p["den"].get("params") or {}}, finding)
        if isinstance(num, list):
            num = num[0]
        if isinstance(den, list):
            den = den[0]
        if num is None or den is None or den == 0:
            return None
        r = num / den
        return math.ceil(r - 1e-9) if p.get("round") == "ceil" else r
    if m == "idle_ns":
        return m_idle_ns(ctx, p)
    if m == "window_ns":
        return ctx.own_window.length
    if m == "whole_window_ns":
        return ctx.whole.length
    if m == "span_ns":
        return p["to_ns"] - p["from_ns"]
    if m == "idle_gap":
        return m_idle_gap(ctx, p)
    if m == "findings_idle_ns":
        return m_findings_idle_ns(ctx, p, finding)
    if m == "busy_ns":
        return m_busy_ns(ctx, p)
    if m == "waited_ns":
        return ctx.att(p["device"]).waited_ns(p["causes"], p["name"])
    if m == "calls":
        return m_calls(ctx, p)
    if m == "launch_calls":
        return sum(1 for rt in tr.runtime if rt.fam in ("launch", "copy") and (not p.get("name") or rt.name == p["name"]))
    if m == "runtime_calls":
        return len(tr.runtime)
    if m == "device_count":
        return len(tr.device_props)
    if m == "sync_calls":
        return m_sync_calls(ctx, p)
    if m == "sync_idle_ns":
        return m_sync_idle_ns(ctx, p)
    if m == "graph_items":
        return m_graph_items(ctx, p)
    if m == "graph_of":
        return m_graph_of(ctx, p)
    if m == "warmup_steps":
        return m_warmup_steps(ctx, p)
    if m == "slice":
        return slice_of(ctx, p["slice"]).dur
    if m == "ancestor":
        s = slice_of(ctx, p["slice"])
        return 1 if any(q.name == p["name"] for q in s.chain() if q is not s) else 0
    if m == "gap":
        return m_gap(ctx, p)
    if m == "stream_of":
        return m_stream_of(ctx, p)
    if m == "kernel_ns":
        return m_kernel_ns(ctx, p)
    if m == "kernel_median_ns":
        return m_kernel_median_ns(ctx, p)
    if m == "fusion_chains":
        return m_fusion_chains(ctx, p)
    if m == "unaligned_gemms":
        return B.m_unaligned_gemms(ctx, p)
    if m == "attention_blocks":
        return B.m_attention_blocks(ctx, p)
    if m == "matmul_blocks_per_sm":
        return m_matmul_blocks(ctx, p)
    if m == "copies":
        return m_copies(ctx, p)
    if m == "steps":
        return m_steps(ctx, p)
    if m == "device_prop":
        return M.num(tr.prop(p["device"], p["field"]))
    if m == "memory_peak":
        return m_memory_peak(ctx, p)
    if m == "matmul_flops":
        return m_matmul_flops(ctx, p)
    if m == "launch_bound":
        return m_launch_bound(ctx, p)
    if m == "capture":
        return m_capture(ctx, p)
    if m == "compile_ns":
        return m_compile_ns(ctx, p)
    if m == "recompiled":
        return m_recompiled(ctx, p)
    if m == "graph_frames":
        return m_graph_frames(ctx, p)
    if m == "sync_after_idle":
        return m_sync_after_idle(ctx, p)
    if m == "window":
        return None
    raise Problem(f"measure {m!r} is not one docs/claims.md defines")


def claim_names(c):
    p = c.get("params") or {}
    out = []
    if isinstance(p.get("names"), list):
        out += p["names"]
    if p.get("name"):
        out.append(p["name"])
    for k in ("slice",):
        if isinstance(p.get(k), dict) and p[k].get("name"):
            out.append(p[k]["name"])
    if isinstance(p.get("num"), dict):
        out += claim_names(p["num"])
    return out


def name_ok(shown, names):
    for n in names:
        if shown == n:
            return True
        if len(n) > 80 and shown.endswith("...") and n.startswith(shown[:-3]):
            return True
    return False


def check_claim(ctx, c, finding):
    """None when the claim agrees, else (shown, recomputed, note)."""
    text = c.get("text") or ""
    m = c.get("measure")
    p = c.get("params") or {}
    names = names_in(text)
    if names:
        allowed = claim_names(c)
        if m == "ancestor":
            allowed = [p.get("name")] + allowed
        for n in names:
            if not name_ok(n, allowed):
                cut = [a for a in allowed if isinstance(a, str) and len(a) > len(n) and a.startswith(n)]
                if cut:
                    return text, None, (f"name shown cut to {len(n)} characters without '...' (docs/claims.md: "
                                        f"a name longer than 80 characters is cut to 77 and '...'); the name is "
                                        f"{len(cut[0])} characters")
                return text, None, f"name `{n}` is not the measure's ({', '.join(map(str, allowed))})"
    if m == "constant":
        t = text.strip()
        return None if t in CONSTANTS else (text, None, "not a constant docs/claims.md allows")
    if m == "window":
        d = ctx.own_window_description
        return None if d and d in text else (text, d, "the window's description")
    rec = measure(ctx, c, finding)
    sn = shown_number(text)
    if text.startswith("num_workers="):
        ok = bool(rec and rec >= 1) and all("SingleProcess" in n for n in p.get("names") or []) == (sn[1] == 0)
        return None if ok else (text, rec, "DataLoader ranges")
    if m == "warmup_steps":
        mine = ctx.my_warmup.steps if ctx.my_warmup else []
        want = ["ProfilerStep#" + str(x) if not str(x).startswith("ProfilerStep") else str(x) for x in p.get("numbers") or []]
        shown = ["ProfilerStep#" + x for x in re.findall(r"#(\d+)", text)]
        if want != mine or not set(shown) <= set(mine):
            return text, mine, "warm-up steps"
        return None
    if sn is None:
        # a name only: the measure must hold (a slice exists, is an ancestor, was waited in)
        if m == "ancestor":
            return None if rec == 1 else (text, rec, "not an ancestor")
        if m in ("slice",):
            return None
        if m == "waited_ns":
            return None if rec and rec > 0 else (text, rec, "no idle charged while it ran")
        if m == "calls" or m == "sync_calls":
            return None if rec and rec > 0 else (text, rec, "no such calls")
        return None if rec else (text, rec, "nothing recomputed")
    kind, shown, unit, decimals = sn
    if m == "device_prop" and kind != "cap":
        kind = "plain"
    recs = rec if isinstance(rec, list) else [rec]
    if m in ("launch_bound",) and kind in ("count", "plain") and p.get("stat") == "mean_queue":
        kind = "plain"
    if m == "matmul_blocks_per_sm" or (m == "launch_bound" and p.get("stat") == "mean_queue"):
        kind = "plain"
    if kind == "count" and m in ("ratio",) and p.get("round") != "ceil":
        kind = "plain"
    for r in recs:
        if agree(kind, shown, unit, decimals, r):
            return None
    return text, recs[0], ""


# ------------------------------------------------------------------ premises

TRAINING_RE = re.compile(r"training thread|training loop|GradScaler|\bDDP\b|\.backward\(\)")
STEP_WORDS_RE = re.compile(r"of step time|per step|\b\d+ of \d+ steps\b")


def fmt_ns(v):
    if v is None:
        return "-"
    if isinstance(v, list):
        return "/".join(fmt_ns(x) for x in v)
    if abs(v) >= 1000 * MS:
        return f"{v / 1e9:.3f} s"
    if abs(v) >= MS:
        return f"{v / 1e6:.3f} ms"
    if abs(v) >= US:
        return f"{v / 1e3:.1f} us"
    return f"{v:.0f} ns"


def fmt_val(c, v):
    m = c.get("measure")
    if isinstance(v, float) and v < 10 and m == "ratio":
        return f"{100 * v:.2f}%"
    if m in ("idle_ns", "window_ns", "whole_window_ns", "span_ns", "idle_gap", "findings_idle_ns", "busy_ns",
             "waited_ns", "sync_idle_ns", "slice", "gap", "kernel_ns", "kernel_median_ns", "compile_ns",
             "sync_after_idle") or (m in ("calls", "sync_calls") and (c.get("params") or {}).get("stat") == "ns") \
            or (m == "copies" and (c.get("params") or {}).get("stat") == "ns"):
        return fmt_ns(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def check_window(ctx):
    a, tr = ctx.a, ctx.tr
    probs = []
    wu = a.get("warmup")
    jwhole = (wu or {}).get("whole") or a.get("window") or {}
    w = ctx.whole
    if jwhole and (abs(w.start - jwhole.get("start_ns", 0)) > US or abs(w.end - jwhole.get("end_ns", 0)) > US):
        probs.append(f"window: recomputed {w.start}..{w.end} ({w.description or w.kind}), JSON "
                     f"{jwhole.get('start_ns')}..{jwhole.get('end_ns')} ({jwhole.get('description')})")
    elif jwhole and w.description and jwhole.get("description") and w.kind == "steps" \
            and not jwhole["description"].startswith(w.description):
        probs.append(f"window: description {jwhole.get('description')!r}, recomputed {w.description!r}")
    # warm-up, on the device with the most GPU work in the window
    dev = ctx.busiest(w)
    mine = None
    if dev is not None and w.kind in ("steps", "iterations", "gpu"):
        at = M.Attribution(tr, dev, w)
        ctx._att[(dev, w.start, w.end)] = at
        mine = M.find_warmup(tr, w, dev, at)
    ctx.my_warmup = mine
    if (mine is None) != (wu is None):
        probs.append(f"warm-up: recomputed {'none' if mine is None else _wu_text(mine)}, JSON "
                     f"{'none' if wu is None else _wu_json_text(wu)}")
    elif mine is not None:
        if bool(mine.whole_window) != bool(wu.get("whole_window")) or \
                (not mine.whole_window and abs(mine.end - wu.get("end_ns", 0)) > US) or \
                ["ProfilerStep#" + str(x) for x in wu.get("steps") or []] != mine.steps:
            probs.append(f"warm-up: recomputed {_wu_text(mine)}, JSON {_wu_json_text(wu)}")
    # the analysed window follows from the two
    if mine is not None and not mine.whole_window:
        own = M.Window(mine.steady_start, w.end, w.kind, [s for s in w.steps if s[1] >= mine.steady_start])
    else:
        own = w
    ctx.own_window = own
    ctx.own_window_description = (a.get("window") or {}).get("description")
    jw = a.get("window") or {}
    if jw and (abs(own.start - jw.get("start_ns", 0)) > US or abs(own.end - jw.get("end_ns", 0)) > US):
        probs.append(f"analysed window: recomputed {own.start}..{own.end}, JSON {jw.get('start_ns')}..{jw.get('end_ns')}")
    return probs


def _wu_text(w):
    return (f"whole window" if w.whole_window else f"until {w.end}") + (f", steps {w.steps}" if w.steps else "")


def _wu_json_text(w):
    return (f"whole window" if w.get("whole_window") else f"until {w.get('end_ns')}") + \
        (f", steps {w.get('steps')}" if w.get("steps") else "")


def evidence_intervals(ctx, cause):
    """Calls of the cause's family on any thread (docs/claims.md Premises)."""
    tr = ctx.tr
    if cause == "allocator":
        return merge([[s.ts, s.end] for s in tr.cpu if s.fam == "alloc"])
    if cause == "setup":
        return merge([[s.ts, s.end] for s in tr.cpu if s.fam in ("resource", "module", "capture") or s.slow_first])
    if cause == "jit":
        return merge([[s.ts, s.end] for s in tr.cpu if s.fam in ("jit", "compile")])
    if cause == "data_loading":
        return merge([[s.ts, s.end] for s in tr.cpu if M.DATALOADER_RE.search(s.name) or
                      (M.INPUT_PREP_RE.search(s.name) and not s.dispatches)])
    if cause == "launch_overhead":
        iv = []
        for view in tr.threads.values():
            lf = view.lf
            for i, s in enumerate(lf):
                iv.append([s.ts, s.end])
                if i + 1 < len(lf) and lf[i + 1].ts - s.end <= M.LAUNCH_STRETCH_MAX_GAP:
                    iv.append([s.end, lf[i + 1].ts])
            if lf:
                iv.append([lf[0].ts - M.LAUNCH_STRETCH_MAX_GAP, lf[0].ts])
                iv.append([lf[-1].end, lf[-1].end + M.LAUNCH_STRETCH_MAX_GAP])
        return merge(iv)
    return None


def check_premises(ctx):
    a, tr = ctx.a, ctx.tr
    probs = []
    win = ctx.jwin
    findings = a.get("findings") or []
    # each idle cause backed by its calls, on every device
    for d, causes in (a.get("idle_causes") or {}).items():
        dev = int(d)
        idle = subtract([[win.start, win.end]], tr.busy(dev, win.start, win.end))
        for cause in ("allocator", "setup", "jit", "launch_overhead", "data_loading"):
            v = causes.get(cause, 0)
            if not v:
                continue
            ev = evidence_intervals(ctx, cause)
            bound = total(intersect(idle, ev))
            if v > bound + max(10 * US, 0.005 * v):
                probs.append(f"premise: device {d} {cause} {fmt_ns(v)} > idle inside its calls {fmt_ns(bound)}")
    ho = a.get("host_only")
    if ho:
        for cause in ("allocator", "setup", "jit", "launch_overhead", "data_loading"):
            v = (ho.get("causes") or {}).get(cause, 0)
            if v:
                bound = total(intersect([[win.start, win.end]], evidence_intervals(ctx, cause)))
                if v > bound + max(10 * US, 0.005 * v):
                    probs.append(f"premise: host_only {cause} {fmt_ns(v)} > time inside its calls {fmt_ns(bound)}")
    # order: after the findings that silence timing, severities never increase; no high at <= 0.5
    # the findings that silence timing lead (graph capture, a window that is all warm-up or
    # compiling; gpu_not_used/gpu_not_recorded are about the trace and come first too)
    i = 0
    while i < len(findings) and findings[i].get("kind") in SILENCING_KINDS:
        i += 1
    prev = None
    for f in findings[i:]:
        r = SEVERITY_RANK.get(f.get("severity"), 0)
        if prev is not None and r > prev:
            probs.append(f"premise: order: {f.get('id')} ({f.get('severity')}) after a less severe finding")
        prev = r if prev is None else min(prev, r)
    has_bwd = tr.has_backward()
    has_dl = tr.has_dataloader()
    amd = tr.is_amd()
    steps_in = bool(win.tiles())
    for f in findings:
        fid = f.get("id")
        words = " ".join([f.get("title") or "", f.get("explanation") or "", f.get("fix") or ""])
        if f.get("severity") == "high" and (f.get("confidence") or 0) <= 0.5:
            probs.append(f"premise: {fid} is high at confidence {f.get('confidence')}")
        if re.search(r"\bnetwork\b", words, re.I):
            probs.append(f"premise: {fid} says 'network'")
        m = TRAINING_RE.search(words)
        if m and not has_bwd:
            probs.append(f"premise: {fid} says {m.group(0)!r} without a backward pass in the trace")
        if "DataLoader" in strip_names((f.get("explanation") or "") + " " + (f.get("fix") or "")) and not has_dl:
            probs.append(f"premise: {fid} speaks of the DataLoader without DataLoader ranges")
        if f.get("kind") == "data_loading":
            prep = any(M.INPUT_PREP_RE.search(s.name) and not s.dispatches and win.start <= s.ts < win.end for s in tr.cpu)
            dl_in = any(M.DATALOADER_RE.search(s.name) and s.ts < win.end and s.end > win.start for s in tr.cpu)
            if not (dl_in or prep):
                probs.append(f"premise: {fid} without DataLoader ranges or input preparation in the window")
        dev = f.get("device")
        cc = M.num(tr.prop(dev, "computeMajor")) if dev is not None and dev >= 0 else None
        for sent in re.split(r"(?<=[.;])\s+", f.get("fix") or ""):
            advice = not re.search(r"\bneed|\bno TF32|has no|not\b", sent)
            if advice and "TF32" in sent and (cc is None or cc < 8 or amd):
                probs.append(f"premise: {fid} advises TF32 (computeMajor {cc}, AMD {amd})")
            if advice and re.search(r"bfloat16|bf16", sent) and (cc is None or cc < 8):
                probs.append(f"premise: {fid} advises bfloat16 (computeMajor {cc})")
        for m2 in re.finditer(r"make (\w+) fused", f.get("fix") or ""):
            cls = m2.group(1)
            if not any(s.name.startswith("Optimizer.step#" + cls + ".") for s in tr.cpu):
                probs.append(f"premise: {fid} advises fused=True for {cls}, not named in Optimizer.step#")
        if re.search(r"no input types|carry no input types", words):
            ks = [g for g, _, c in kernel_classes(ctx, dev) if "fp32_matmul" in c] if dev is not None and dev >= 0 else []
            if any(op_types(launching_op(tr, g)) for g in ks):
                probs.append(f"premise: {fid} says no input types, yet the operators carry them")
        if STEP_WORDS_RE.search(words) and not steps_in:
            probs.append(f"premise: {fid} speaks of steps without steps in the window")
        if f.get("kind") == "gpu_not_used":
            if any(rt.fam == "launch" for rt in tr.runtime) or tr.gpu:
                probs.append(f"premise: {fid}: the trace has launch calls or GPU work")
        if f.get("kind") == "gpu_not_recorded":
            if not any(rt.fam in ("launch", "copy") for rt in tr.runtime) or tr.gpu:
                probs.append(f"premise: {fid}: needs launch calls and no GPU work")
        if f.get("kind") == "compilation":
            comp = m_compile_ns(ctx, {})
            rec = any(int(M.REGION_RE.match(s.name).group(2)) >= 1 for s in tr.cpu if M.REGION_RE.match(s.name))
            if not comp and not rec:
                probs.append(f"premise: {fid} without compile events outside warm-up or compile ids >= 1")
        if f.get("kind") == "host_sync":
            listed = [(c.get("params") or {}).get("name") or "" for c in f.get("claims") or []
                      if c.get("measure") == "sync_calls"]
            for n in listed:
                if n.endswith("StreamWaitEvent"):
                    probs.append(f"premise: {fid} lists the stream-ordering call {n}")
    return probs


# ------------------------------------------------------------------ driver

def audit_trace(path, analysis, verbose=False):
    tr = M.Trace(M.read_json(path), path=path)
    ctx = Ctx(tr, analysis)
    failures = []
    failures += check_window(ctx)
    failures += check_premises(ctx)
    failures += B.check_launch_stats(ctx)
    if verbose:
        for d, causes in (analysis.get("idle_causes") or {}).items():
            at = ctx.att(int(d))
            diff = [f"{c} {fmt_ns(v)} vs {fmt_ns(at.totals.get(c, 0))}" for c, v in causes.items()
                    if abs(v - at.totals.get(c, 0)) > max(5 * US, 0.02 * v)]
            print(f"    note: device {d} idle causes (JSON vs audit): " + ("; ".join(diff) if diff else "agree"))
    nclaims = 0
    for f in analysis.get("findings") or []:
        fid = f.get("id")
        miss = coverage(f)
        for x in miss:
            failures.append(f"{fid}: coverage: {x} is in the text but in no claim's text")
        for c in f.get("claims") or []:
            nclaims += 1
            try:
                r = check_claim(ctx, c, f)
            except Problem as e:
                r = (c.get("text"), None, str(e))
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
                r = (c.get("text"), None, f"could not recompute: {type(e).__name__}: {e}")
            if r is not None:
                text, rec, note = r
                failures.append(f"{fid}: claim {text!r} ({c.get('measure')} {json.dumps(c.get('params'), sort_keys=True)}): "
                                f"shown {text!r}, recomputed {fmt_val(c, rec)}" + (f" [{note}]" if note else ""))
            elif verbose:
                try:
                    v = measure(ctx, c, f) if c.get("measure") not in ("constant", "window") else "-"
                except Problem:
                    v = None
                print(f"    ok {fid}: {c.get('text')!r} {c.get('measure')} = {fmt_val(c, v[0] if isinstance(v, list) else v)}")
    return failures, nclaims


def run_cli(cli, path, timeout=300):
    p = subprocess.run([cli, "analyze", "--json", path], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise Problem(f"stallscope-cli exited {p.returncode}: {p.stderr.strip()[:300]}")
    doc = json.loads(p.stdout)
    if isinstance(doc, dict) and "traces" in doc:
        doc = doc["traces"]
    if not isinstance(doc, list):
        raise Problem("analyze --json did not give an array")
    return doc


def kineto_form(cli, path, folder):
    """Another profiler's file as the Kineto JSON Stallscope read it (its annotated trace)."""
    out = os.path.join(folder, os.path.basename(path) + ".trace.json")
    p = subprocess.run([cli, "-q", "report", "--format", "trace", "-o", out, path],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise Problem(f"report --format trace: {p.stderr.strip()[:300]}")
    return out


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(repo, "build", "release", "app", "stallscope-cli"))
    ap.add_argument("--traces", default=os.path.normpath(os.path.join(repo, "..", "shared", "traces")))
    ap.add_argument("--only", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.traces):
        print(f"claims_audit.py: traces folder {a.traces} not found, skipping")
        return 77
    if not (os.path.isfile(a.cli) and os.access(a.cli, os.X_OK)):
        print(f"claims_audit.py: no stallscope-cli at {a.cli} (build it, or pass --cli)")
        return 1
    import corpus
    t0 = time.time()
    traces = sorted(corpus.kineto_traces(a.traces))
    # Other profilers' files (Nsight, RPD, rocprofv3): audited on their Kineto form, which
    # `report --format trace` writes (the counts of that form against the file itself:
    # tests/tools/foreign_formats_check.py).
    foreign = {rel for rel, (kind, _) in corpus.classify_corpus(a.traces).items()
               if kind in corpus.READ_AS_TRACE}
    traces += sorted(foreign)
    # The hand-made traces of findings no shared trace has evidence for (tests/data/traces).
    traces += [os.path.join(repo, "tests", "data", "traces", n) for n in SYNTHETIC]
    scratch = tempfile.TemporaryDirectory()
    failed = 0
    total_claims = 0
    for rel in traces:
        if a.only and a.only not in rel:
            continue
        t1 = time.time()
        path = os.path.join(a.traces, rel)
        try:
            analyses = run_cli(a.cli, path)
            fails, n = [], 0
            read = kineto_form(a.cli, path, scratch.name) if rel in foreign else path
            for an in analyses:
                f2, n2 = audit_trace(read, an, a.verbose)
                fails += f2
                n += n2
        except (Problem, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            fails, n = [f"could not audit: {e}"], 0
        total_claims += n
        dt = time.time() - t1
        if fails:
            failed += 1
            print(f"FAIL {rel} ({n} claims, {dt:.1f} s)")
            for x in fails:
                print("     " + x)
        else:
            print(f"PASS {rel} ({n} claims, {dt:.1f} s)")
        sys.stdout.flush()
    print(f"{failed} of {len(traces) if not a.only else sum(1 for r in traces if a.only in r)} traces failed; "
          f"{total_claims} claims; {time.time() - t0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
