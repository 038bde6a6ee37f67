"""Shared set-up of the tests of the Python package (python/stallscope).

Each test script takes --cli (stallscope-cli), --traces (../shared/traces) and --source (the
checkout); the environment (STALLSCOPE_CLI, STALLSCOPE_SHARED_TRACES, STALLSCOPE_SOURCE_DIR)
fills what is not given. The package is imported from the checkout's python/ folder. Exit
codes: 0 passed, 1 failed, 77 every test skipped (CTest's SKIP_RETURN_CODE).
"""
import argparse
import os
import pathlib
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
CLI = None
TRACES = None
DATA = SOURCE / "tests" / "data" / "traces"
# A small real trace (ResNet-50, num_workers=0, TensorBoard plugin's sample): 1.1 MB, < 1 s.
REAL_TRACE = "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"


def parse(extra=None):
    """Reads the options, puts python/ first on sys.path and STALLSCOPE_CLI in the environment;
    returns (options, the remaining argv for unittest)."""
    global CLI, TRACES, SOURCE, DATA
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--cli", default=os.environ.get("STALLSCOPE_CLI"))
    ap.add_argument("--traces", default=os.environ.get("STALLSCOPE_SHARED_TRACES"))
    ap.add_argument("--source", default=os.environ.get("STALLSCOPE_SOURCE_DIR", str(SOURCE)))
    for args, kwargs in extra or []:
        ap.add_argument(*args, **kwargs)
    opts, rest = ap.parse_known_args()
    SOURCE = pathlib.Path(opts.source).resolve()
    DATA = SOURCE / "tests" / "data" / "traces"
    if not opts.cli:
        default = SOURCE / "build" / "release" / "app" / "stallscope-cli"
        opts.cli = str(default) if default.is_file() else None
    if not opts.cli or not os.access(opts.cli, os.X_OK):
        print(f"FAIL: no stallscope-cli (--cli or STALLSCOPE_CLI; got {opts.cli!r})")
        sys.exit(1)
    CLI = str(pathlib.Path(opts.cli).resolve())
    os.environ["STALLSCOPE_CLI"] = CLI
    TRACES = pathlib.Path(opts.traces) if opts.traces and pathlib.Path(opts.traces).is_dir() else None
    sys.dont_write_bytecode = True  # no __pycache__ in the checkout's python/
    sys.path.insert(0, str(SOURCE / "python"))
    return opts, rest


def real_trace():
    """The small real trace, or None without ../shared/traces."""
    if TRACES is None or not (TRACES / REAL_TRACE).is_file():
        return None
    return TRACES / REAL_TRACE


def package_env(**extra):
    """An environment in which `python -m stallscope` imports the checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SOURCE / "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def squash(text):
    """Whitespace folded to single spaces (the printed text is wrapped)."""
    return " ".join(str(text).split())


def main(argv):
    """Runs the TestCases of __main__; exit 77 when every test was skipped."""
    prog = unittest.main(argv=[sys.argv[0], *argv], exit=False, verbosity=2)
    r = prog.result
    if not r.wasSuccessful():
        sys.exit(1)
    if r.testsRun and len(r.skipped) == r.testsRun:
        print("SKIP: every test was skipped: " + "; ".join(sorted({why for _, why in r.skipped})))
        sys.exit(77)
    sys.exit(0)
