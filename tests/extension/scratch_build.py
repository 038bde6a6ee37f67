#!/usr/bin/env python3
"""Adds a detector, a file format, a report format, a CLI command and a GUI panel to a copy of
the tree, each as one file and one registration line, builds the copy and runs each of them.

The five files are tests/extension/tree/**; the five lines are tests/extension/registrations.txt
(each appended to its .def list). Nothing else of the copy is edited: the sources are globbed,
and the enum values, extern declarations and tables come from the .def lists. The copy builds
at the same depth as build/release, so ccache (cmake/StallscopeCompilerCache.cmake) serves
every file the extension does not change from the release build's objects.

usage: scratch_build.py SOURCE_DIR WORK_DIR [--jobs N]
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def tree_files(src):
    """The files of the checkout: git's list (tracked and new, not ignored) or, without git,
    everything but build folders."""
    try:
        out = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True).stdout
        return [Path(p) for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if d not in ("build", ".git")]
            files += [Path(root, n).relative_to(src) for n in names]
        return files


def copy_tree(src, dst):
    for rel in tree_files(src):
        if rel.parts[0] == "tests" and rel.parts[1:2] != ("CMakeLists.txt",) and \
                rel.parts[1:2] not in (("fuzz",), ("cmake",)):
            continue  # the tests are not built in the copy (STALLSCOPE_BUILD_TESTS=OFF)
        if not (src / rel).is_file():
            continue  # deleted in the working tree, not yet in git
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], text=True, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("work")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    src, work = Path(a.source).resolve(), Path(a.work).resolve()
    ext = src / "tests/extension"
    copy = work / "src"
    shutil.rmtree(work, ignore_errors=True)
    copy.mkdir(parents=True)
    t0 = time.monotonic()
    copy_tree(src, copy)

    # One file each ...
    added = []
    for f in sorted((ext / "tree").rglob("*")):
        if f.is_file():
            rel = f.relative_to(ext / "tree")
            if (copy / rel).exists():
                sys.exit(f"scratch_build: {rel} exists already; the extension must be new files")
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, copy / rel)
            added.append(rel)
    # ... and one line each.
    lines = 0
    for line in (ext / "registrations.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, entry = line.split("\t")
        with open(copy / path, "a") as out:
            out.write(entry + "\n")
        lines += 1
    if len(added) != 5 or lines != 5:
        sys.exit(f"scratch_build: expected 5 files and 5 lines, got {len(added)} and {lines}")

    build = copy / "build/release"  # the release preset's depth: ccache hits
    failures = []
    r = run(["cmake", "-G", "Ninja", "-S", copy, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG", "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG",
             "-DSTALLSCOPE_BUILD_TESTS=OFF", "-DSTALLSCOPE_BUILD_BENCH=OFF"])
    if r.returncode:
        sys.exit("configure failed:\n" + r.stdout[-4000:] + r.stderr[-4000:])
    r = run(["cmake", "--build", build, "-j", str(a.jobs), "--target", "stallscope-cli",
             "stallscope"])
    if r.returncode:
        sys.exit("build failed:\n" + r.stdout[-6000:] + r.stderr[-4000:])
    built = time.monotonic() - t0

    cli, gui = build / "app/stallscope-cli", build / "app/stallscope"
    sample = src / "resources/samples/synthetic_training.pt.trace.json.gz"
    tmp = work / "out"
    tmp.mkdir()

    def check(what, ok, detail=""):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failures.append(what + (": " + detail if detail else ""))

    # The command: dispatched, in --help and in the completion's list.
    r = run([cli, "scratch"])
    check("command runs", r.returncode == 0 and "the scratch command ran" in r.stdout, r.stderr)
    r = run([cli, "help", "--list", "commands"])
    check("command listed for completion", "scratch" in r.stdout.split(), r.stdout)
    r = run([cli, "--help"])
    check("command in --help", "a command added in a scratch build" in r.stdout)
    # The report format: by name, by extension, listed.
    r = run([cli, "help", "--list", "report-formats"])
    check("report format listed", "scratch" in r.stdout.split(), r.stdout)
    r = run([cli, "-q", "report", "-o", tmp / "r.scratch", sample])
    text = (tmp / "r.scratch").read_text() if (tmp / "r.scratch").exists() else ""
    check("report format written (by extension)", r.returncode == 0 and
          text.startswith("scratch report"), r.stderr)
    # The detector: its finding in the analysis, under its name.
    check("detector's finding in the report", "scratch_note" in text, text)
    r = run([cli, "-q", "analyze", "--json", sample])
    check("detector's finding in analyze --json", '"kind":"scratch_note"' in r.stdout.replace(" ", ""),
          r.stderr)
    # The file format: recognised by content (whatever the name).
    (tmp / "x.json").write_text("SCRATCH-TRACE\nwhatever\n")
    r = run([cli, "info", tmp / "x.json"])
    check("file format recognised", "this is a scratch trace (tests/extension)" in r.stderr + r.stdout,
          r.stderr)
    # The panel: a tab the window shows (--view KEY), listed among the views.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = run([gui, "--screenshot", tmp / "panel.png", "--size", "800x600", "--view", "scratch",
             sample], env=env)
    check("panel shown", r.returncode == 0 and (tmp / "panel.png").exists(), r.stderr[-2000:])
    r = run([gui, "--screenshot", tmp / "none.png", "--view", "no-such-view", sample], env=env)
    check("panel listed among the views", r.returncode != 0 and "scratch" in r.stderr, r.stderr)

    print(f"scratch_build: 5 files, 5 lines; copied, configured and built in {built:.0f} s; "
          f"{len(failures)} failures")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
