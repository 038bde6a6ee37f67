"""The real corpus (../shared/traces) told apart by content, never by name, as a user's file
would be: which files are Kineto/Chrome traces (JSON or gzip-compressed JSON whose top level
is an array of event objects or an object with a traceEvents array) and what every other file
is, and the one line stallscope-cli must give for each of those.

Used by check_expectations.py (trace_files(), and check_not_traces() on the rest). Python 3.11
standard library only; independent of Stallscope's own sniffing (importers/src/file_formats.cpp):
SQLite databases are opened read-only with Python's sqlite3, pickles are disassembled with
pickletools (never unpickled), JSON is read with the json module's decoder.
"""
import functools
import gzip
import io
import json
import os
import pickletools
import sqlite3
import subprocess
import tempfile
import urllib.parse
import zlib

KINETO = "kineto"

# What stallscope-cli's one line says about each kind of file that is not a trace: the
# words after "this is " (after "this is a gzip-compressed file holding " for gzip input).
WHAT = {
    "memory_snapshot": "a PyTorch CUDA allocator snapshot (a Python pickle from torch.cuda.memory._dump_snapshot)",
    "python_pickle": "a Python pickle",
    "memory_viz_html": "a torch.cuda._memory_viz HTML page",
    "stallscope_report": "a Stallscope HTML report",
    "html": "an HTML page",
    "memory_timeline": "a PyTorch memory timeline",
    "rocprofv3_json": "a rocprofv3 JSON (rocprofv3 --output-format json)",
    "nsight_sqlite": "an Nsight Systems SQLite export (nsys export --type sqlite)",
    "rpd_sqlite": "an RPD (rocmProfileData) SQLite profile",
    "sqlite": "an SQLite database",
}
SQLITE_MAGIC = b"SQLite format 3\x00"
HEAD = 64 * 1024


def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _head(path, gz):
    """The first bytes of the content (inflated for gzip; what inflates before an error)."""
    if not gz:
        with open(path, "rb") as f:
            return f.read(HEAD)
    out = b""
    try:
        with gzip.open(path, "rb") as f:
            while len(out) < HEAD:
                chunk = f.read(HEAD - len(out))
                if not chunk:
                    break
                out += chunk
    except (OSError, EOFError, zlib.error):
        pass
    return out


def _sqlite_tables(path, gz):
    def tables(db_path):
        uri = "file:" + urllib.parse.quote(os.path.abspath(db_path)) + "?mode=ro&immutable=1"
        con = sqlite3.connect(uri, uri=True)
        try:
            return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    try:
        if not gz:
            return tables(path)
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "inflated.sqlite")
            with gzip.open(path, "rb") as src, open(copy, "wb") as dst:
                dst.write(src.read())
            return tables(copy)
    except (sqlite3.Error, OSError, EOFError, zlib.error):
        return None


def _sqlite_kind(names):
    if names is None:
        return "sqlite"
    if any(n.startswith(("CUPTI_ACTIVITY_KIND_", "TARGET_INFO_")) for n in names) or \
            {"NVTX_EVENTS", "StringIds"} <= names:
        return "nsight_sqlite"
    if any(n.startswith("rocpd_") for n in names):
        return "rpd_sqlite"
    return "sqlite"


def _pickle_kind(head):
    """Disassembles the first opcodes (pickletools never builds objects)."""
    top, strings = None, []
    try:
        for op, arg, _ in pickletools.genops(io.BytesIO(head)):
            if op.name in ("PROTO", "FRAME", "MEMOIZE", "BINPUT", "LONG_BINPUT", "MARK"):
                continue
            if top is None:
                top = op.name
            if isinstance(arg, str) and ("UNICODE" in op.name or "STRING" in op.name):
                strings.append(arg)
            if len(strings) >= 2:
                break
    except (ValueError, EOFError):
        pass  # the head ends inside the pickle
    if top == "EMPTY_DICT" and strings[:1] in (["segments"], ["device_traces"]):
        return "memory_snapshot"
    if top == "EMPTY_LIST" and strings[:2] == ["device", "address"]:
        return "memory_snapshot"
    return "python_pickle"


def _html_kind(head):
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    lower = text[:20].lower()
    if not (lower.startswith(b"<!doctype html") or lower.startswith(b"<html")):
        return None
    if b"MemoryViz.js" in head[:4096]:
        return "memory_viz_html"
    if b'<meta name="generator" content="Stallscope">' in head[:4096]:
        return "stallscope_report"
    return "html"


def _json_kind(path, gz):
    """Reads the top level only as far as it decides (the event array is never decoded)."""
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error):
        return "other"
    dec = json.JSONDecoder()
    ws = " \t\r\n"

    def skip(i):
        while i < len(text) and text[i] in ws:
            i += 1
        return i
    i = skip(1 if text.startswith("\ufeff") else 0)
    try:
        if text.startswith("[", i):
            i = skip(i + 1)
            if text.startswith("]", i):
                return KINETO  # an empty event array
            first, _ = dec.raw_decode(text, i)
            if isinstance(first, dict):
                return KINETO
            return "memory_timeline" if isinstance(first, list) and first and \
                all(isinstance(v, (int, float, str)) for v in first) else "json_other"
        if not text.startswith("{", i):
            return "other"
        i = skip(i + 1)
        while i < len(text) and text[i] == '"':
            key, i = dec.raw_decode(text, i)
            i = skip(i)
            if not text.startswith(":", i):
                return "json_other"
            i = skip(i + 1)
            if key == "rocprofiler-sdk-tool":
                return "rocprofv3_json"
            if key == "traceEvents":
                return KINETO if text.startswith("[", i) else "json_other"
            _, i = dec.raw_decode(text, i)
            i = skip(i)
            if text.startswith(",", i):
                i = skip(i + 1)
        return "json_other"
    except ValueError:
        return "json_other"


