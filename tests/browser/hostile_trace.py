"""Kineto traces whose every string is hostile, for the browser test of the HTML report.

The trace is an ordinary training loop that the analysis explains (a DataLoader stall, a
host sync, kernels, copies), so the hostile names reach the report's headings, tables,
prose, timeline picture and idle-cause picture. Invalid UTF-8 is written as raw bytes
(lone surrogates in the Python strings, encoded with surrogateescape).
"""
import json
import os

# Markup, script and URL payloads, each as it would be written by an attacker.
IMG = "<img src=x onerror=alert(1)>"
SVG = "'><svg onload=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
END_SCRIPT = "</script><script>alert(2)</script>"
ATTR = "\" onmouseover=\"alert(1)"
JS_URL = "javascript:alert(1)"
LINK = "<a href=\"javascript:alert(1)\">x</a>"
STYLE = "</style><style>body{background:url(http://example.com/x)}</style>"
CSS_URL = "url(http://example.com/x)"
IMPORT = "@import url(http://example.com/y.css);"
IFRAME = "<iframe src=\"http://example.com/\"></iframe>"
META = "<meta http-equiv=\"refresh\" content=\"0;url=http://example.com/\">"
BASE = "<base href=\"http://example.com/\">"
USE = "<svg><use href=\"http://example.com/s.svg#a\"/></svg>"
ENTITY = "&lt;b&gt; &amp;amp; &#60;i&#62;"
COMMENT = "<!-- <![CDATA[ ]]> -->"
BIDI = "abc\u202Edcba\u202Dxyz"            # right-to-left override left open
LINES = "line\u2028separator\u2029para"
INVALID = "bad\udcff\udcfe \udcc3( \udce2\udc82 \udcc0\udcaf \udced\udca0\udc80 end"  # raw bytes
CONTROLS = "ctl\u0000\u0001\u001b[31m\u007f\u0085end"

PAYLOADS = [IMG, SVG, SCRIPT, END_SCRIPT, ATTR, JS_URL, LINK, STYLE, CSS_URL, IMPORT, IFRAME, META,
            BASE, USE, ENTITY, COMMENT, BIDI, LINES, INVALID, CONTROLS]
ALL = " ".join(PAYLOADS)
LONG = ("<b>long " + IMG + " " + JS_URL + "</b> ") * 200  # > 10 kB
assert len(LONG.encode()) > 10_000

# Strings that must be on the rendered page as text (escaped, not parsed).
VISIBLE = [IMG, SVG, SCRIPT, END_SCRIPT, ATTR, LINK, STYLE, IFRAME, ENTITY]


def _kernel(name, ts, dur, corr, stream=7):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "stream": stream, "device": 0, "External id": corr,
                     "grid": [1, 1, 1], "block": [128, 1, 1], "blocks per SM": 0.5,
                     "est. achieved occupancy %": 12, "kernel " + SCRIPT: ALL}}


def _cpu(name, ts, dur, cat="cpu_op", tid=1, args=None):
    return {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur,
            "args": args or {"Input Dims": [[1, 2]], "Call stack": ALL, SVG: JS_URL}}


def _runtime(name, ts, dur, corr, tid=1):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "External id": corr, "note": IMG}}


def _meta(kind, pid, tid, value):
    key = "labels" if kind == "process_labels" else "name"
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {key: value}}


