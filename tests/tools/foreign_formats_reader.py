#!/usr/bin/env python3
"""Independent reader for non-Kineto profiler files (standard library only).

Recomputes, without sharing code with the C++ importer, the counts a future test
compares against `stallscope-cli info --json` for:

  nsys-sqlite     `nsys export --type sqlite` (CUPTI_ACTIVITY_KIND_* tables, StringIds)
  rpd-sqlite      rocmProfileData RPD (rocpd_op / rocpd_api ...); also gzip-compressed
  rocprofv3-json  rocprofv3 --output-format json ({"rocprofiler-sdk-tool": [ ... ]}); also .gz

The format is told from the bytes (gzip magic, SQLite header, table names, JSON
top-level keys), never from the file name.  SQLite is opened read-only
(`file:...?mode=ro`); a gzip-compressed SQLite is decompressed to a temporary file.
All times are integer nanoseconds in the file's own time base.

    foreign_formats_reader.py FILE...          human-readable summary per file
    foreign_formats_reader.py --json FILE...   one JSON array, one object per file
    foreign_formats_reader.py --self-test [DIR]  checks on DIR (default ../shared/traces)

Definitions (see foreign_formats_notes.md):
  kernels/memcpy/memset  GPU activity records (nsys CUPTI tables; RPD rocpd_op by opType;
                         rocprofv3 buffer_records.kernel_dispatch / memory_copy)
  busy_ns                per device, length of the union of kernel+memcpy+memset intervals
  sum_ns                 per device, plain sum of the same durations (overlaps counted twice)
  first_ns / last_ns     earliest start / latest end of those intervals
"""
import argparse
import gzip
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict

GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
NSYS_EXPECTED = ["StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                 "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                 "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                 "NVTX_EVENTS", "OSRT_API", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
                 "ENUM_NSYS_EVENT_CLASS", "ENUM_NSYS_EVENT_TYPE", "META_DATA_EXPORT"]
RPD_EXPECTED = ["rocpd_op", "rocpd_api", "rocpd_api_ops", "rocpd_string", "rocpd_kernelapi",
                "rocpd_copyapi", "rocpd_metadata"]
RPD_KERNEL_OPS = {"KernelExecution", "Task"}      # Task = kernel node run by hipGraphLaunch
RPD_MEMSET_OPS = {"FillBuffer"}
RPD_INTERNAL_APIS = re.compile(r"::writeRows$|^hcc_activity_callback$|^rpdflush$|^run_to_completion$")
RCCL_NAME = re.compile(r"nccl|rccl", re.I)
ROCCLR_BLIT = re.compile(r"^__amd_rocclr_")


# ----------------------------------------------------------------------------- helpers

