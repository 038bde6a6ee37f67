"""on_trace_ready: write the trace as torch's tensorboard_trace_handler does, then analyse it."""
import gzip
import os
import shutil
import socket
import sys
import tempfile
import time
import warnings

from ._cli import StallscopeError


class GateFailed(StallscopeError):
    """A ``fail_on`` rule matched: a listed finding saves at least its share of step time.

    ``str(error)`` is the CLI's line per matched rule (the rule, the finding's id, its
    saving, the threshold and the trace); ``analysis`` is the :class:`Analysis`.
    """

    def __init__(self, message, analysis=None):
        super().__init__(message, 3, message)
        self.analysis = analysis


class _Exporter:
    """Stands in for the profiler in torch's own handler: notes the path torch chose and
    writes the trace there (gzip as torch's ``export_chrome_trace`` does for ``.gz``, which
    the legacy ``torch.autograd.profiler.profile`` does not do itself)."""

    def __init__(self, prof):
        self._prof = prof
        self.path = None

    def export_chrome_trace(self, path):
        self.path = path
        if not path.endswith(".gz"):
            return self._prof.export_chrome_trace(path)
        fd, plain = tempfile.mkstemp(suffix=".json", dir=os.path.dirname(path) or None)
        os.close(fd)
        try:
            result = self._prof.export_chrome_trace(plain)
            with open(plain, "rb") as fin, gzip.open(path, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        finally:
            os.remove(plain)
        return result

    def __getattr__(self, name):
        return getattr(self._prof, name)


def _torch_handler(dir_name, worker_name, use_gzip):
    """torch.profiler.tensorboard_trace_handler when torch is already imported, so the file
    is named exactly as the installed torch names it ({worker}.{ms}.pt.trace.json up to
    torch 2.0, {worker}.{ns}... since); None without torch."""
    profiler = sys.modules.get("torch.profiler")
    make = getattr(profiler, "tensorboard_trace_handler", None)
    return make(dir_name, worker_name, use_gzip) if make else None


def _own_handler(dir_name, worker_name, use_gzip):
    """The same as current torch's tensorboard_trace_handler, for use without torch."""
    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name = file_name + ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class TraceHandler:
    """The callable :func:`on_trace_ready` returns; torch calls it with the profiler.

    After each call: ``last_trace`` is the path of the trace it wrote, ``last_analysis``
    its :class:`Analysis`, ``traces`` every path written so far.
    """

    def __init__(self, dir_name, fail_on=None, worker_name=None, use_gzip=False, top=3,
                 on_fail="raise", file=None, window=None):
        if on_fail not in ("raise", "warn"):
            raise ValueError(f"on_fail must be 'raise' or 'warn', not {on_fail!r}")
        self.dir_name = os.fspath(dir_name)
        self.fail_on = fail_on
        self.top = top
        self.on_fail = on_fail
        self.file = file
        self.window = window
        self.last_trace = None
        self.last_analysis = None
        self.traces = []
        self._write = (_torch_handler(self.dir_name, worker_name, use_gzip)
                       or _own_handler(self.dir_name, worker_name, use_gzip))

    def __call__(self, prof):
        from . import analyze
        exporter = _Exporter(prof)
        self._write(exporter)
        self.last_trace = exporter.path
        self.traces.append(exporter.path)
        self.last_analysis = None
        analysis = analyze(exporter.path, window=self.window, fail_on=self.fail_on)
        self.last_analysis = analysis
        out = self.file if self.file is not None else sys.stdout
        print(analysis.text(self.top), file=out, flush=True)
        if analysis.gate_failures:
            message = "\n".join(analysis.gate_failures)
            if self.on_fail == "raise":
                raise GateFailed(message, analysis)
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        return analysis


def on_trace_ready(dir_name, fail_on=None, worker_name=None, use_gzip=False, top=3,
                   on_fail="raise", file=None, window=None):
    """A handler for ``torch.profiler.profile(on_trace_ready=...)``.

    Each call writes the trace as ``torch.profiler.tensorboard_trace_handler(dir_name,
    worker_name, use_gzip)`` does (``dir_name/{worker_name}.{time}.pt.trace.json[.gz]``,
    worker_name ``{hostname}_{pid}`` by default), analyses it and prints the ``top``
    findings (title, cost, fix) to ``file`` (sys.stdout by default). ``fail_on`` takes the
    CLI's ``KIND[:MIN_PCT],...`` rules (a string or a list); when one matches,
    ``on_fail="raise"`` raises :class:`GateFailed` and ``"warn"`` calls ``warnings.warn``.
    Any object with ``export_chrome_trace(path)`` works, e.g. the legacy
    ``torch.autograd.profiler.profile`` (call the handler after its ``with`` block).
    """
    return TraceHandler(dir_name, fail_on, worker_name, use_gzip, top, on_fail, file, window)
