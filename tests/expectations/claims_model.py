"""The claims audit's own reading of a Kineto trace (Python 3.11 standard library only).

A second, independent implementation of docs/analysis.md ("Window", "Idle-cause attribution",
"Warm-up") and of the measures of docs/claims.md, written from the documentation and the two
data files (analysis/data/call_catalogue.txt, analysis/data/kernel_catalogue.txt), never from
Stallscope's C++. claims_audit.py drives it; test_claims_audit_unit.py pins its rules on tiny
inline traces.

Times are integer nanoseconds, as in `stallscope-cli analyze --json`: a trace's microsecond
`ts`/`dur` are converted exactly (floats are read as decimal text, never as binary doubles),
and `baseTimeNanoseconds` is added when the trace has it.

Readings chosen where docs/analysis.md leaves a choice (each is one sentence of the docs read
one way; claims_audit.py lists the measures' own):
  * The chain is walked slice by slice: every rule is tried on the innermost slice, then on its
    parent, ... ("walking from that slice outward, the first rule that matches decides"), so a
    synchronize inside a DataLoader range is host_sync. (Reading the departures' "launch calls
    are checked at every level of the chain" as rule by rule would make it data_loading.)
  * "Inside only a user range": the innermost slice is a user range (record_function, step),
    even when an operator encloses it (nccl:all_reduce inside record_param_comms).
  * "Right after a synchronising call, where it stays host_sync (the CPU resumed to an empty
    queue)": the untraced run that starts where a synchronising call ended, when the idle gap
    began while that call ran (it waited for the GPU to drain). A synchronize that returned at
    once, the GPU already idle, is followed by untraced time.
  * An operator "dispatches GPU work" when it or a descendant made a runtime call with GPU work
    of its correlation (launches recorded inside a graph capture start none).
  * Slices that overlap without one containing the other are not nested; the innermost slice
    over a segment is the covering one that started last.
  * The launch stretch uses the thread's calls of the catalogue's launch, copy and stream
    families (queries are not among them); "the segment's own edge" is the swept piece's edge.
  * Slow first uses are first over the whole trace; a launch's "kernel" is any work it started.
  * cuda_sync events sit on GPU rows: the sweep of the launching thread sees the runtime calls
    they mirror, not the events.
  * A gap's ending work when several start at its end: the one launched last. The thread that
    launched most of a device's work counts its whole trace.
  * "The whole trace (earliest to latest event)" includes Kineto's "Trace" spans.
  * io_logging_checkpoint's "checkpoint code" is not torch.utils.checkpoint (activation
    recomputation). Named input preparation is matched by INPUT_PREP_RE below.
  * Warm-up "growth": the last step's allocator idle < a tenth of the step's; without steps the
    stretch ends at the last one-off interval where the one-off time so far is >= half of it.
"""
import bisect
import gzip
import heapq
import json
import os
import re
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CALL_CATALOGUE = os.path.join(REPO, "analysis", "data", "call_catalogue.txt")
KERNEL_CATALOGUE = os.path.join(REPO, "analysis", "data", "kernel_catalogue.txt")

US = 1000
MS = 1000 * US
LAUNCH_STRETCH_MAX_GAP = 500 * US      # docs/analysis.md: launchStretchMaxGapNs
SLOW_FIRST_USE = 1 * MS                # a slow first use takes >= 1 ms
QUEUED_GPU_WAIT = 50 * US              # queued > 50 us after its launch returned
FUSION_HOLD_MIN = 1 * MS               # a fusion group that holds the host lasts >= 1 ms

CAUSES = ["data_loading", "blocking_copy", "host_sync", "launch_overhead", "optimizer_cpu",
          "io_logging_checkpoint", "cpu_compute", "host_untraced", "gpu_dependency", "allocator",
          "setup", "jit"]
RULE_CAUSES = ["data_loading", "host_sync", "blocking_copy", "allocator", "setup", "jit",
               "launch_overhead", "optimizer_cpu", "io_logging_checkpoint"]

GPU_CATS = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
            "gpu_memset": "memset", "Memset": "memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "Driver"}
NOT_CPU_CATS = {"Trace", "gpu_user_annotation", "ac2g", "fwdbwd", "flow", "async_cpu_to_gpu",
                "cuda_profiler_range", "async", "cuda_sync"}

STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
DATALOADER_RE = re.compile(r"enumerate\(DataLoader\)#|enumerate\(DataPipe\)#|DataLoaderIter\.__next__")
# Named input preparation (docs/analysis.md, data_loading in a step's leading gap): tokenisers,
# Hugging Face processors, torchvision transforms and I/O, PIL/OpenCV, collate, datasets,
# torch/utils/data.
INPUT_PREP_RE = re.compile(r"tokeniz|Tokeniz|processing_|torchvision/transforms|torchvision/io|"
                           r"torchvision\.transforms|torchvision\.io|PIL/|PIL\.|\bcv2\b|collate|"
                           r"datasets/|/datasets\b|\bdatasets\.|torch/utils/data")
