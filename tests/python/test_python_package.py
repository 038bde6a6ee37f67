#!/usr/bin/env python3
"""The Python package python/stallscope against the built CLI (no torch needed).

    test_python_package.py [--cli STALLSCOPE_CLI] [--traces SHARED_TRACES] [--source CHECKOUT]

Checks: find_cli through STALLSCOPE_CLI, beside the package (a parent's bin/, as in the
Debian package) and its message when there is none (PATH empty); analyze() equals the CLI's
own `analyze --json` on a hand-made trace and on a small real one; report() writes HTML;
_repr_html_ is the report in an <iframe srcdoc> holding the finding titles; `python -m
stallscope` prints each finding's title, saving_pct and fix, says when there are no
findings, --json is the CLI's JSON, --fail-on exits 3; the on_trace_ready handler without
torch (a stand-in profiler): file name as tensorboard_trace_handler, gzip, fail_on
raise / warn / no match; unreadable input raises StallscopeError with the CLI's message;
open() starts the GUI detached, and says to install it when there is none.
"""
import contextlib
import gzip
import html
import html.parser
import io
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import common  # noqa: E402

OPTS, REST = common.parse()
import stallscope  # noqa: E402  (from the checkout's python/)

DATALOADER = common.DATA / "dataloader_stall.json"  # one finding: data_loading/gpu0, 73.171 %
MHA = common.DATA / "mha_attention_weights.json"    # two findings: cpu_dispatch, unfused_attention
MANY = common.DATA / "stream_wait_graph.json"        # four findings (the top-3 cut shows)


def cli_json(path, *args):
    r = subprocess.run([common.CLI, "-q", "analyze", "--json", *args, str(path)],
                       capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout) if r.stdout.strip() else None, r.stderr


def run_module(*args, **env):
    return subprocess.run([sys.executable, "-m", "stallscope", *map(str, args)], capture_output=True,
                          text=True, env=common.package_env(**env), timeout=120)


