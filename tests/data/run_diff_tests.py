#!/usr/bin/env python3
"""Diff tests of what users see (as in Perfetto's diff tests): every small trace under
tests/data/traces/ goes through the real CLI, `stallscope-cli info --json` and
`stallscope-cli analyze --json`, and the output must equal tests/data/expected/<name>.info.json
and <name>.analyze.json. Needs nothing outside the repository (CI on a fresh clone).

  run_diff_tests.py --cli build/release/app/stallscope-cli            compare
  run_diff_tests.py --cli build/release/app/stallscope-cli --update   rewrite the expected files

Only what depends on the machine is left out: the import's time, speed and model size.
After --update, read the diff (git diff tests/data/expected) before committing it.
"""
import argparse
import difflib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VOLATILE_IMPORT_KEYS = ("seconds", "json_mb_per_s", "model_bytes", "bytes_per_event")


def normalise(kind, doc):
    if kind == "info":
        for entry in doc:
            for key in VOLATILE_IMPORT_KEYS:
                entry.get("import", {}).pop(key, None)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def run(cli, kind, trace):
    # Relative paths from tests/data: the outputs name the trace as "traces/<file>".
    p = subprocess.run([cli, kind, "--json", os.path.join("traces", trace)], cwd=HERE,
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 3):  # 3: analyze --fail-on; never asked here, but not a crash
        raise RuntimeError(f"{kind} {trace}: exit {p.returncode}\n{p.stderr}")
    return normalise(kind, json.loads(p.stdout))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    traces = sorted(f for f in os.listdir(os.path.join(HERE, "traces")) if f.endswith((".json", ".json.gz")))
    expected_dir = os.path.join(HERE, "expected")
    wanted = set()
    failures = 0
    for trace in traces:
        stem = trace[:-len(".json.gz")] if trace.endswith(".gz") else trace[:-len(".json")]
        for kind in ("info", "analyze"):
            name = f"{stem}.{kind}.json"
            wanted.add(name)
            path = os.path.join(expected_dir, name)
            got = run(cli, kind, trace)
            if args.update:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(got)
                continue
            if not os.path.exists(path):
                print(f"FAIL {name}: no expected output (run with --update, then read it)")
                failures += 1
                continue
            with open(path, encoding="utf-8") as f:
                want = f.read()
            if got != want:
                failures += 1
                diff = difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            f"expected/{name}", f"stallscope-cli {kind} --json traces/{trace}")
                print(f"FAIL {name}:")
                sys.stdout.writelines(list(diff)[:80])
            else:
                print(f"ok   {name}")
    stale = sorted(set(f for f in os.listdir(expected_dir) if f.endswith(".json")) - wanted)
    for name in stale:
        print(f"FAIL {name}: expected output of a trace that is not in traces/")
        failures += 1
    if failures:
        print(f"{failures} diff test(s) failed")
        return 1
    print(f"{len(wanted)} diff tests passed" if not args.update else f"{len(wanted)} expected files written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