OPTIMIZER_RE = re.compile(r"^Optimizer\.(step|zero_grad)#")
IO_RE = re.compile(r"torch\.save|torch/serialization\.py|serializ|pickle|<built-in function print>|"
                   r"builtins\.print|\bprint\b|logging|tensorboard|SummaryWriter|wandb|mlflow|"
                   r"checkpoint", re.I)
FUSION_RE = re.compile(r"^prim::|^fallback_function$")
BACKWARD_RE = re.compile(r"Backward0|Backward\b|^autograd::engine|^aten::\w*_backward|Tensor\.backward|"
                         r"torch/autograd/__init__\.py\(\d+\): backward|_tensor\.py\(\d+\): backward")
KERNEL_BACKWARD_RE = re.compile(r"Backward|_backward")
REGION_RE = re.compile(r"^Torch-Compiled Region: (\d+)/(\d+)")


# ------------------------------------------------------------------ intervals

def merge(iv):
    iv = sorted((s, e) for s, e in iv if e > s)
    out = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def total(iv):
    return sum(e - s for s, e in iv)


def intersect(a, b):
    """Both merged and sorted."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a, b):
    out, j = [], 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append([cur, e])
    return out


def clip(iv, lo, hi):
    return [[max(s, lo), min(e, hi)] for s, e in iv if min(e, hi) > max(s, lo)]


# ------------------------------------------------------------------ catalogues (data files)

class CallCatalogue:
    """analysis/data/call_catalogue.txt: FAMILY MATCH PATTERN, the first matching rule wins."""

    def __init__(self, path=CALL_CATALOGUE, text=None):
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self.rules = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fam, match, pat = line.split(" ", 2)
            if match not in ("exact", "prefix", "contains"):
                raise ValueError(f"call catalogue: unknown match {match!r}")
            self.rules.append((fam, match, pat))
        self._cache = {}

    def family(self, name):
        try:
            return self._cache[name]
        except KeyError:
            pass
        fam = None
        for f, m, p in self.rules:
            if (m == "exact" and name == p) or (m == "prefix" and name.startswith(p)) or \
                    (m == "contains" and p in name):
                fam = f
                break
        self._cache[name] = fam
        return fam


class KernelCatalogue:
    """analysis/data/kernel_catalogue.txt: FIELD VALUE MATCH PATTERN, per field the first match."""
    LOW = {"fp16", "bf16", "tf32", "fp8", "fp4", "int8"}

    def __init__(self, path=KERNEL_CATALOGUE, text=None):
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self.rules = defaultdict(list)
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            field, value, match, pat = line.split(" ", 3)
            if match not in ("prefix", "contains", "icontains"):
                raise ValueError(f"kernel catalogue: unknown match {match!r}")
            self.rules[field].append((value, match, pat, pat.lower()))
        self._cache = {}

    def _first(self, field, name, lower):
        for value, m, p, pl in self.rules.get(field, ()):
            if (m == "prefix" and name.startswith(p)) or (m == "contains" and p in name) or \
                    (m == "icontains" and pl in lower):
                return value
        return None

    def classify(self, name):
        c = self._cache.get(name)
        if c is None:
            lower = name.lower()
            c = {"family": self._first("family", name, lower) or "other",
                 "precision": self._first("precision", name, lower),
                 "tensor_core": self._first("tensor_core", name, lower),
                 "library": self._first("library", name, lower) == "yes"}
            self._cache[name] = c
        return c

    @staticmethod
    def is_matmul(c):
        return c["family"] in ("gemm", "grouped_gemm", "conv")

    @classmethod
    def on_tensor_cores(cls, c, precision=None):
        """A matrix multiply's Tensor-Core use: the rule's, else by precision (docs)."""
        if c["tensor_core"] == "yes":
            return True
        if c["tensor_core"] == "no":
            return False
        p = precision or c["precision"]
        return p in cls.LOW


# ------------------------------------------------------------------ loading

def _ns(v):
    """A microsecond value (int, or decimal text when read with parse_float=str) in ns."""
    t = type(v)
    if t is int:
        return v * 1000
    if t is str:
        try:
            return int((Decimal(v) * 1000).to_integral_value())
        except (InvalidOperation, ValueError):
            return None
    if t is float:
        return round(v * 1000)
    return None


def num(v):
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


class Ev:
    __slots__ = ("idx", "name", "cat", "pid", "tid", "ts", "end", "args", "kind", "dev", "corr",
                 "thread", "parent", "eend", "fam", "dispatches", "launch_ns", "pageable",
                 "slow_first", "work", "sub")

    def __init__(self, idx, name, cat, pid, tid, ts, end, args):
        self.idx = idx
        self.name = name
        self.cat = cat
        self.pid = pid
        self.tid = tid
        self.ts = ts
        self.end = end
        self.args = args
        self.kind = None
        self.dev = None
        self.corr = None
        self.thread = None
        self.parent = None
        self.eend = end
        self.fam = None
        self.dispatches = False
        self.launch_ns = 0
        self.pageable = False
        self.slow_first = False
        self.work = None
        self.sub = None

    @property
    def dur(self):
        return self.end - self.ts

    def chain(self):
        s = self
        while s is not None:
            yield s
            s = s.parent

    def __repr__(self):
        return f"Ev({self.name!r}, {self.ts}, {self.end}, {self.kind})"


def read_json(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data, parse_float=str)


class Trace:
    """Events of one Kineto/Chrome trace, with the structures every measure needs."""

    def __init__(self, doc, calls=None, kernels=None, path=""):
        self.path = path
        self.calls = calls or CallCatalogue()
        self.kernels = kernels or KernelCatalogue()
        if isinstance(doc, list):
            events, top = doc, {}
        else:
            events, top = doc.get("traceEvents") or [], doc
        self.top = top
        base = top.get("baseTimeNanoseconds")
        base = int(base) if isinstance(base, (int, str)) and str(base).isdigit() else 0
        self.base = base
        # deviceProperties (computeProperties with major/minor in the 2021 plugin files)
        self.device_props = [p for p in (top.get("deviceProperties") or []) if isinstance(p, dict)]
        if not self.device_props:
            for p in top.get("computeProperties") or []:
                if isinstance(p, dict):
                    q = dict(p)
                    q.setdefault("computeMajor", p.get("major"))
                    q.setdefault("computeMinor", p.get("minor"))
                    self.device_props.append(q)
        gpu_labels = {}
        for e in events:
            if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") in ("process_labels", "process_name"):
                lab = str((e.get("args") or {}).get("labels") or (e.get("args") or {}).get("name") or "")
                m = re.match(r"^GPU (\d+)", lab)
                if m:
                    gpu_labels[e.get("pid")] = int(m.group(1))
        self.gpu = []            # kernels, copies, memsets
        self.runtime = []        # runtime / driver calls
        self.cpu = []            # every CPU-side slice (runtime calls included)
        self.sync_markers = []   # cuda_sync events
        self.memory = []         # [memory] instants
        self.record_end = None
        lo = hi = None
        for i, e in enumerate(events):
            if not isinstance(e, dict):
                continue
            ph = e.get("ph")
            name = e.get("name")
            if not isinstance(name, str):
                name = "" if name is None else str(name)
            if ph in ("i", "I"):
                t = _ns(e.get("ts"))
                if t is None:
                    continue
                t += base
                if name == "Record Window End":
                    self.record_end = t if self.record_end is None else min(self.record_end, t)
                elif name == "[memory]":
                    self.memory.append((t, e.get("args") or {}))
                if e.get("pid") not in ("", None):
                    lo = t if lo is None or t < lo else lo
                    hi = t if hi is None or t > hi else hi
                continue
            if ph != "X":
                continue
            ts = _ns(e.get("ts"))
            if ts is None:
                continue
            ts += base
            d = _ns(e.get("dur"))
            d = d if d is not None and d > 0 else 0
            cat = e.get("cat")
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            ev = Ev(i, name, cat, e.get("pid"), e.get("tid"), ts, ts + d, args)
            if True:    # the whole trace: earliest to latest event, Kineto's spans included
                lo = ts if lo is None or ts < lo else lo
                hi = ev.end if hi is None or ev.end > hi else hi
            if cat in GPU_CATS:
                ev.kind = GPU_CATS[cat]
                pid = e.get("pid")
                if isinstance(pid, int):
                    ev.dev = pid
                elif isinstance(pid, str) and pid.isdigit():
                    ev.dev = int(pid)
                else:
                    ev.dev = gpu_labels.get(pid, args.get("device"))
                ev.corr = args.get("correlation")
                self.gpu.append(ev)
            elif cat == "cuda_sync":
                ev.kind = "cuda_sync"
                ev.corr = args.get("correlation")
                self.sync_markers.append(ev)
            elif cat in RUNTIME_CATS:
                ev.kind = "runtime"
                ev.corr = args.get("correlation")
                self.runtime.append(ev)
                self.cpu.append(ev)
            elif cat in NOT_CPU_CATS:
                continue
            else:
                if cat == "python_function":
                    ev.kind = "py"
                elif STEP_RE.match(name) or cat == "user_annotation" or \
                        (name.startswith("## ") and name.endswith(" ##")):
                    ev.kind = "user"
                else:
                    ev.kind = "op"
                self.cpu.append(ev)
        self.span = (lo or 0, hi or 0)
        self.gpu.sort(key=lambda g: (g.ts, g.end))
        for ev in self.cpu:
            ev.fam = self.calls.family(ev.name)
        self.launch_of = {}
        for rt in self.runtime:
            if rt.corr is not None:
                self.launch_of.setdefault(rt.corr, rt)
        self.work_of = defaultdict(list)
        for g in self.gpu:
            if g.corr is not None:
                self.work_of[g.corr].append(g)
        for rt in self.runtime:
            w = self.work_of.get(rt.corr) if rt.corr is not None else None
            rt.work = w or None
            if rt.fam == "copy" and w:
                rt.pageable = any(x.kind == "memcpy" and "Pageable" in x.name for x in w)
        self.devices = sorted({g.dev for g in self.gpu if g.dev is not None})
        self._build_threads()
        self._first_uses()

    # -------------------------------------------------------------- threads and nesting

    _RANK = {"user": 0, "py": 1, "op": 2, "runtime": 3}

    def _build_threads(self):
        by = defaultdict(list)
        for ev in self.cpu:
            ev.thread = (ev.pid, str(ev.tid))
            by[ev.thread].append(ev)
        self.threads = {}
        for th, sl in by.items():
            sl.sort(key=lambda s: (s.ts, -s.end, 0 if STEP_RE.match(s.name) else 1, self._RANK[s.kind]))
            # parent: the latest-starting slice that contains it whole (slices that overlap
            # without containing are not nested: a record_function range that starts inside a
            # short Python frame and outlives it is not that frame's child)
            open_ = []
            for s in sl:
                while open_ and open_[-1].end <= s.ts:
                    open_.pop()
                for p in reversed(open_):
                    if p.end >= s.end:
                        s.parent = p
                        break
                s.eend = s.end
                if s.end > s.ts:
                    open_.append(s)
            self.threads[th] = ThreadView(self, th, sl)
        # which operators dispatch GPU work (they or a descendant launched work)
        for rt in self.runtime:
            if rt.work:
                p = rt.parent
                while p is not None and not p.dispatches:
                    p.dispatches = True
                    p = p.parent
                rt.dispatches = True
            if rt.fam == "launch":
                p = rt.parent
                while p is not None:
                    p.launch_ns += rt.dur
                    p = p.parent

    def _first_uses(self):
        """Slow first uses (docs/analysis.md, setup): the first launch of a kernel (by the name of
        the work it started) or the first call of a query or unknown runtime call, >= 1 ms."""
        first_launch = {}
        first_call = {}
        for rt in sorted(self.runtime, key=lambda r: (r.ts, r.idx)):
            if rt.fam == "launch":
                for w in (rt.work or ()):
                    if w.name not in first_launch:
                        first_launch[w.name] = rt
            elif rt.fam in (None, "query"):
                if rt.name not in first_call:
                    first_call[rt.name] = rt
        for rt in list(first_launch.values()) + list(first_call.values()):
            if rt.dur >= SLOW_FIRST_USE:
                rt.slow_first = True

    # -------------------------------------------------------------- helpers

    def device_work(self, dev):
        return [g for g in self.gpu if g.dev == dev]

    def busy(self, dev, lo, hi, kinds=None):
        return merge(clip([[g.ts, g.end] for g in self.gpu if g.dev == dev and (kinds is None or g.kind in kinds)],
                          lo, hi))

    def main_thread(self, dev):
        """The thread that launched most of the device's work."""
        c = Counter()
        for g in self.gpu:
            if g.dev == dev and g.corr is not None:
                lt = self.launch_of.get(g.corr)
                if lt is not None:
                    c[lt.thread] += 1
        return c.most_common(1)[0][0] if c else None

    def steps_raw(self):
        return sorted((s for s in self.cpu if STEP_RE.match(s.name)), key=lambda s: (s.ts, s.end))

    def has_backward(self):
        # Autograd's events, or PyTorch's backward kernels (GeluBackwardCUDAKernelImpl,
        # nll_loss_backward_reduce_cuda_kernel_2d): another profiler's file (Nsight without
        # autograd NVTX, rocprofv3) has no operators to tell.
        return (any(BACKWARD_RE.search(s.name) for s in self.cpu) or
                any(KERNEL_BACKWARD_RE.search(g.name) for g in self.gpu if g.kind == "kernel"))

    def has_dataloader(self):
        return any(DATALOADER_RE.search(s.name) for s in self.cpu)

    def is_amd(self):
        if any(k.startswith(("hip_", "roctracer")) for k in self.top):
            return True
        if any(re.search(r"AMD|Instinct|Radeon", str(p.get("name", ""))) for p in self.device_props):
            return True
        return any(rt.name.startswith("hip") for rt in self.runtime[:2000])

    def prop(self, dev, field):
        for p in self.device_props:
            if p.get("id") == dev:
                return p.get(field)
        if len(self.device_props) == 1:
            return self.device_props[0].get(field)
        return None

    def find_slice(self, ref):
        """The event named ref['name'] starting at ref['start_ns'] (any track); nearest within 1 us."""
        name, t = ref.get("name"), ref.get("start_ns")
        best = None
        for ev in self._by_name().get(name, ()):
            d = abs(ev.ts - t)
            if d <= US and (best is None or d < abs(best.ts - t)):
                best = ev
        return best

    def _by_name(self):
        if not hasattr(self, "_name_index"):
            idx = defaultdict(list)
            for ev in self.cpu:
                idx[ev.name].append(ev)
            for ev in self.gpu:
                idx[ev.name].append(ev)
            for ev in self.sync_markers:
                idx[ev.name].append(ev)
            self._name_index = idx
        return self._name_index


