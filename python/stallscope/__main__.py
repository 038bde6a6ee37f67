"""python -m stallscope TRACE [--json] [--top N] [--fail-on RULES] [--window W]

Prints the findings of TRACE (titles, costs, fixes) from ``stallscope-cli analyze --json``.
Exit codes as the CLI's: 0 ok, 1 unreadable input or no CLI, 2 usage, 3 a --fail-on rule matched.
"""
import argparse
import json
import sys

from . import CliNotFound, StallscopeError, __version__, analyze


def main(argv=None):
    """The command line; returns the exit code."""
    ap = argparse.ArgumentParser(
        prog="python -m stallscope",
        description="Why the GPU sits idle: the findings of a PyTorch profiler / Kineto trace "
                    "(stallscope-cli analyze).")
    ap.add_argument("trace", help="a Kineto / Chrome-trace JSON file (plain or .gz) or a TensorBoard log folder")
    ap.add_argument("--json", action="store_true", help="print the CLI's JSON instead")
    ap.add_argument("--top", type=int, default=3, metavar="N", help="findings shown per trace (default 3; -1: all)")
    ap.add_argument("--fail-on", metavar="RULES", help="KIND[:MIN_PCT],...: exit 3 when a listed finding saves at least MIN_PCT of step time")
    ap.add_argument("--window", metavar="W", help="all, steps, hta or a step number")
    ap.add_argument("--version", action="version", version=f"stallscope (Python) {__version__}")
    a = ap.parse_args(argv)
    try:
        analysis = analyze(a.trace, window=a.window, fail_on=a.fail_on)
    except (StallscopeError, CliNotFound) as e:
        print(f"stallscope: {e}", file=sys.stderr)
        return 1
    if a.json:
        print(json.dumps(analysis.raw, indent=2))
    else:
        print(analysis.text(a.top))
    for line in analysis.gate_failures:
        print(line, file=sys.stderr)
    return 3 if analysis.gate_failed else 0


if __name__ == "__main__":
    sys.exit(main())
