"""Stallscope from Python: why the GPU sits idle, from PyTorch profiler / Kineto traces.

A standard-library wrapper around the ``stallscope-cli`` program (which does the work)::

    import stallscope
    a = stallscope.analyze("run.pt.trace.json.gz")
    for f in a.findings:
        print(f["title"], f["saving_pct"], f["fix"])
    stallscope.report("run.pt.trace.json.gz", "run.html")

    with torch.profiler.profile(on_trace_ready=stallscope.on_trace_ready("./log")) as prof:
        ...

In Jupyter an :class:`Analysis` renders as the HTML report. ``python -m stallscope TRACE``
prints the findings. docs/python.md is the reference.
"""
import builtins
import html as _html
import json
import os
import subprocess
import tempfile

from ._cli import CliNotFound, StallscopeError, find_cli, find_gui, run_cli
from ._profiler import GateFailed, TraceHandler, on_trace_ready
from ._text import format_analysis

__version__ = "0.1.0"

__all__ = [
    "Analysis", "CliNotFound", "GateFailed", "StallscopeError", "TraceHandler", "__version__",
    "analyze", "find_cli", "find_gui", "on_trace_ready", "open", "report",
]

for _cls in (CliNotFound, StallscopeError, GateFailed, TraceHandler):
    _cls.__module__ = __name__  # stallscope.CliNotFound in tracebacks, not stallscope._cli
del _cls

# The height of the report's frame in a notebook (it scrolls inside).
NOTEBOOK_FRAME_HEIGHT = 640


class Analysis(dict):
    """The analysis of one trace: exactly the object ``stallscope-cli analyze --json`` prints.

    ``analyze --json`` prints an array with one object per trace; for one trace the
    Analysis is that object (``a["findings"]``, ``a["devices"]``, ``a["window"]`` ...; the
    schema is docs/analysis-json.md). For several ranks or captures the CLI prints an object
    (``"ranks"``, ``"captures"``, ``"traces"``) and the Analysis is that object.

    Attributes besides the keys: ``path`` and ``window`` (what was analysed), ``raw`` (the
    parsed JSON as printed), ``gate_failures`` (the CLI's lines for each matched
    ``fail_on`` rule; empty when none matched).
    """

    def __init__(self, data, path=None, window=None, raw=None, gate_failures=()):
        super().__init__(data)
        self.path = path
        self.window = window
        self.raw = data if raw is None else raw
        self.gate_failures = list(gate_failures)
        self._html = None

    @property
    def traces(self):
        """The per-trace analyses: ``[self]`` for one trace, else ``self["traces"]``."""
        if "traces" in self and "findings" not in self:
            return list(self["traces"])
        return [self]

    @property
    def findings(self):
        """The findings, largest saving first (of every trace when there are several)."""
        return [f for t in self.traces for f in (t.get("findings") or [])]

    @property
    def gate_failed(self):
        """True when a ``fail_on`` rule matched (the CLI exited 3)."""
        return bool(self.gate_failures)

    def text(self, top=3):
        """The compact text ``python -m stallscope`` prints: titles, costs and fixes."""
        return format_analysis(self.traces, top)

    def html(self):
        """The self-contained HTML report of the same trace (a whole document), as text."""
        if self._html is None:
            if self.path is None:
                raise StallscopeError("this Analysis has no trace path to report on")
            with tempfile.TemporaryDirectory(prefix="stallscope-") as tmp:
                out = os.path.join(tmp, "report.html")
                report(self.path, out, format="html", window=self.window)
                with builtins.open(out, encoding="utf-8") as f:
                    self._html = f.read()
        return self._html

    def _repr_html_(self):
        """The report for Jupyter: the whole document in an ``<iframe srcdoc>``.

        The report is a full page whose stylesheet styles ``body``, ``h1``, ``table``...;
        Jupyter inserts HTML output into a ``<div>`` of the notebook page, where that
        stylesheet would restyle the whole notebook. In a frame it keeps to itself and the
        report's own Content-Security-Policy still applies.
        """
        return ('<iframe class="stallscope-report" title="Stallscope report" '
                f'style="box-sizing:border-box;width:100%;height:{NOTEBOOK_FRAME_HEIGHT}px;border:1px solid #d8dee4" '
                f'srcdoc="{_html.escape(self.html(), quote=True)}"></iframe>')

    def __repr__(self):
        return f"<stallscope.Analysis of {self.path!r}: {len(self.findings)} findings>"



def analyze(path, window=None, fail_on=None):
    """Analyses a trace with ``stallscope-cli analyze --json`` and returns an :class:`Analysis`.

    ``path``: a Kineto / Chrome-trace JSON file (plain or .gz), a TensorBoard log folder.
    ``window``: ``all``, ``steps``, ``hta`` or a step number (the CLI's ``--window``).
    ``fail_on``: the CLI's ``KIND[:MIN_PCT],...`` rules, a string or a list of strings;
    a matched rule does not raise here: its lines are in ``Analysis.gate_failures``.
    Raises :class:`StallscopeError` (the CLI's message) when the trace cannot be read, and
    :class:`CliNotFound` without a CLI.
    """
    path = os.fspath(path)
    args = ["analyze", "--json"]
    if window is not None:
        args += ["--window", str(window)]
    rules = _rules(fail_on)
    if rules:
        args += ["--fail-on", rules]
    r = run_cli(args + [_operand(path)], ok=(0, 3))
    try:
        raw = json.loads(r.stdout)
    except ValueError as e:
        raise StallscopeError(f"stallscope-cli printed no JSON ({e}): {r.stderr.strip()}",
                              r.returncode, r.stderr) from None
    gate = [line for line in r.stderr.splitlines() if line.strip()] if r.returncode == 3 else []
    if isinstance(raw, list):
        data = raw[0] if len(raw) == 1 else {"traces": raw}
    else:
        data = raw
    return Analysis(data, path=path, window=window, raw=raw, gate_failures=gate)


def _operand(path):
    """A path the CLI cannot take for an option ("-" alone is standard input)."""
    return "./" + path if path.startswith("-") and path != "-" else path


def _rules(fail_on):
    if not fail_on:
        return ""
    if isinstance(fail_on, str):
        return fail_on
    return ",".join(str(r) for r in fail_on)


def report(path, out, format=None, window=None):
    """Writes a report of ``path`` to ``out`` with ``stallscope-cli report``; returns ``out``.

    ``format``: ``html``, ``md``, ``json``, ``pdf`` or ``trace``; by default the CLI takes
    it from ``out``'s extension (``.html``, ``.md``, ``.json``, ``.pdf``,
    ``.trace.json[.gz]``). Raises :class:`StallscopeError` with the CLI's message.
    """
    args = ["report", "-o", os.fspath(out)]
    if format:
        args += ["--format", format]
    if window is not None:
        args += ["--window", str(window)]
    run_cli(args + [_operand(os.fspath(path))])
    return out


def open(path):  # noqa: A001 - the package's verb, as in stallscope.open(trace)
    """Opens ``path`` in the Stallscope GUI, detached; returns its ``subprocess.Popen``.

    The GUI is found like the CLI: ``STALLSCOPE_GUI``, beside the package, ``PATH``;
    without it :class:`CliNotFound` says to install the stallscope package.
    """
    gui = find_gui()
    return subprocess.Popen([gui, os.fspath(path)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)