class ThreadView:
    """One CPU thread: its slices, elementary segments and launch-family calls."""

    def __init__(self, trace, key, slices):
        self.trace = trace
        self.key = key
        self.slices = slices
        # elementary segments: (start, end, innermost slice or None); the innermost slice is
        # the covering one that started last
        segs = []
        open_ = []
        ends = []
        t = None
        seq = 0
        for s in slices:
            while ends and ends[0][0] <= s.ts:
                e = ends[0][0]
                if open_ and e > t:
                    segs.append((t, e, open_[-1]))
                    t = e
                while ends and ends[0][0] == e:
                    _, _, x = heapq.heappop(ends)
                    open_.remove(x)
            if t is not None and s.ts > t:
                segs.append((t, s.ts, open_[-1] if open_ else None))
            t = s.ts if t is None else max(t, s.ts)
            if s.end > s.ts:
                open_.append(s)
                heapq.heappush(ends, (s.end, seq, s))
                seq += 1
        while ends:
            e = ends[0][0]
            if open_ and e > t:
                segs.append((t, e, open_[-1]))
                t = e
            while ends and ends[0][0] == e:
                _, _, x = heapq.heappop(ends)
                open_.remove(x)
        self.segs = segs
        self.seg_ends = [e for _, e, _ in segs]
        lf = [s for s in slices if s.kind == "runtime" and s.fam in ("launch", "copy", "stream")]
        lf.sort(key=lambda s: s.ts)
        self.lf_starts = [s.ts for s in lf]
        self.lf_ends = sorted(s.end for s in lf)
        self.lf = lf

    def pieces(self, a, b):
        """(x, y, innermost slice or None, segment index or -1) covering [a, b)."""
        out = []
        i = bisect.bisect_right(self.seg_ends, a)
        t = a
        segs = self.segs
        while i < len(segs) and segs[i][0] < b:
            s, e, sl = segs[i]
            x, y = max(s, a), min(e, b)
            if x > t:
                out.append((t, x, None, -1))
            if y > x:
                out.append((x, y, sl, i))
            t = max(t, y)
            i += 1
        if t < b:
            out.append((t, b, None, -1))
        return out

    def stretch_gap(self, x, y):
        """The gap between the thread's launch-family calls just before and just after [x, y]
        (the segment's own edge standing in before the first call or after the last)."""
        j = bisect.bisect_left(self.lf_starts, y)
        nxt = self.lf_starts[j] if j < len(self.lf_starts) else y
        k = bisect.bisect_right(self.lf_ends, x) - 1
        prev = self.lf_ends[k] if k >= 0 else x
        return nxt - prev


