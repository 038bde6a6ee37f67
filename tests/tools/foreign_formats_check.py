#!/usr/bin/env python3
"""`stallscope-cli info --json` on every Nsight Systems, RPD and rocprofv3 file of the shared
corpus against the independent stdlib reader (foreign_formats_reader.py, which shares no code
with the importers): kernels, copies, memsets, runtime/driver calls and busy time per device, and the recording
machine Nsight's TARGET_INFO_SYSTEM_ENV describes
must agree exactly.

Definitions (the reader's, foreign_formats_notes.md):
  * Nsight: calls = CUPTI_ACTIVITY_KIND_RUNTIME rows (runtime + driver), read by Stallscope as
    cuda_runtime + cuda_driver events. A graph execution traced as a whole graph
    (CUPTI_ACTIVITY_KIND_GRAPH_TRACE) is one GPU slice of kind kernel in Stallscope: kernels =
    the reader's kernels + graph_trace rows, busy = its busy_ns_with_graph_trace.
  * RPD: kernels = KernelExecution + Task ops, calls = hip* rows of rocpd_api.
  * rocprofv3: kernels = kernel_dispatch records, calls = hip_api records.
Busy time is the union of GPU work per device, in ns; info writes microseconds with three
decimals (exact).

    foreign_formats_check.py TRACES_DIR CLI
Exit 77 (skipped) without the traces.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import foreign_formats_reader as reader  # noqa: E402


def micros(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def expected(doc):
    c = doc["counts"]
    graphs = c.get("graph_trace", 0) if doc["format"] == "nsys-sqlite" else 0
    devices = {}
    for d in doc["devices"]:
        busy = d.get("busy_ns_with_graph_trace", d["busy_ns"]) if graphs else d["busy_ns"]
        devices[str(d["id"])] = {"busy_us": micros(busy), "kernels": d["kernels"] + (
            graphs if len(doc["devices"]) == 1 else 0), "memcpys": d["memcpy"],
            "memsets": d["memset"]}
    return {"kernel": c["kernels"] + graphs, "memcpy": c["memcpy"], "memset": c["memset"],
            "calls": c["runtime_api"], "devices": devices}


def host_pieces(doc):
    """What `info` must say of the recording machine (Nsight's TARGET_INFO_SYSTEM_ENV): each
    value the file holds, CUDA's driver version as major.minor (1000 x major + 10 x minor)."""
    h = doc.get("host", {})
    out = [h[k] for k in ("CpuDescription", "OsDescription") if k in h]
    if "CpuCores" in h:
        out.append("%s cores" % h["CpuCores"])
    if "Hostname" in h:
        out.append("host " + h["Hostname"])
    if "NvDriverVersion" in h:
        out.append("GPU driver " + h["NvDriverVersion"])
    if "CudaDriverVersion" in h:
        v = int(h["CudaDriverVersion"])
        out.append("CUDA driver %d.%d" % (v // 1000, v % 1000 // 10))
    return out


def actual(info):
    cats = info["by_category"]
    devices = {}
    for k, d in info["devices"].items():
        devices[k] = {"busy_us": micros(round(float(d["busy_us"]) * 1000)),
                      "kernels": d["kernels"], "memcpys": d["memcpys"], "memsets": d["memsets"]}
    return {"kernel": info["gpu"]["kernel"], "memcpy": info["gpu"]["memcpy"],
            "memset": info["gpu"]["memset"],
            "calls": cats.get("cuda_runtime", 0) + cats.get("cuda_driver", 0),
            "devices": devices}


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    traces, cli = argv[1], argv[2]
    files = sorted(glob.glob(os.path.join(traces, "nsight", "*")) +
                   glob.glob(os.path.join(traces, "rocm", "*")))
    if not files:
        print("skipped: no files in %s/{nsight,rocm}" % traces)
        return 77
    failed = 0
    for path in files:
        doc = reader.read_file(path)
        run = subprocess.run([cli, "info", "--json", path], capture_output=True, text=True)
        if run.returncode != 0:
            print("FAIL %s: info exited %d: %s" % (path, run.returncode, run.stderr.strip()))
            failed += 1
            continue
        info = json.loads(run.stdout)
        info = info[0] if isinstance(info, list) else info
        want, got = expected(doc), actual(info)
        name = os.path.relpath(path, traces)
        missing = [p for p in host_pieces(doc) if p not in info.get("host", "")]
        if missing:
            print("FAIL %s: info's host %r lacks %s" % (os.path.relpath(path, traces),
                                                       info.get("host", ""), missing))
            failed += 1
            continue
        if want != got:
            print("FAIL %s\n  reader: %s\n  info:   %s" % (name, json.dumps(want), json.dumps(got)))
            failed += 1
        else:
            print("ok   %s (%s): %d kernels, %d copies, %d memsets, %d calls, devices %s" % (
                name, info["format"], got["kernel"], got["memcpy"], got["memset"], got["calls"],
                ", ".join("%s busy %s us" % (k, v["busy_us"]) for k, v in got["devices"].items())))
    print("%d of %d files disagree" % (failed, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