def busy_trace(path):
    """Two steps, each filled by one GPU kernel: no findings."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}}]
    for i in (1, 2):
        ts = 1000 * i
        ev += [{"ph": "X", "name": f"ProfilerStep#{i}", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": ts, "dur": 1000},
               {"ph": "X", "name": "cudaLaunchKernel", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": ts + 1, "dur": 5,
                "args": {"correlation": i}},
               {"ph": "X", "name": "gemm", "cat": "kernel", "pid": 0, "tid": 7, "ts": ts, "dur": 1000,
                "args": {"correlation": i, "device": 0, "stream": 7}}]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


class FakeProfiler:
    """What on_trace_ready needs of a profiler: export_chrome_trace(path)."""

    def __init__(self, source):
        self.source = source
        self.exported = []

    def export_chrome_trace(self, path):
        self.exported.append(path)
        shutil.copyfile(self.source, path)


class SrcdocParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.frames = []

    def handle_starttag(self, tag, attrs):
        if tag == "iframe":
            self.frames.append(dict(attrs))


class FindCli(unittest.TestCase):
    def test_env(self):
        self.assertEqual(stallscope.find_cli(), common.CLI)
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "nope")
            old = os.environ["STALLSCOPE_CLI"]
            os.environ["STALLSCOPE_CLI"] = missing
            try:
                with self.assertRaises(stallscope.CliNotFound) as cm:
                    stallscope.analyze(DATALOADER)
            finally:
                os.environ["STALLSCOPE_CLI"] = old
            self.assertIn(missing, str(cm.exception))
            self.assertIsInstance(cm.exception, RuntimeError)

    def probe(self, pkg_parent, bin_dir=None):
        """find_cli() in a copy of the package under pkg_parent, PATH empty, no STALLSCOPE_CLI."""
        code = ("import json, stallscope\n"
                "try:\n    print(json.dumps(['found', stallscope.find_cli()]))\n"
                "except stallscope.CliNotFound as e:\n"
                "    print(json.dumps(['missing', str(e), isinstance(e, RuntimeError)]))\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("STALLSCOPE_")}
        env.update(PATH=bin_dir or "", PYTHONPATH=str(pkg_parent), PYTHONDONTWRITEBYTECODE="1")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_missing_and_beside_the_package(self):
        with tempfile.TemporaryDirectory() as tmp:
            # The Debian package's layout: usr/lib/python3/dist-packages/stallscope, usr/bin.
            site = pathlib.Path(tmp, "usr", "lib", "python3", "dist-packages")
            shutil.copytree(common.SOURCE / "python" / "stallscope", site / "stallscope",
                            ignore=shutil.ignore_patterns("__pycache__"))
            kind, message, is_runtime_error = self.probe(site)
            self.assertEqual(kind, "missing")
            self.assertTrue(is_runtime_error)
            for hint in ("sudo apt install ./stallscope-cli_", "./scripts/run.sh",
                         "cmake --preset release && cmake --build build/release", "STALLSCOPE_CLI"):
                self.assertIn(hint, message)
            # On PATH.
            path_bin = pathlib.Path(tmp, "elsewhere")
            path_bin.mkdir()
            os.symlink(common.CLI, path_bin / "stallscope-cli")
            self.assertEqual(self.probe(site, str(path_bin)), ["found", str(path_bin / "stallscope-cli")])
            # Beside the package comes before PATH.
            usr_bin = pathlib.Path(tmp, "usr", "bin")
            usr_bin.mkdir()
            os.symlink(common.CLI, usr_bin / "stallscope-cli")
            self.assertEqual(self.probe(site, str(path_bin)), ["found", str(usr_bin / "stallscope-cli")])


class Analyze(unittest.TestCase):
    def check_equals_cli(self, path):
        rc, expected, _ = cli_json(path)
        self.assertEqual(rc, 0)
        a = stallscope.analyze(path)
        self.assertIsInstance(a, dict)
        self.assertEqual(len(expected), 1)
        self.assertEqual(dict(a), expected[0])
        self.assertEqual(a.raw, expected)
        self.assertEqual(a["schema"], "stallscope.analysis/1")
        for key in ("window", "steps", "devices", "idle_causes", "findings", "stats"):
            self.assertIn(key, a)
        self.assertEqual(a.findings, expected[0]["findings"])
        self.assertEqual(a["findings"], expected[0]["findings"])
        self.assertFalse(a.gate_failed)
        return a

    def test_hand_made(self):
        a = self.check_equals_cli(DATALOADER)
        self.assertEqual([f["id"] for f in a.findings], ["data_loading/gpu0"])

    def test_real(self):
        trace = common.real_trace()
        if trace is None:
            self.skipTest(f"no shared traces ({common.REAL_TRACE})")
        a = self.check_equals_cli(trace)
        self.assertIn("data_loading", [f["kind"] for f in a.findings])

    def test_window(self):
        rc, expected, _ = cli_json(DATALOADER, "--window", "all")
        self.assertEqual(dict(stallscope.analyze(DATALOADER, window="all")), expected[0])
        self.assertEqual(expected[0]["window"]["kind"], "all")

    def test_fail_on(self):
        a = stallscope.analyze(DATALOADER, fail_on="data_loading:5")
        rc, expected, stderr = cli_json(DATALOADER, "--fail-on", "data_loading:5")
        self.assertEqual(rc, 3)
        self.assertEqual(dict(a), expected[0])
        self.assertEqual(a.gate_failures, [line for line in stderr.splitlines() if line.strip()])
        self.assertIn("data_loading/gpu0", a.gate_failures[0])
        self.assertFalse(stallscope.analyze(DATALOADER, fail_on=["host_sync", "data_loading:80"]).gate_failed)
        self.assertTrue(stallscope.analyze(DATALOADER, fail_on=["host_sync", "data_loading:70"]).gate_failed)

    def test_bad_input(self):
        for path in ("/nonexistent/x.pt.trace.json", common.SOURCE / "README.md"):
            rc, _, stderr = cli_json(path)
            self.assertEqual(rc, 1)
            with self.assertRaises(stallscope.StallscopeError) as cm:
                stallscope.analyze(path)
            self.assertEqual(str(cm.exception), stderr.strip())
            self.assertEqual(cm.exception.returncode, 1)
        self.assertIn("no such file or folder", str(stallscope_error("/nonexistent/x.pt.trace.json")))
        self.assertIn("not a trace Stallscope can read", str(stallscope_error(common.SOURCE / "README.md")))


def stallscope_error(path):
    try:
        stallscope.analyze(path)
    except stallscope.StallscopeError as e:
        return e
    raise AssertionError(f"{path}: no StallscopeError")


class Reports(unittest.TestCase):
    def test_report_html_and_md(self):
        a = stallscope.analyze(MHA)
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "r.html")
            self.assertEqual(stallscope.report(MHA, out), out)
            text = out.read_text(encoding="utf-8")
            self.assertTrue(text.startswith("<!DOCTYPE html>"))
            for f in a.findings:
                self.assertIn(html.escape(f["title"], quote=False), text)
            md = pathlib.Path(tmp, "r.txt")
            stallscope.report(MHA, md, format="md")
            self.assertIn(a.findings[0]["title"], md.read_text(encoding="utf-8"))
            with self.assertRaises(stallscope.StallscopeError):
                stallscope.report("/nonexistent.json", pathlib.Path(tmp, "x.html"))

    def test_repr_html(self):
        a = stallscope.analyze(MHA)
        r = a._repr_html_()
        self.assertTrue(r.startswith("<iframe"))
        p = SrcdocParser()
        p.feed(r)
        self.assertEqual(len(p.frames), 1)
        doc = p.frames[0]["srcdoc"]
        self.assertEqual(doc, a.html())
        self.assertTrue(doc.startswith("<!DOCTYPE html>"))
        for f in a.findings:
            self.assertIn(html.escape(f["title"], quote=False), doc)


class Module(unittest.TestCase):
    def check_printed(self, out, findings):
        text = common.squash(out)
        for f in findings:
            self.assertIn(common.squash(f["title"]), text)
            self.assertIn(common.squash(f["fix"]), text)
            self.assertIn(f"{f['saving_pct']}%" if f.get("replay_fix") else f["id"], text)

    def test_prints_findings(self):
        a = stallscope.analyze(MANY)
        self.assertEqual(len(a.findings), 4)
        r = run_module(MANY)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_printed(r.stdout, a.findings[:3])
        self.assertNotIn(common.squash(a.findings[3]["title"]), common.squash(r.stdout))
        self.assertIn("(1 more finding)", r.stdout)
        r = run_module(MANY, "--top", "-1")
        self.check_printed(r.stdout, a.findings)
        r = run_module(MHA)
        self.check_printed(r.stdout, stallscope.analyze(MHA).findings)
        self.assertIn("saves 1.188 ms (39.6% of step time)", r.stdout)  # saving_ns 1188000, saving_pct 39.6

    def test_real(self):
        trace = common.real_trace()
        if trace is None:
            self.skipTest(f"no shared traces ({common.REAL_TRACE})")
        r = run_module(trace, "--top", "10")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_printed(r.stdout, stallscope.analyze(trace).findings)

    def test_no_findings(self):
        with tempfile.TemporaryDirectory() as tmp:
            trace = busy_trace(pathlib.Path(tmp, "busy.json"))
            self.assertEqual(stallscope.analyze(trace).findings, [])
            r = run_module(trace)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("no findings", r.stdout)

    def test_json(self):
        r = run_module(DATALOADER, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), cli_json(DATALOADER)[1])

    def test_exit_codes(self):
        r = run_module(DATALOADER, "--fail-on", "data_loading:5")
        self.assertEqual(r.returncode, 3)
        self.assertIn("fail-on data_loading: data_loading/gpu0 saves 73.2% of step time", r.stderr)
        self.check_printed(r.stdout, stallscope.analyze(DATALOADER).findings)
        self.assertEqual(run_module(DATALOADER, "--fail-on", "host_sync").returncode, 0)
        r = run_module("/nonexistent.json")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no such file or folder", r.stderr)
        self.assertEqual(run_module().returncode, 2)


class Handler(unittest.TestCase):
    def test_writes_like_tensorboard_trace_handler(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = pathlib.Path(tmp, "log", "run")
            out = io.StringIO()
            handler = stallscope.on_trace_ready(log, file=out)
            prof = FakeProfiler(DATALOADER)
            analysis = handler(prof)
            name = pathlib.Path(handler.last_trace).name
            worker = f"{socket.gethostname()}_{os.getpid()}"
            # Without torch: the name current torch's tensorboard_trace_handler writes
            # ({worker}.{time.time_ns()}.pt.trace.json).
            self.assertRegex(name, "^" + re.escape(worker) + r"\.\d{19}\.pt\.trace\.json$")
            self.assertEqual(pathlib.Path(handler.last_trace).parent, log)
            self.assertEqual(prof.exported, [handler.last_trace])
            self.assertIs(handler.last_analysis, analysis)
            self.assertEqual(handler.last_analysis, stallscope.analyze(handler.last_trace))
            self.check_printed(out.getvalue(), analysis.findings)

            gz = stallscope.on_trace_ready(log, worker_name="w0", use_gzip=True, file=io.StringIO())
            gz(FakeProfiler(DATALOADER))
            self.assertRegex(pathlib.Path(gz.last_trace).name, r"^w0\.\d{19}\.pt\.trace\.json\.gz$")
            with gzip.open(gz.last_trace, "rb") as f:
                self.assertEqual(f.read(), DATALOADER.read_bytes())
            self.assertEqual(dict(gz.last_analysis["findings"][0]), analysis["findings"][0])
            self.assertEqual(sorted(os.listdir(log)), sorted([name, pathlib.Path(gz.last_trace).name]))

    def check_printed(self, out, findings):
        Module.check_printed(self, out, findings)

    def test_fail_on(self):
        with tempfile.TemporaryDirectory() as tmp:
            h = stallscope.on_trace_ready(tmp, fail_on="data_loading:5", file=io.StringIO())
            with self.assertRaises(stallscope.GateFailed) as cm:
                h(FakeProfiler(DATALOADER))
            self.assertIsInstance(cm.exception, stallscope.StallscopeError)
            self.assertIn("fail-on data_loading: data_loading/gpu0 saves 73.2%", str(cm.exception))
            self.assertEqual(cm.exception.analysis, h.last_analysis)
            self.assertIn("GPU idle while the input pipeline prepares batches", h.file.getvalue())

            h = stallscope.on_trace_ready(tmp, fail_on=["host_sync", "data_loading"], on_fail="warn",
                                          file=io.StringIO())
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                h(FakeProfiler(DATALOADER))
            self.assertEqual(len(caught), 1)
            self.assertIn("data_loading/gpu0", str(caught[0].message))

            # Kinds the trace does not have, or a threshold above the saving: no failure.
            for rules in ("host_sync,no_tensor_cores", "data_loading:80"):
                h = stallscope.on_trace_ready(tmp, fail_on=rules, file=io.StringIO())
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    h(FakeProfiler(DATALOADER))
                self.assertEqual(h.last_analysis.gate_failures, [])
            with self.assertRaises(ValueError):
                stallscope.on_trace_ready(tmp, on_fail="ignore")

    def test_prints_to_stdout(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = io.StringIO()
            h = stallscope.on_trace_ready(tmp)
            with contextlib.redirect_stdout(out):
                h(FakeProfiler(MHA))
            self.assertIn(h.last_analysis.findings[0]["title"], out.getvalue())


class Gui(unittest.TestCase):
    def test_open(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = pathlib.Path(tmp, "stallscope")
            seen = pathlib.Path(tmp, "argv")
            fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {seen}.part && mv {seen}.part {seen}\n")
            fake.chmod(0o755)
            old = os.environ.get("STALLSCOPE_GUI")
            os.environ["STALLSCOPE_GUI"] = str(fake)
            try:
                proc = stallscope.open(DATALOADER)
                self.assertEqual(proc.wait(timeout=30), 0)
                self.assertEqual(seen.read_text().splitlines(), [str(DATALOADER)])
                os.environ["STALLSCOPE_GUI"] = str(pathlib.Path(tmp, "missing"))
                with self.assertRaises(stallscope.CliNotFound) as cm:
                    stallscope.open(DATALOADER)
                self.assertIn("install the stallscope package", str(cm.exception))
            finally:
                if old is None:
                    os.environ.pop("STALLSCOPE_GUI", None)
                else:
                    os.environ["STALLSCOPE_GUI"] = old


class Package(unittest.TestCase):
    def test_surface(self):
        for name in stallscope.__all__:
            self.assertTrue(hasattr(stallscope, name), name)
        text = (common.SOURCE / "CMakeLists.txt").read_text()
        self.assertEqual(stallscope.__version__, re.search(r"project\(Stallscope VERSION ([0-9.]+)", text).group(1))
        self.assertTrue(issubclass(stallscope.GateFailed, stallscope.StallscopeError))
        self.assertTrue(issubclass(stallscope.CliNotFound, RuntimeError))


if __name__ == "__main__":
    common.main(REST)