# ------------------------------------------------------------------ window

class Window:
    def __init__(self, start, end, kind, steps=(), description=""):
        self.start = start
        self.end = end
        self.kind = kind            # "steps", "iterations", "gpu", "whole"
        self.steps = list(steps)    # [(label, start, end)] with the tiles computed below
        self.description = description

    @property
    def length(self):
        return self.end - self.start

    def tiles(self):
        """Each step owns its start to the next step's start (the last one to the window end)."""
        out = []
        st = [s for s in self.steps if self.start <= s[1] < self.end]
        for i, (lab, s, e) in enumerate(st):
            nxt = st[i + 1][1] if i + 1 < len(st) else self.end
            out.append((lab, s, nxt))
        return out


def _norm_iteration_name(name):
    n = re.sub(r"\[[^\]]*\]", "[...]", name)
    n = re.sub(r"\([^)]*\)", "(...)", n)
    return re.sub(r"\d+", "#", n)


def iterations(tr):
    """A serving loop's iterations (docs/analysis.md, Window): outermost user annotations around
    the launch calls grouped by normalised name; the group around most launches, holding at
    least half of them and of the GPU work, with at least two instances."""
    launches = [rt for rt in tr.runtime if rt.fam == "launch"]
    if not launches:
        return []
    groups = defaultdict(set)
    group_launches = Counter()
    group_work = Counter()
    for rt in launches:
        outer = None
        for p in rt.chain():
            if p.kind == "user" and not STEP_RE.match(p.name):
                outer = p
        if outer is None:
            continue
        g = _norm_iteration_name(outer.name)
        groups[g].add(outer)
        group_launches[g] += 1
        group_work[g] += len(rt.work or ())
    if not group_launches:
        return []
    g, n = group_launches.most_common(1)[0]
    if n * 2 < len(launches) or len(groups[g]) < 2:
        return []
    if group_work[g] * 2 < len(tr.gpu):
        return []
    return sorted(groups[g], key=lambda s: s.ts)