class Src:
    """A read-only SQLite connection that records which tables/columns were used."""

    def __init__(self, path):
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.relied = defaultdict(set)
        self.tables = {r[0] for r in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        self._cols = {}

    def cols(self, table):
        if table not in self._cols:
            self._cols[table] = ([r[1] for r in self.conn.execute(f'PRAGMA table_info("{table}")')]
                                 if table in self.tables else [])
        return self._cols[table]

    def has(self, table, *cols):
        return table in self.tables and all(c in self.cols(table) for c in cols)

    def use(self, table, *cols):
        self.relied[table].update(cols)

    def q(self, sql, *args):
        return self.conn.execute(sql, args).fetchall()

    def close(self):
        self.conn.close()


def merge(intervals):
    """(busy_ns, sum_ns, first_ns, last_ns) of [start, end) intervals; overlaps merged."""
    iv = sorted((s, e) for s, e in intervals if s is not None and e is not None)
    if not iv:
        return 0, 0, None, None
    busy, total = 0, 0
    cur_s, cur_e = iv[0]
    last = cur_e
    for s, e in iv:
        total += max(0, e - s)
        last = max(last, e)
        if s > cur_e:
            busy += max(0, cur_e - cur_s)
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += max(0, cur_e - cur_s)
    return busy, total, iv[0][0], last


def device_entry(dev_id, name, kinds):
    """kinds: {"kernel": [(s,e)...], "memcpy": [...], "memset": [...]}."""
    allv = [x for k in ("kernel", "memcpy", "memset") for x in kinds.get(k, [])]
    busy, total, first, last = merge(allv)
    return {"id": dev_id, "name": name, "kernels": len(kinds.get("kernel", [])),
            "memcpy": len(kinds.get("memcpy", [])), "memset": len(kinds.get("memset", [])),
            "busy_ns": busy, "sum_ns": total, "first_ns": first, "last_ns": last}


def sniff(path):
    """('gzip'|'plain', first bytes of the uncompressed content)."""
    with open(path, "rb") as f:
        head = f.read(2)
    if head == GZIP_MAGIC:
        with gzip.open(path, "rb") as g:
            return "gzip", g.read(64)
    with open(path, "rb") as f:
        return "plain", f.read(64)


def enum_ids(src, table, names):
    """ids of an ENUM_* table whose name is in names (empty set if the table is absent)."""
    if not src.has(table, "id", "name"):
        return set()
    src.use(table, "id", "name")
    return {i for i, n in src.q(f'SELECT id, name FROM "{table}"') if n in names}


# ----------------------------------------------------------------------------- nsys

def nsys_meta(src, out):
    if src.has("META_DATA_EXPORT", "name", "value"):
        src.use("META_DATA_EXPORT", "name", "value")
        meta = dict(src.q("SELECT name, value FROM META_DATA_EXPORT"))
        out["producer"] = {"product": meta.get("EXPORT_PRODUCT_NAME"),
                           "version": meta.get("EXPORT_PRODUCT_VERSION"),
                           "schema": meta.get("EXPORT_SCHEMA_VERSION")}
    if src.has("TARGET_INFO_SYSTEM_ENV", "name", "value"):
        src.use("TARGET_INFO_SYSTEM_ENV", "name", "value")
        env = dict(src.q("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV"))
        out["host"] = {k: env[k] for k in ("CpuDescription", "CpuCores", "OsDescription",
                                           "Hostname", "NvDriverVersion", "CudaDriverVersion")
                       if env.get(k)}
    if src.has("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"):
        src.use("TARGET_INFO_SESSION_START_TIME", "utcEpochNs")
        out["session_start_utc_epoch_ns"] = src.q(
            "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0]
    if src.has("ANALYSIS_DETAILS", "startTime", "stopTime", "duration"):
        src.use("ANALYSIS_DETAILS", "startTime", "stopTime", "duration")
        s, e, d = src.q("SELECT startTime, stopTime, duration FROM ANALYSIS_DETAILS")[0]
        out["analysis_window"] = {"startTime": s, "stopTime": e, "duration": d}


def nsys_gpu_names(src):
    """(map (pid, cudaId) -> gpu id, map gpu id -> name, map cuDevice -> gpu id)."""
    names, by_cu, by_pid = {}, {}, {}
    if src.has("TARGET_INFO_GPU", "id", "name"):
        cu = "cuDevice" if "cuDevice" in src.cols("TARGET_INFO_GPU") else "id"
        src.use("TARGET_INFO_GPU", "id", "name", cu)
        for gid, name, cud in src.q(f"SELECT id, name, {cu} FROM TARGET_INFO_GPU"):
            names[gid] = name
            by_cu.setdefault(cud, gid)
    if src.has("TARGET_INFO_CUDA_DEVICE", "gpuId", "cudaId", "pid"):
        src.use("TARGET_INFO_CUDA_DEVICE", "gpuId", "cudaId", "pid")
        for gid, cid, pid in src.q("SELECT gpuId, cudaId, pid FROM TARGET_INFO_CUDA_DEVICE"):
            by_pid[(pid, cid)] = gid
    return by_pid, names, by_cu


def nsys_activity(src, table):
    """[(deviceId, pid, start, end, correlationId)] of a CUPTI activity table."""
    if not src.has(table, "start", "end"):
        return []
    dev = "deviceId" if "deviceId" in src.cols(table) else "NULL"
    gp = "globalPid" if "globalPid" in src.cols(table) else "NULL"
    corr = "correlationId" if "correlationId" in src.cols(table) else "NULL"
    src.use(table, *[c for c in ("start", "end", dev, gp, corr) if c != "NULL"])
    rows = src.q(f'SELECT {dev}, {gp}, start, "end", {corr} FROM "{table}"')
    return [(d, (g >> 24) & 0xFFFFFF if g is not None else None, s, e, c) for d, g, s, e, c in rows]


def nsys_devices(src, acts, graph_rows):
    by_pid, names, by_cu = nsys_gpu_names(src)
    per = defaultdict(lambda: defaultdict(list))
    for kind, rows in acts.items():
        for d, pid, s, e, _ in rows:
            gid = by_pid.get((pid, d), by_cu.get(d))
            per[gid if gid is not None else f"cuda{d}"][kind].append((s, e))
    devices = []
    for gid in sorted(per, key=str):
        entry = device_entry(gid, names.get(gid), per[gid])
        graph = [(s, e) for d, pid, s, e, _ in graph_rows if by_pid.get((pid, d), by_cu.get(d)) == gid]
        if graph:
            allv = [x for k in ("kernel", "memcpy", "memset") for x in per[gid][k]] + graph
            entry["busy_ns_with_graph_trace"] = merge(allv)[0]
        devices.append(entry)
    listed = [{"id": g, "name": n} for g, n in sorted(names.items())]
    return devices, listed


def nsys_api(src, out):
    t = "CUPTI_ACTIVITY_KIND_RUNTIME"
    counts = out["counts"]
    counts["runtime_api"] = 0
    if t not in src.tables:
        return set()
    src.use(t, "eventClass", "correlationId", "globalTid")
    classes = dict(src.q("SELECT id, label FROM ENUM_NSYS_EVENT_CLASS")) \
        if src.has("ENUM_NSYS_EVENT_CLASS", "id", "label") else {0: "CUDA runtime", 1: "CUDA driver"}
    if "ENUM_NSYS_EVENT_CLASS" in src.tables:
        src.use("ENUM_NSYS_EVENT_CLASS", "id", "label")
    by_class = Counter()
    linked = set()
    for ec, corr, tid in src.q(f'SELECT eventClass, correlationId, globalTid FROM "{t}"'):
        by_class[classes.get(ec, f"eventClass {ec}")] += 1
        linked.add(((tid >> 24) & 0xFFFFFF, corr))
    counts["runtime_api"] = sum(by_class.values())
    counts["runtime_api_by_class"] = dict(by_class)
    return linked


def nsys_nvtx_sync_graph(src, out):
    counts = out["counts"]
    counts["nvtx_ranges"] = counts["nvtx_markers"] = counts["nvtx_other"] = 0
    if "NVTX_EVENTS" in src.tables:
        src.use("NVTX_EVENTS", "eventType")
        ranges = enum_ids(src, "ENUM_NSYS_EVENT_TYPE", {"NvtxPushPopRange", "NvtxStartEndRange"}) or {59, 60}
        marks = enum_ids(src, "ENUM_NSYS_EVENT_TYPE", {"NvtxMark"}) or {34}
        for et, n in src.q("SELECT eventType, count(*) FROM NVTX_EVENTS GROUP BY 1"):
            key = "nvtx_ranges" if et in ranges else "nvtx_markers" if et in marks else "nvtx_other"
            counts[key] += n
    nsys_sync(src, counts)
    for key, table in (("graph_trace", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"),
                       ("cuda_graph_events", "CUDA_GRAPH_EVENTS"),
                       ("os_runtime_api", "OSRT_API"),
                       ("cuda_event_records", "CUPTI_ACTIVITY_KIND_CUDA_EVENT")):
        counts[key] = src.q(f'SELECT count(*) FROM "{table}"')[0][0] if table in src.tables else 0
        if table in src.tables:
            src.use(table, "(row count)")


def nsys_sync(src, counts):
    """Sync rows by the file's own syncType label and by the API call with the same correlationId."""
    t, rt = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME"
    counts["sync_events"] = 0
    if t not in src.tables:
        return
    labels = {}
    if src.has("ENUM_CUPTI_SYNC_TYPE", "id", "label"):
        src.use("ENUM_CUPTI_SYNC_TYPE", "id", "label")
        labels = dict(src.q("SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE"))
    col = "y.syncType" if "syncType" in src.cols(t) else "NULL"
    api = "NULL"
    join = ""
    if src.has(t, "correlationId", "globalPid") and src.has(rt, "correlationId", "globalTid", "nameId") \
            and "StringIds" in src.tables:
        src.use(t, "correlationId", "globalPid")
        src.use(rt, "nameId")
        api, join = "s.value", (f' LEFT JOIN "{rt}" r ON r.correlationId = y.correlationId'
                                " AND (r.globalTid >> 24) = (y.globalPid >> 24)"
                                " LEFT JOIN StringIds s ON s.id = r.nameId")
    if col != "NULL":
        src.use(t, "syncType")
    rows = src.q(f'SELECT {col}, {api} FROM "{t}" y{join}')
    counts["sync_events"] = len(rows)
    counts["sync_by_type"] = dict(Counter(labels.get(k, str(k)) for k, _ in rows))
    counts["sync_by_api"] = dict(Counter(str(a) for _, a in rows))


def nsys_top_kernels(src, n=5):
    t = "CUPTI_ACTIVITY_KIND_KERNEL"
    if t not in src.tables:
        return [], {}
    cols = src.cols(t)
    full = next((c for c in ("demangledName", "mangledName", "shortName", "name") if c in cols), None)
    short = "shortName" if "shortName" in cols else full
    if full is None:
        return [], {}
    src.use(t, full, short, "start", "end")
    src.use("StringIds", "id", "value")
    strings = dict(src.q("SELECT id, value FROM StringIds")) if "StringIds" in src.tables else {}
    agg = defaultdict(lambda: [0, 0, None])
    unresolved = 0
    for fid, sid, s, e in src.q(f'SELECT {full}, {short}, start, "end" FROM "{t}"'):
        a = agg[fid]
        a[0] += 1
        a[1] += e - s
        a[2] = sid
        unresolved += fid not in strings
    top = sorted(agg.items(), key=lambda kv: (-kv[1][1], str(strings.get(kv[0]))))[:n]
    res = [{"name": strings.get(fid, f"<StringIds {fid}?>"), "short_name": strings.get(a[2]),
            "count": a[0], "total_ns": a[1]} for fid, a in top]
    extra = {"kernel_name_column": full, "short_name_column": short,
             "distinct_kernel_names": len(agg), "unresolved_name_ids": unresolved}
    if "graphId" in cols:
        src.use(t, "graphId")
        extra["kernels_with_graphId"] = src.q(f'SELECT count(*) FROM "{t}" WHERE graphId IS NOT NULL')[0][0]
    return res, extra


def read_nsys(src):
    out = {"format": "nsys-sqlite", "time_unit": "ns", "counts": {}}
    nsys_meta(src, out)
    acts = {"kernel": nsys_activity(src, "CUPTI_ACTIVITY_KIND_KERNEL"),
            "memcpy": nsys_activity(src, "CUPTI_ACTIVITY_KIND_MEMCPY"),
            "memset": nsys_activity(src, "CUPTI_ACTIVITY_KIND_MEMSET")}
    graph_rows = nsys_activity(src, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    out["counts"].update({"kernels": len(acts["kernel"]), "memcpy": len(acts["memcpy"]),
                          "memset": len(acts["memset"])})
    linked = nsys_api(src, out)
    nsys_nvtx_sync_graph(src, out)
    out["devices"], out["gpus_listed"] = nsys_devices(src, acts, graph_rows)
    out["top_kernels"], out["kernel_names"] = nsys_top_kernels(src)
    out["correlation"] = {
        f"{k}_with_api": sum((pid, c) in linked for _, pid, _, _, c in rows)
        for k, rows in (("kernels", acts["kernel"]), ("memcpy", acts["memcpy"]),
                        ("memset", acts["memset"]), ("graph_trace", graph_rows))}
    out["correlation"]["rule"] = ("activity.correlationId == RUNTIME.correlationId within one "
                                  "process (globalPid>>24 == globalTid>>24)")
    out["lacks"] = [t for t in NSYS_EXPECTED if t not in src.tables]
    return out


# ----------------------------------------------------------------------------- RPD

def rpd_strings(src):
    src.use("rocpd_string", "id", "string")
    return dict(src.q("SELECT id, string FROM rocpd_string"))


def rpd_ops(src, strings, out):
    src.use("rocpd_op", "id", "gpuId", "queueId", "start", "end", "opType_id", "description_id")
    per = defaultdict(lambda: defaultdict(list))
    by_type, names = Counter(), defaultdict(lambda: [0, 0])
    other = Counter()
    for gpu, s, e, ot, did in src.q('SELECT gpuId, start, "end", opType_id, description_id FROM rocpd_op'):
        t = strings.get(ot, f"<{ot}>")
        by_type[t] += 1
        if t in RPD_KERNEL_OPS:
            per[gpu]["kernel"].append((s, e))
            a = names[strings.get(did, f"<{did}>")]
            a[0] += 1
            a[1] += e - s
        elif t.startswith("Copy"):
            per[gpu]["memcpy"].append((s, e))
        elif t in RPD_MEMSET_OPS:
            per[gpu]["memset"].append((s, e))
        else:
            other[t] += 1
    c = out["counts"]
    c["ops"] = sum(by_type.values())
    c["ops_by_type"] = dict(sorted(by_type.items()))
    c["kernels"] = sum(by_type[t] for t in RPD_KERNEL_OPS)
    c["kernels_direct_launch"] = by_type.get("KernelExecution", 0)
    c["kernels_graph_task"] = by_type.get("Task", 0)
    c["memcpy"] = sum(n for t, n in by_type.items() if t.startswith("Copy"))
    c["memset"] = sum(by_type[t] for t in RPD_MEMSET_OPS)
    c["ops_not_counted"] = dict(other)
    out["devices"] = [device_entry(g, None, per[g]) for g in sorted(per)]
    top = sorted(names.items(), key=lambda kv: (-kv[1][1], kv[0]))[:5]
    out["top_kernels"] = [{"name": n, "count": a[0], "total_ns": a[1]} for n, a in top]


def rpd_apis(src, strings, out):
    src.use("rocpd_api", "id", "apiName_id")
    names = Counter(strings.get(i, f"<{i}>") for (i,) in src.q("SELECT apiName_id FROM rocpd_api"))
    c = out["counts"]
    hip = {n: k for n, k in names.items() if n.startswith("hip")}
    c["api_rows"] = sum(names.values())
    c["runtime_api"] = sum(hip.values())
    c["hip_api_top"] = dict(Counter(hip).most_common(12))
    for n in ("hipLaunchKernel", "hipExtModuleLaunchKernel", "hipGraphLaunch"):
        c[n] = names.get(n, 0)
    c["markers"] = names.get("UserMarker", 0)
    c["tracer_internal"] = sum(k for n, k in names.items() if RPD_INTERNAL_APIS.search(n))
    sync = {n: k for n, k in hip.items() if "Synchronize" in n}
    c["sync_events"] = sum(sync.values())
    c["sync_by_api"] = sync
    c["graph_trace"] = 0
    if "ext_autogradapi" in src.tables:
        c["autograd_rows"] = src.q("SELECT count(*) FROM ext_autogradapi")[0][0]
        src.use("ext_autogradapi", "(row count)")


def rpd_links(src, out):
    src.use("rocpd_api_ops", "api_id", "op_id")
    n, apis, ops = src.q("SELECT count(*), count(DISTINCT api_id), count(DISTINCT op_id) FROM rocpd_api_ops")[0]
    orphan = src.q("SELECT count(*) FROM rocpd_op WHERE id NOT IN (SELECT op_id FROM rocpd_api_ops)")[0][0]
    out["correlation"] = {"api_ops_rows": n, "apis_with_ops": apis, "ops_with_api": ops,
                          "ops_without_api": orphan,
                          "rule": "rocpd_api_ops(api_id -> rocpd_api.id, op_id -> rocpd_op.id)"}


def read_rpd(src):
    out = {"format": "rpd-sqlite", "time_unit": "ns", "counts": {}}
    if src.has("rocpd_metadata", "tag", "value"):
        src.use("rocpd_metadata", "tag", "value")
        meta = dict(src.q("SELECT tag, value FROM rocpd_metadata"))
        out["producer"] = {"schema_version": meta.get("schema_version"),
                           "session_count": meta.get("session_count")}
    strings = rpd_strings(src)
    rpd_ops(src, strings, out)
    rpd_apis(src, strings, out)
    rpd_links(src, out)
    out["lacks"] = [t for t in RPD_EXPECTED if t not in src.tables]
    out["lacks"].append("device names (RPD stores only gpuId)")
    if not src.has("rocpd_api", "domain_id"):
        out["lacks"].append("rocpd_api.domain_id/category_id (newer RPD schema)")
    if "rocpd_ustring" not in src.tables:
        out["lacks"].append("rocpd_ustring (newer RPD schema; args_id points into rocpd_string)")
    return out


# ----------------------------------------------------------------------------- rocprofv3

def v3_kind_names(tool):
    """buffer record kind (int) -> name, and operation names per kind, from strings.buffer_records."""
    kinds, ops = {}, {}
    for i, rec in enumerate(tool.get("strings", {}).get("buffer_records", [])):
        kinds[i] = rec.get("kind")
        ops[i] = rec.get("operations", [])
    return kinds, ops


def v3_agents(tool):
    agents = {}
    for a in tool.get("agents", []):
        agents[a["id"]["handle"]] = {"type": a.get("type"), "gpu_index": a.get("gpu_index"),
                                     "name": a.get("product_name") or a.get("name"),
                                     "gfx": a.get("name")}
    return agents


def v3_kernels(tool, br, per, out):
    syms = {k["kernel_id"]: k for k in tool.get("kernel_symbols", [])}
    agg = defaultdict(lambda: [0, 0])
    rccl = blit = 0
    for r in br.get("kernel_dispatch", []):
        di = r["dispatch_info"]
        s, e = r["start_timestamp"], r["end_timestamp"]
        per[di["agent_id"]["handle"]]["kernel"].append((s, e))
        sym = syms.get(di["kernel_id"], {})
        name = sym.get("formatted_kernel_name") or sym.get("kernel_name") or f"<kernel_id {di['kernel_id']}>"
        a = agg[name]
        a[0] += 1
        a[1] += e - s
        rccl += bool(RCCL_NAME.search(name))
        blit += bool(ROCCLR_BLIT.search(sym.get("kernel_name", "")))
    c = out["counts"]
    c["kernels"] = len(br.get("kernel_dispatch", []))
    c["rccl_kernels"] = rccl
    c["rocclr_blit_kernels"] = blit
    c["kernel_symbols"] = len(syms)
    top = sorted(agg.items(), key=lambda kv: (-kv[1][1], kv[0]))[:5]
    out["top_kernels"] = [{"name": n, "count": a[0], "total_ns": a[1]} for n, a in top]


def v3_copies(br, agents, per):
    n = 0
    for r in br.get("memory_copy", []):
        dst = r.get("dst_agent_id", {}).get("handle")
        src = r.get("src_agent_id", {}).get("handle")
        agent = dst if agents.get(dst, {}).get("type") == 2 else src
        per[agent]["memcpy"].append((r["start_timestamp"], r["end_timestamp"]))
        n += 1
    return n


def read_rocprofv3(obj):
    out = {"format": "rocprofv3-json", "time_unit": "ns", "counts": {}}
    tools = obj["rocprofiler-sdk-tool"]
    out["tool_entries"] = len(tools)
    per = defaultdict(lambda: defaultdict(list))
    agents, c = {}, out["counts"]
    for tool in tools:
        md = tool.get("metadata", {})
        out.setdefault("producer", {"pid": md.get("pid"), "init_time": md.get("init_time"),
                                    "fini_time": md.get("fini_time")})
        node = md.get("node", {})
        if node.get("hostname"):
            out.setdefault("host", {"Hostname": node["hostname"]})
        cpus = [a.get("product_name") for a in tool.get("agents", []) if a.get("type") == 1]
        if cpus and len(set(cpus)) == 1 and cpus[0]:
            out.setdefault("host", {})["CpuDescription"] = cpus[0]
        agents.update(v3_agents(tool))
        br = tool.get("buffer_records", {})
        v3_kernels(tool, br, per, out)
        c["memcpy"] = c.get("memcpy", 0) + v3_copies(br, agents, per)
        for key, rec in (("runtime_api", "hip_api"), ("hsa_api", "hsa_api"), ("markers", "marker_api"),
                         ("rccl_api", "rccl_api"), ("memory_allocation", "memory_allocation"),
                         ("scratch_memory", "scratch_memory")):
            c[key] = c.get(key, 0) + len(br.get(rec, []))
        kinds, ops = v3_kind_names(tool)
        c["kernel_record_kinds"] = dict(Counter(
            f"{kinds.get(r['kind'])}/{(ops.get(r['kind']) or [None] * 99)[r['operation']]}"
            for r in br.get("kernel_dispatch", [])))
        out["buffer_record_lengths"] = {k: len(v) for k, v in br.items() if isinstance(v, list)}
    c.update({"memset": 0, "sync_events": 0, "graph_trace": 0})
    out["devices"] = [device_entry(agents.get(h, {}).get("gpu_index", h), agents.get(h, {}).get("name"),
                                   per[h]) for h in sorted(per)]
    out["gpus_listed"] = [{"id": a["gpu_index"], "name": a["name"], "gfx": a["gfx"]}
                          for _, a in sorted(agents.items()) if a["type"] == 2]
    api_ids = {r.get("correlation_id", {}).get("internal") for t in tools
               for r in t.get("buffer_records", {}).get("hip_api", [])}
    out["correlation"] = {"rule": "kernel_dispatch.correlation_id.internal == hip_api[].correlation_id.internal",
                          "kernels_with_api": sum(r["correlation_id"]["internal"] in api_ids for t in tools
                                                  for r in t.get("buffer_records", {}).get("kernel_dispatch", []))}
    out["relied_on"] = {"rocprofiler-sdk-tool[]": ["metadata", "agents", "kernel_symbols",
                                                   "strings.buffer_records", "buffer_records.*"],
                        "kernel_dispatch[]": ["start_timestamp", "end_timestamp", "kind", "operation",
                                              "dispatch_info.agent_id.handle", "dispatch_info.kernel_id"]}
    out["lacks"] = [f"buffer_records.{k} (empty)" for k, v in out["buffer_record_lengths"].items() if not v]
    out["lacks"].append("memset records (fills run as __amd_rocclr_fillBuffer* kernels)")
    return out


# ----------------------------------------------------------------------------- dispatch

def read_sqlite(path):
    src = Src(path)
    try:
        if {"rocpd_op", "rocpd_api"} <= src.tables:
            out = read_rpd(src)
        elif "StringIds" in src.tables and any(t.startswith("CUPTI_ACTIVITY_KIND_") or
                                               t.startswith("TARGET_INFO_") for t in src.tables):
            out = read_nsys(src)
        else:
            return {"format": "unknown-sqlite", "tables": sorted(src.tables)[:40]}
        out["table_count"] = len(src.tables)
        out["relied_on"] = {t: sorted(c) for t, c in sorted(src.relied.items())}
        return out
    finally:
        src.close()


def read_file(path):
    container, head = sniff(path)
    if head.startswith(SQLITE_MAGIC):
        if container == "plain":
            out = read_sqlite(path)
        else:
            with tempfile.TemporaryDirectory(prefix="ffr") as tmp:
                dst = os.path.join(tmp, "decompressed.sqlite")
                with gzip.open(path, "rb") as g, open(dst, "wb") as f:
                    shutil.copyfileobj(g, f)
                out = read_sqlite(dst)
    elif head.lstrip()[:1] in (b"{", b"["):
        opener = gzip.open if container == "gzip" else open
        with opener(path, "rt", encoding="utf-8") as f:
            obj = json.load(f)
        if isinstance(obj, dict) and isinstance(obj.get("rocprofiler-sdk-tool"), list):
            out = read_rocprofv3(obj)
        elif (isinstance(obj, dict) and "traceEvents" in obj) or \
                (isinstance(obj, list) and obj and isinstance(obj[0], dict) and "ph" in obj[0]):
            out = {"format": "chrome-trace-json (not handled here)"}
        else:
            out = {"format": "unknown-json", "top_level_keys": sorted(obj)[:20] if isinstance(obj, dict) else []}
    else:
        out = {"format": "unknown"}
    return {"path": path, "container": container, **out}


def text_report(r):
    lines = [f"== {r['path']}", f"  format: {r['format']} ({r['container']})"]
    for key in ("producer", "session_start_utc_epoch_ns", "analysis_window"):
        if key in r:
            lines.append(f"  {key}: {r[key]}")
    for k, v in r.get("counts", {}).items():
        lines.append(f"  {k}: {v}")
    for d in r.get("devices", []):
        lines.append(f"  device {d['id']} {d['name'] or ''}: kernels={d['kernels']} memcpy={d['memcpy']} "
                     f"memset={d['memset']} busy_ns={d['busy_ns']} sum_ns={d['sum_ns']} "
                     f"first={d['first_ns']} last={d['last_ns']}"
                     + (f" busy_with_graph={d['busy_ns_with_graph_trace']}" if "busy_ns_with_graph_trace" in d else ""))
    for g in r.get("gpus_listed", []):
        lines.append(f"  gpu listed: {g}")
    for t in r.get("top_kernels", []):
        short = f" [{t['short_name']}]" if t.get("short_name") else ""
        lines.append(f"  top kernel {t['total_ns']} ns x{t['count']}: {t['name'][:110]}{short}")
    for key in ("kernel_names", "correlation", "lacks", "relied_on"):
        if key in r:
            lines.append(f"  {key}: {r[key]}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- self-test

SELF_TEST = {
    "nsight/nvfuser_h200_report1.sqlite": (
        "nsys-sqlite", {"kernels": 18, "memcpy": 3, "memset": 3, "runtime_api": 990,
                        "nvtx_ranges": 13513, "sync_events": 3, "graph_trace": 0}, "H200"),
    "nsight/flameox_nsight-2025.5.2.sqlite": (
        "nsys-sqlite", {"kernels": 3, "memcpy": 1, "memset": 0, "graph_trace": 2, "runtime_api": 33,
                        "os_runtime_api": 654, "sync_events": 2, "nvtx_ranges": 0}, "RTX 3060"),
    "rocm/tracelens_rocprofv3_908_results.json.gz": (
        "rocprofv3-json", {"kernels": 43915, "runtime_api": 0, "rccl_kernels": 1310,
                           "rocclr_blit_kernels": 6366, "memcpy": 0}, "MI350X"),
    "rocm/rocmprofiledata_mytrace.rpd.gz": (
        "rpd-sqlite", {"ops": 10124, "hipLaunchKernel": 972, "hipGraphLaunch": 20,
                       "kernels_direct_launch": 1228, "kernels_graph_task": 7720, "memcpy": 1176}, None),
    "rocm/rocmprofiledata_matmul_result.rpd": (
        "rpd-sqlite", {"ops": 85, "kernels": 29, "memcpy": 55, "memset": 1}, None),
}


def check_result(rel, r, fmt, want, gpu):
    errs = []
    if r["format"] != fmt:
        errs.append(f"format {r['format']} != {fmt}")
    for k, v in want.items():
        if r["counts"].get(k) != v:
            errs.append(f"{k}: got {r['counts'].get(k)}, expected {v}")
    if not r.get("devices"):
        errs.append("no devices")
    for d in r.get("devices", []):
        if not (0 < d["busy_ns"] <= d["sum_ns"] and d["busy_ns"] <= d["last_ns"] - d["first_ns"]):
            errs.append(f"device {d['id']}: busy/sum/span inconsistent {d}")
    if gpu and not any(gpu in (d.get("name") or "") for d in r.get("devices", [])):
        errs.append(f"no device named *{gpu}*")
    if r["format"] == "nsys-sqlite" and (not r["top_kernels"] or r["kernel_names"]["unresolved_name_ids"]):
        errs.append("kernel names not resolved through StringIds")
    if r["format"] == "nsys-sqlite" and r["correlation"]["kernels_with_api"] != r["counts"]["kernels"]:
        errs.append(f"kernels without a runtime call: {r['correlation']}")
    if r["format"] == "rpd-sqlite" and r["correlation"]["ops_without_api"]:
        errs.append(f"ops without an API row: {r['correlation']}")
    return [f"{rel}: {e}" for e in errs]


def self_test(root):
    errs, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="ffr-names") as tmp:
        for i, (rel, (fmt, want, gpu)) in enumerate(SELF_TEST.items()):
            path = os.path.join(root, rel)
            if not os.path.exists(path):
                print(f"skip (absent): {path}")
                continue
            ran += 1
            r = read_file(path)
            errs += check_result(rel, r, fmt, want, gpu)
            # Detection must not depend on the name: read it again through a neutral symlink.
            alias = os.path.join(tmp, f"blob{i}")
            os.symlink(os.path.abspath(path), alias)
            if read_file(alias)["format"] != r["format"]:
                errs.append(f"{rel}: format changed when renamed")
            print(f"ok-checked: {rel} -> {r['format']}, counts {json.dumps(want)}")
    for e in errs:
        print("FAIL:", e)
    print(f"self-test: {ran} file(s) checked, {len(errs)} failure(s)")
    return 1 if errs else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--json", action="store_true", help="emit one JSON array")
    ap.add_argument("--self-test", nargs="?", const="", metavar="DIR",
                    help="run checks on the shared corpus (default: ../shared/traces from the repo root)")
    a = ap.parse_args(argv)
    if a.self_test is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        root = a.self_test or os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "traces"))
        return self_test(root)
    if not a.files:
        ap.error("no files given")
    results = [read_file(p) for p in a.files]
    if a.json:
        json.dump(results, sys.stdout, indent=1, sort_keys=False)
        print()
    else:
        print("\n".join(text_report(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
