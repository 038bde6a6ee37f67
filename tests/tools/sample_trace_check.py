"""Invariants of a synthetic sample trace (make_sample_trace.py --check): nesting, launch and
kernel correlation, flows, no overlap on a stream, the GPU idle during every DataLoader range;
prints per-step DataLoader share and GPU utilisation. Python 3 standard library only."""
import gzip
import json


# ---------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------


def _union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def _overlap(union, s, e):
    return sum(max(0, min(e, b) - max(s, a)) for a, b in union)


def check(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    problems = []
    by_cat = {}
    for e in events:
        by_cat[e.get("cat", "-")] = by_cat.get(e.get("cat", "-"), 0) + 1
    print("%s: %d events, %d bytes" % (path, len(events), len(data)))
    print("  categories: " + ", ".join("%s %d" % kv for kv in sorted(by_cat.items(), key=lambda kv: -kv[1])))

    xs = [e for e in events if e.get("ph") == "X"]
    gpu = [e for e in xs if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    runtime = {e["args"]["correlation"]: e for e in xs if e.get("cat") == "cuda_runtime"}
    # 1. every GPU event has a runtime call with the same correlation that starts before it
    for e in gpu:
        rt = runtime.get(e["args"].get("correlation"))
        if rt is None:
            problems.append("no launch for %s corr %s" % (e["name"][:40], e["args"].get("correlation")))
        elif not rt["ts"] < e["ts"]:
            problems.append("GPU event starts before its launch: corr %d" % rt["args"]["correlation"])
        elif rt["args"]["External id"] != e["args"]["External id"]:
            problems.append("External id mismatch corr %d" % rt["args"]["correlation"])
    # 2. no overlap on a stream
    streams = {}
    for e in gpu:
        streams.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, lst in streams.items():
        lst.sort(key=lambda e: e["ts"])
        for a, b in zip(lst, lst[1:]):
            if a["ts"] + a["dur"] > b["ts"]:
                problems.append("overlap on stream %s: %s / %s" % (key, a["name"][:30], b["name"][:30]))
    # 3. flows: one s and one f per launched correlation, at the runtime / GPU start
    flows = {}
    for e in events:
        if e.get("cat") == "ac2g":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    gpu_by_corr = {e["args"]["correlation"]: e for e in gpu}
    for corr, g in gpu_by_corr.items():
        fl = flows.get(corr, {})
        if "s" not in fl or "f" not in fl:
            problems.append("missing flow for corr %d" % corr)
            continue
        if fl["s"]["ts"] != runtime[corr]["ts"] or fl["f"]["ts"] != g["ts"]:
            problems.append("flow timestamps differ for corr %d" % corr)
    if set(flows) - set(gpu_by_corr):
        problems.append("%d flows without GPU work" % len(set(flows) - set(gpu_by_corr)))
    # 4. nesting of CPU events per thread (cpu_op, user_annotation, cuda_runtime)
    threads = {}
    for e in xs:
        if e.get("cat") in ("cpu_op", "user_annotation", "cuda_runtime"):
            threads.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, lst in threads.items():
        lst.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in lst:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
                problems.append("%s crosses the end of %s on %s" % (e["name"], stack[-1]["name"], key))
            if e.get("cat") == "cuda_runtime" and not stack:
                problems.append("runtime call outside any op: %s" % e["name"])
            stack.append(e)
    # 5. per step: GPU idle during the DataLoader range, utilisation
    busy = _union([(e["ts"], e["ts"] + e["dur"]) for e in gpu if e["pid"] == 0])
    steps = sorted((e for e in xs if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    loaders = [e for e in xs if e["name"].startswith("enumerate(DataLoader)")]
    # host waits: cudaStreamSynchronize, and cudaMemcpyAsync calls whose copy is DtoH
    dtoh = {e["args"]["correlation"] for e in gpu if e["name"].startswith("Memcpy DtoH")}
    waits = [e for e in xs if e.get("cat") == "cuda_runtime" and (
        e["name"] == "cudaStreamSynchronize" or e["args"].get("correlation") in dtoh)]
    copies = [e for e in gpu if e["name"].startswith("Memcpy HtoD")]
    print("  step             dur ms  DataLoader %  GPU busy %  GPU busy excl. DL %  HtoD ms  "
          "longest host wait ms")
    for s in steps:
        s0, s1 = s["ts"], s["ts"] + s["dur"]
        dl = [d for d in loaders if s0 <= d["ts"] and d["ts"] + d["dur"] <= s1]
        if len(dl) != 1:
            problems.append("%s has %d DataLoader ranges" % (s["name"], len(dl)))
            continue
        d0, d1 = dl[0]["ts"], dl[0]["ts"] + dl[0]["dur"]
        idle_violation = _overlap(busy, d0, d1)
        if idle_violation:
            problems.append("%s: GPU busy %d us inside the DataLoader range" % (s["name"], idle_violation))
        b = _overlap(busy, s0, s1)
        h2d = sum(c["dur"] for c in copies if s0 <= c["ts"] < s1)
        sy = max([y["dur"] for y in waits if s0 <= y["ts"] < s1] or [0])
        print("  %-16s %7.2f  %12.1f  %10.1f  %19.1f  %7.2f  %20.2f" % (
            s["name"], s["dur"] / 1e3, 100.0 * (d1 - d0) / s["dur"], 100.0 * b / s["dur"],
            100.0 * b / (s["dur"] - (d1 - d0)), h2d / 1e3, sy / 1e3))
    ids = [e["args"]["External id"] for e in xs if e.get("cat") in ("cpu_op", "user_annotation")]
    if len(ids) != len(set(ids)):
        problems.append("duplicate External id on CPU ops")
    for p in problems[:20]:
        print("  PROBLEM: " + p)
    if len(problems) > 20:
        print("  ... %d problems in all" % len(problems))
    print("  %s" % ("OK" if not problems else "FAILED"))
    return not problems