def default_window(tr):
    """The default (steps) window of docs/analysis.md "Window"."""
    steps = tr.steps_raw()
    kind = "steps"
    labels = []
    if steps:
        ranges = []
        for s in steps:
            end = s.end
            if tr.record_end is not None and end > tr.record_end:
                last = max((x.end for x in tr.cpu + tr.gpu if s.ts <= x.ts <= s.end and x is not s
                            and not STEP_RE.match(x.name)), default=tr.record_end)
                end = min(end, max(tr.record_end, last))
            ranges.append((s, s.ts, end))
        labels = [("ProfilerStep#" + STEP_RE.match(s.name).group(1), a, b) for s, a, b in ranges]
    else:
        its = iterations(tr)
        if its:
            kind = "iterations"
            labels = [(s.name, s.ts, s.end) for s in its]
    if labels:
        ws = min(a for _, a, _ in labels)
        last = max(b for _, _, b in labels)
        we = last
        inside = merge([[a, b] for _, a, b in labels])
        starts = [a for a, _ in inside]
        for g in tr.gpu:
            lt = tr.launch_of.get(g.corr) if g.corr is not None else None
            if lt is None:
                continue
            k = bisect.bisect_right(starts, lt.ts) - 1
            if k >= 0 and lt.ts <= inside[k][1]:
                we = max(we, g.end)
        if kind == "steps":
            nums = [lab[len("ProfilerStep#"):] for lab, _, _ in labels]
            desc = (f"ProfilerStep#{nums[0]} and its GPU work" if len(nums) == 1
                    else f"ProfilerStep#{nums[0]}..#{nums[-1]} and their GPU work")
        else:
            desc = ""
        return Window(ws, we, kind, labels, desc)
    if tr.gpu:
        return Window(min(g.ts for g in tr.gpu), max(g.end for g in tr.gpu), "gpu", (),
                      "first to last GPU activity (no ProfilerStep ranges)")
    return Window(tr.span[0], tr.span[1], "whole", (), "the whole trace (no ProfilerStep ranges, no GPU work)")