def classify(path):
    """(kind, gzip) of one file: kind is KINETO or a key of WHAT, "json_other" (JSON that is
    none of these) or "other" (anything else)."""
    gz = _is_gzip(path)
    head = _head(path, gz)
    if head.startswith(SQLITE_MAGIC):
        return _sqlite_kind(_sqlite_tables(path, gz)), gz
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return _pickle_kind(head), gz
    html = _html_kind(head)
    if html:
        return html, gz
    if head.lstrip(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        return _json_kind(path, gz), gz
    return "other", gz


@functools.lru_cache(maxsize=None)
def classify_corpus(root):
    """{relative path: (kind, gzip)} for every regular file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            path = os.path.join(d, f)
            if os.path.isfile(path):
                out[os.path.relpath(path, root).replace(os.sep, "/")] = classify(path)
    return out


def kineto_traces(root):
    """The corpus' Kineto/Chrome traces, told apart by content."""
    return {rel for rel, (kind, _) in classify_corpus(root).items() if kind == KINETO}


def expected_line(kind, gz):
    """The start (or, for JSON that is none of the known kinds, a part) of the CLI's line."""
    if kind in WHAT:
        return ("this is a gzip-compressed file holding " if gz else "this is ") + WHAT[kind]
    if kind == "json_other":
        return "no \"traceEvents\" key"
    return "this is gzip-compressed data that is not a trace" if gz else "byte 0: not a trace Stallscope can read"


# Kinds that are not Kineto traces but are read, as memory (docs/analysis.md "Allocator
# snapshots", "Memory timelines"): `memory --json` must give a device with a peak.
READ_AS_MEMORY = {"memory_snapshot", "memory_viz_html", "memory_timeline"}


def _cli_json(cli, command, path, timeout):
    """(document, reasons): `cli COMMAND --json PATH`'s first entry, or why there is none."""
    try:
        p = subprocess.run([cli, command, "--json", path], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, [f"stallscope-cli {command} did not end within {timeout:.0f} s"]
    if p.returncode != 0:
        return None, [f"{command}: exit {p.returncode}: {p.stderr.strip()[:200]!r}"]
    return json.loads(p.stdout)[0], []


def check_read_as_memory(cli, path, timeout):
    """Reasons `cli memory --json PATH` does not give a device with an allocated peak."""
    doc, reasons = _cli_json(cli, "memory", path, timeout)
    if reasons:
        return reasons
    devices = doc["memory"]["devices"]
    if not devices or devices[0]["peak_allocated_bytes"] <= 0:
        return ["memory: no device with an allocated peak"]
    return []


# Other profilers' files, read as traces (docs/formats.md): `info --json` must give GPU work.
# Their counts are held to an independent reader by tests/tools/foreign_formats_check.py.
READ_AS_TRACE = {"nsight_sqlite", "rpd_sqlite", "rocprofv3_json"}


def check_read_as_trace(cli, path, timeout):
    """Reasons `cli info --json PATH` does not give a trace with GPU kernels."""
    doc, reasons = _cli_json(cli, "info", path, timeout)
    if reasons:
        return reasons
    return [] if doc["gpu"]["kernel"] > 0 else ["info: no GPU kernels"]


def check_not_traces(cli, root, only=None, timeout=120.0):
    """Runs `cli analyze FILE` on every corpus file that is not a trace: it must exit 1 with
    nothing on stdout and one line on stderr holding the line expected for its kind (the kinds
    read as memory instead: check_read_as_memory; other profilers' traces: check_read_as_trace). Prints
    PASS/FAIL per file; returns the number of failures."""
    failures = 0
    for rel, (kind, gz) in sorted(classify_corpus(root).items()):
        if kind == KINETO or (only is not None and only not in rel):
            continue
        if kind in READ_AS_MEMORY or kind in READ_AS_TRACE:
            memory = kind in READ_AS_MEMORY
            reasons = (check_read_as_memory if memory else check_read_as_trace)(
                cli, os.path.join(root, rel), timeout)
            failures += bool(reasons)
            print(f"FAIL {rel} [{kind}]: " + "; ".join(reasons) if reasons
                  else f"PASS {rel} [{kind}]: read as " + ("memory" if memory else "a trace"))
            continue
        want = expected_line(kind, gz)
        try:
            p = subprocess.run([cli, "analyze", os.path.join(root, rel)], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"FAIL {rel} [{kind}]: stallscope-cli did not end within {timeout:.0f} s")
            failures += 1
            continue
        lines = p.stderr.splitlines()
        reasons = []
        if p.returncode != 1:
            reasons.append(f"exit {p.returncode}, expected 1")
        if p.stdout.strip():
            reasons.append(f"output on stdout: {p.stdout.strip()[:200]!r}")
        if len(lines) != 1:
            reasons.append(f"{len(lines)} lines on stderr, expected 1")
        if want not in p.stderr:
            reasons.append(f"expected {want!r}")
        if reasons:
            failures += 1
            print(f"FAIL {rel} [{kind}]: " + "; ".join(reasons) + f"  -- stderr: {p.stderr.strip()[:400]!r}")
        else:
            print(f"PASS {rel} [{kind}]: {lines[0]}")
    return failures