def trace(rank=0, world=1, steps=6, variant=0):
    """The trace as a dict (strings may hold lone surrogates: write with write())."""
    ev = [
        _meta("process_name", 100, 0, "python " + IMG + ALL),
        _meta("process_labels", 100, 0, SCRIPT + CSS_URL),
        _meta("thread_name", 100, 1, SVG),             # short: the picture keeps 22 characters
        _meta("thread_name", 100, 2, IMG),
        _meta("process_name", 0, 0, "GPU " + END_SCRIPT),
        _meta("process_labels", 0, 0, STYLE),
        _meta("thread_name", 0, 7, "stream 7 " + ATTR),
        _meta("thread_name", 0, 8, BIDI),
        {"ph": "i", "s": "g", "cat": IMG, "name": "instant " + SCRIPT, "pid": 100, "tid": 1, "ts": 1,
         "args": {JS_URL: STYLE}},
        {"ph": "C", "name": "counter " + IMG, "pid": 100, "tid": 1, "ts": 2, "args": {SVG: 1}},
    ]
    corr = 0
    kernels = [IMG + " gemm", SVG, SCRIPT, END_SCRIPT + " sm80_xmma", ATTR, LINK, STYLE, CSS_URL, IFRAME,
               BIDI + " kernel", LINES, INVALID, CONTROLS, ENTITY, COMMENT, JS_URL, LONG]
    step_len = 10_000 + 1_000 * variant
    for s in range(steps):
        b = 1_000 + s * step_len
        ev.append(_cpu(f"ProfilerStep#{s}", b, step_len - 100, cat="user_annotation"))
        # The input pipeline: the GPU starves while these run.
        ev.append(_cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b + 10, 4_000,
                       cat="user_annotation"))
        ev.append(_cpu("decode " + IMG, b + 20, 1_500))
        ev.append(_cpu(LONG, b + 1_530, 1_200))
        ev.append(_cpu(INVALID + " " + BIDI, b + 2_740, 1_200))
        ev.append(_cpu("augment " + SVG, b + 20, 1_000, tid=2))
        # Forward: one launch per hostile kernel.
        ev.append(_cpu("forward " + SCRIPT, b + 4_900, 3_000))
        t = b + 4_910
        for k in kernels:
            corr += 1
            ev.append(_runtime("cudaLaunchKernel", t, 8, corr))
            ev.append(_kernel(k, t + 20, 150, corr, stream=7 if corr % 3 else 8))
            ev.append({"ph": "s", "id": corr, "pid": 100, "tid": 1, "ts": t, "cat": "ac2g", "name": "ac2g " + IMG})
            ev.append({"ph": "f", "id": corr, "pid": 0, "tid": 7 if corr % 3 else 8, "ts": t + 20, "cat": "ac2g",
                       "name": "ac2g " + IMG, "bp": "e"})
            t += 170
        # A pageable copy and a host sync (.item()) at the end of the step.
        corr += 1
        ev.append(_cpu("aten::copy_ " + ATTR, b + 8_000, 400))
        ev.append(_runtime("cudaMemcpyAsync", b + 8_010, 380, corr))
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device) " + IMG, "pid": 0,
                   "tid": 7, "ts": b + 8_020, "dur": 300, "args": {"correlation": corr, "bytes": 4 << 20,
                                                                  "memory bandwidth (GB/s)": SCRIPT}})
        corr += 1
        ev.append(_cpu("aten::item " + JS_URL, b + 8_500, 900))
        ev.append(_runtime("cudaStreamSynchronize", b + 8_510, 880, corr))
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "annotation " + META, "pid": 0, "tid": 7,
                   "ts": b + 4_930, "dur": 2_000, "args": {}})
        ev.append({"ph": "X", "cat": SCRIPT, "name": "odd category " + IMG, "pid": 100, "tid": 1,
                   "ts": b + 9_500, "dur": 5, "args": {"x": BASE}})
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "GPU " + SVG + " " + IMG + " " + INVALID, "totalGlobalMem": 42_505_273_344,
                              "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "numSms": 108,
                              "regsPerBlock": 65536, "sharedMemPerBlock": 49152, "uuid": SCRIPT, "busId": CSS_URL}],
        "distributedInfo": {"backend": "nccl " + IMG, "rank": rank, "world_size": world, "pg_count": 1,
                            "pg_config": [{"pg_name": SCRIPT, "pg_desc": STYLE, "backend_config": JS_URL,
                                           "ranks": list(range(world))}],
                            "nccl_version": SVG},
        "cuda_runtime_version": 12010,
        "traceName": IMG,
        "hostile " + SCRIPT: [ALL, {JS_URL: LONG}],
        "traceEvents": ev,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
    }


def write(path, doc):
    text = json.dumps(doc, ensure_ascii=False, indent=0)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", "surrogateescape"))


# File names: everything but "/" and NUL is allowed, up to 255 bytes.
FILE_NAME = ("<img src=x onerror=alert(1)>'\"><svg onload=alert(1)>" + "\u202E" + "lmth." + "\udcff"
             + "&amp;.pt.trace.json")
assert len(os.fsencode(FILE_NAME)) < 255


def make_all(folder):
    """Writes the hostile inputs under `folder`: {name: path or (before, after)}."""
    single = os.path.join(folder, FILE_NAME)
    write(single, trace())
    session = os.path.join(folder, "session " + SVG.replace("/", "") + "\udcfe")
    os.makedirs(session)
    for rank, label in enumerate([IMG, SCRIPT.replace("/", "")]):
        write(os.path.join(session, f"worker{rank} {label}.{rank + 1}.pt.trace.json"), trace(rank, 2, variant=rank))
    after = os.path.join(folder, "after " + ATTR + ".json")
    write(after, trace(variant=2))
    return {"hostile-file": single, "hostile-session": session, "hostile-comparison": (single, after)}