def window_from_json(tr, w, whole=None):
    """The JSON's window with the steps of the default window starting inside it."""
    dw = whole or default_window(tr)
    st = [s for s in dw.steps if w["start_ns"] <= s[1] < w["end_ns"]]
    return Window(w["start_ns"], w["end_ns"], dw.kind, st, w.get("description", ""))


# ------------------------------------------------------------------ idle-cause attribution

def is_blocking_copy(s):
    return s.kind == "runtime" and (s.fam == "copy_sync" or (s.fam == "copy" and s.pageable))


def holds_host(s):
    return s.dur >= FUSION_HOLD_MIN and s.launch_ns * 10 < s.dur


def matches(rule, s):
    """Does slice s match the rule of the table (docs/analysis.md) by itself?"""
    f = s.fam
    if rule == "data_loading":
        return bool(DATALOADER_RE.search(s.name))
    if rule == "host_sync":
        if f == "sync":
            return True
        # a blocking copy inside a synchronising call (.item() waits inside a pageable DtoH copy)
        if is_blocking_copy(s):
            p = s.parent
            while p is not None:
                if p.fam == "sync":
                    return True
                p = p.parent
        return False
    if rule == "blocking_copy":
        return is_blocking_copy(s)
    if rule == "allocator":
        return f == "alloc"
    if rule == "setup":
        return f in ("resource", "module", "capture") or s.slow_first
    if rule == "jit":
        return f == "compile" or (f == "jit" and (not FUSION_RE.match(s.name) or holds_host(s)))
    if rule == "launch_overhead":
        return s.kind == "runtime" and f in ("launch", "copy", "stream")
    if rule == "optimizer_cpu":
        return bool(OPTIMIZER_RE.match(s.name))
    if rule == "io_logging_checkpoint":
        return bool(IO_RE.search(s.name)) and "torch/utils/checkpoint" not in s.name \
            and "CheckpointFunction" not in s.name
    raise KeyError(rule)


# How the chain is walked (docs/analysis.md: "Walking from that slice outward, the first rule
# that matches decides"): "slice" tries every rule on the innermost slice, then on its parent,
# ...; "rule" tries each rule on every level before the next rule. See claims_audit.py's notes.
RULE_WALK = "slice"


_NAME_MASK = {}


def own_mask(s):
    """The rules (bit i: RULE_CAUSES[i]) slice s matches by itself."""
    m = getattr(s, "sub", None)
    if m is not None:
        return m
    key = (s.name, s.kind == "runtime")
    nm = _NAME_MASK.get(key)
    if nm is None:
        nm = 0
        for i, r in enumerate(RULE_CAUSES):
            if r in ("data_loading", "optimizer_cpu", "io_logging_checkpoint", "allocator") or \
                    (r == "host_sync" and s.fam == "sync") or \
                    (r == "launch_overhead") or (r == "setup" and s.fam in ("resource", "module", "capture")) or \
                    (r == "jit" and (s.fam == "compile" or (s.fam == "jit" and not FUSION_RE.match(s.name)))):
                if matches(r, s):
                    nm |= 1 << i
        _NAME_MASK[key] = nm
    m = nm
    if s.kind == "runtime" and is_blocking_copy(s):
        m |= 1 << RULE_CAUSES.index("blocking_copy")
        if matches("host_sync", s):
            m |= 1 << RULE_CAUSES.index("host_sync")
    if s.slow_first:
        m |= 1 << RULE_CAUSES.index("setup")
    if s.fam == "jit" and FUSION_RE.match(s.name) and holds_host(s):
        m |= 1 << RULE_CAUSES.index("jit")
    s.sub = m
    return m


def _lowest(mask):
    return RULE_CAUSES[(mask & -mask).bit_length() - 1] if mask else None


def rule_cause(s, walk=None, memo=None):
    """The cause the rules table gives the innermost slice s (None: no rule matches)."""
    walk = walk or RULE_WALK
    if s is None:
        return None
    memo = {} if memo is None else memo
    chain = []
    x = s
    while x is not None and x.idx not in memo:
        chain.append(x)
        x = x.parent
    acc = memo[x.idx] if x is not None else (None if walk == "slice" else 0)
    for y in reversed(chain):
        own = own_mask(y)
        if walk == "slice":
            acc = _lowest(own) if own else acc
        else:
            acc = acc | own
        memo[y.idx] = acc
    r = memo[s.idx]
    return r if walk == "slice" else _lowest(r)


class Attribution:
    """Idle time of one device over one window, every nanosecond charged to one cause.

    pieces: (start, end, cause, name of the innermost slice on the launching thread or None)."""

    def __init__(self, tr, dev, win, host_only=False, thread=None, walk=None):
        self.tr = tr
        self.dev = dev
        self.win = win
        self.walk = walk or RULE_WALK
        self.pieces = []
        self.gaps = []          # (start, end)
        self._rule_cache = {}
        self._after_cache = {}
        ws, we = win.start, win.end
        if host_only:
            self.busy = []
            self.gaps = [(ws, we)] if we > ws else []
            th = thread
            for gs, ge in self.gaps:
                self._sweep(th, gs, ge, [])
        else:
            self.busy = tr.busy(dev, ws, we)
            gaps = subtract([[ws, we]], self.busy)
            self.gaps = [(a, b) for a, b in gaps]
            work = [g for g in tr.gpu if g.dev == dev]
            by_start = defaultdict(list)
            for g in work:
                by_start[g.ts].append(g)
            main = tr.main_thread(dev)
            leading = self._leading(work)
            for gs, ge in self.gaps:
                launch = None
                if ge < we:
                    for w in by_start.get(ge, ()):
                        lt = tr.launch_of.get(w.corr) if w.corr is not None else None
                        if lt is not None and (launch is None or lt.ts > launch.ts):
                            launch = lt
                if launch is not None and launch.ts < gs:
                    self.pieces.append((gs, ge, "gpu_dependency", None))
                    continue
                end = ge
                if launch is not None and launch.end < ge and ge - launch.end > QUEUED_GPU_WAIT:
                    self.pieces.append((launch.end, ge, "gpu_dependency", None))
                    end = launch.end
                th = launch.thread if launch is not None else main
                self._sweep(th, gs, end, leading)
        self.pieces.sort()
        self.totals = Counter()
        for x, y, c, _ in self.pieces:
            self.totals[c] += y - x
        self.idle = sum(b - a for a, b in self.gaps)

    def _leading(self, work):
        """A step's leading gap: from its start until the step's first GPU work starts."""
        out = []
        starts = [g.ts for g in work]
        for _, s, e in self.win.tiles():
            k = bisect.bisect_left(starts, s)
            first = starts[k] if k < len(starts) and starts[k] < e else e
            if first > s:
                out.append([s, first])
        return out

    def _sweep(self, th, a, b, leading):
        if b <= a:
            return
        view = self.tr.threads.get(th) if th is not None else None
        if view is None:
            self.pieces.append((a, b, "host_untraced", None))
            return
        cuts = [(a, b, False)]
        if leading:
            cuts = []
            lead = clip(leading, a, b)
            t = a
            for x, y in lead:
                if x > t:
                    cuts.append((t, x, False))
                cuts.append((x, y, True))
                t = y
            if t < b:
                cuts.append((t, b, False))
        for ca, cb, lead in cuts:
            for x, y, sl, i in view.pieces(ca, cb):
                cause = self.classify(view, x, y, sl, i, lead, a)
                self.pieces.append((x, y, cause, sl.name if sl is not None else None))

    def rule(self, sl):
        if sl is None:
            return None
        return rule_cause(sl, self.walk, self._rule_cache)

    def classify(self, view, x, y, sl, i, lead=False, gap_start=None):
        if lead and sl is not None:
            for s in sl.chain():
                if INPUT_PREP_RE.search(s.name) and not s.dispatches:
                    return "data_loading"
        r = self.rule(sl)
        if r is not None:
            return r
        base = sl
        if base is None or base.kind == "user":
            return "host_sync" if self._after_sync(view, x, i, gap_start) else "host_untraced"
        if base.kind == "runtime" or (base.kind == "op" and base.dispatches):
            return "launch_overhead" if view.stretch_gap(x, y) <= LAUNCH_STRETCH_MAX_GAP else "cpu_compute"
        return "cpu_compute"

    def _untraced_seg(self, view, j):
        sl = view.segs[j][2]
        if self.rule(sl) is not None:
            return False
        return sl is None or sl.kind == "user"

    def _after_flags(self, view):
        """Per segment: for an untraced segment, the synchronising call whose end starts the
        untraced run it is in (None when the run does not start at one)."""
        flags = self._after_cache.get(view.key)
        if flags is None:
            segs = view.segs
            flags = [None] * len(segs)
            carried = None
            for k in range(len(segs)):
                if k > 0 and segs[k - 1][1] != segs[k][0]:
                    carried = None
                if self._untraced_seg(view, k):
                    flags[k] = carried
                else:
                    carried = self._sync_call(segs[k][2])
            self._after_cache[view.key] = flags
        return flags

    def _sync_call(self, sl):
        """The (outermost) synchronising call of a segment charged host_sync by the rules."""
        if sl is None or self.rule(sl) != "host_sync":
            return None
        top = None
        for s in sl.chain():
            if s.fam == "sync":
                top = s
        return top

    def _after_sync(self, view, x, i, gap_start):
        """Right after a synchronising call: the untraced run starts where a synchronising call
        ended, and the idle gap began while that call waited (the CPU resumed to the empty
        queue it had waited for)."""
        flags = self._after_flags(view)
        if i >= 0:
            call = flags[i]
        else:
            j = bisect.bisect_right(view.seg_ends, x) - 1     # the segment ending at or before x
            if j < 0 or view.segs[j][1] != x:
                return False
            call = flags[j] if self._untraced_seg(view, j) else self._sync_call(view.segs[j][2])
        return call is not None and call.ts <= gap_start <= call.end

    # ---------------------------------------------------------- queries

    def idle_ns(self, causes=None, lo=None, hi=None):
        lo = self.win.start if lo is None else lo
        hi = self.win.end if hi is None else hi
        if causes is None:
            return total(clip([[a, b] for a, b in self.gaps], lo, hi))
        cs = set(causes)
        t = 0
        for x, y, c, _ in self.pieces:
            if c in cs:
                a, b = max(x, lo), min(y, hi)
                if b > a:
                    t += b - a
        return t

    def ranges(self, causes):
        cs = set(causes)
        return merge([[x, y] for x, y, c, _ in self.pieces if c in cs])

    def waited_ns(self, causes, name):
        cs = set(causes)
        return sum(y - x for x, y, c, n in self.pieces if c in cs and n == name)

    def waited_table(self, causes):
        cs = set(causes)
        out = Counter()
        for x, y, c, n in self.pieces:
            if c in cs and n is not None:
                out[n] += y - x
        return out


# ------------------------------------------------------------------ warm-up

class Warmup:
    def __init__(self, device, steps, start, end, whole_window, steady_start):
        self.device = device
        self.steps = steps              # warm-up step labels ([] without steps)
        self.start = start
        self.end = end                  # where the warm-up ends
        self.whole_window = whole_window
        self.steady_start = steady_start


def find_warmup(tr, win, dev, att):
    """docs/analysis.md "Warm-up", on the default window after the attribution."""
    if dev is None or att is None:
        return None
    tiles = win.tiles()
    busy = att.busy
    if tiles:
        alloc = [att.idle_ns(["allocator"], s, e) for _, s, e in tiles]
        last_alloc = alloc[-1]
        n = 0
        for i, (_, s, e) in enumerate(tiles):
            one = att.idle_ns(["setup", "jit"], s, e)
            if alloc[i] > 0 and last_alloc * 10 < alloc[i]:
                one += alloc[i]
            if e > s and one * 4 >= e - s:
                n += 1
            else:
                break
        if n == 0:
            return None
        rest = tiles[n:]
        steady = any(total(clip(busy, s, e)) > 0 for _, s, e in rest)
        labels = [lab for lab, _, _ in tiles[:n]]
        if steady:
            return Warmup(dev, labels, win.start, rest[0][1], False, rest[0][1])
        return Warmup(dev, labels, win.start, win.end, True, None)
    one = att.ranges(["setup", "jit", "allocator"])
    acc = 0
    best = None
    for s, e in one:
        acc += e - s
        if acc * 2 >= e - win.start:
            best = (e, acc)
    if best is None or best[1] * 20 < win.length:
        return None
    b = best[0]
    if (win.end - b) * 10 >= win.length:
        return Warmup(dev, [], win.start, b, False, b)
    return Warmup(dev, [], win.start, win.end, True, None)
