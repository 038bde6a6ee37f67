#!/usr/bin/env python3
"""Several ranks in one file, as merging tools write them, analysed like the ranks' own files.

The 8 DLRM ranks are merged two ways:
  * TraceFuse (TraceLens): every pid += rank * 10^(digits of the largest pid + 1), the rank in
    each event's args;
  * the sglang trace merger: every pid becomes the text "[TP0r] pid".
Both keep the first file's other top-level keys (deviceProperties, ...). `analyze --ranks
--json` of each merged file must equal that of the folder of 8 files, but for the ranks'
labels and paths (the file's name and path in one case, the workers' in the other).

    ranks_in_one_file_check.py CLI DLRM_FOLDER
Exit 77 (skipped) without the traces.
"""
import glob
import json
import math
import os
import subprocess
import sys
import tempfile


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def tracefuse(docs):
    maxpid = max(int(e["pid"]) for d in docs for e in d["traceEvents"]
                 if isinstance(e.get("pid"), int) or str(e.get("pid", "")).isdigit())
    mult = 10 ** (math.ceil(math.log10(maxpid)) + 1)
    out = {k: v for k, v in docs[0].items() if k != "traceEvents"}
    out["traceEvents"] = []
    for rank, d in enumerate(docs):
        for e in d["traceEvents"]:
            e = dict(e)
            e.setdefault("args", {})
            e["args"] = dict(e["args"], rank=rank)
            try:
                e["args"]["pid_raw"] = e["pid"]
                e["pid"] = int(e["pid"]) + rank * mult
            except (TypeError, ValueError, KeyError):
                pass
            out["traceEvents"].append(e)
    return out


def sglang(docs):
    out = {k: v for k, v in docs[0].items() if k != "traceEvents"}
    out["traceEvents"] = []
    for rank, d in enumerate(docs):
        for e in d["traceEvents"]:
            e = dict(e)
            if "pid" in e:
                e["pid"] = f"[TP{rank:02d}] {e['pid']}"
            out["traceEvents"].append(e)
    return out


def ranks_json(cli, path):
    p = subprocess.run([cli, "analyze", "--ranks", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL:", path, p.stderr)
        sys.exit(1)
    r = json.loads(p.stdout)
    for x in r["ranks"]:
        x.pop("label"), x.pop("path")
    return r


def main():
    cli, folder = sys.argv[1], sys.argv[2]
    files = sorted(glob.glob(os.path.join(folder, "*.pt.trace.json")))
    if len(files) != 8:
        print("SKIP: no DLRM ranks in", folder)
        sys.exit(77)
    docs = [load(f) for f in files]
    want = ranks_json(cli, folder)
    if want["collectives"] == 0 or want["straggler"] < 0:
        print("FAIL: the folder's analysis has no collectives or straggler")
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        for name, merge in (("tracefuse", tracefuse), ("sglang", sglang)):
            path = os.path.join(tmp, f"merged_{name}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(merge(docs), f)
            got = ranks_json(cli, path)
            if got != want:
                for k in want:
                    if got.get(k) != want[k]:
                        print(f"FAIL: {name}: '{k}' differs:\n  folder {json.dumps(want[k])[:400]}\n  merged {json.dumps(got.get(k))[:400]}")
                sys.exit(1)
            print(f"ok: {name}-merged file: {len(got['ranks'])} ranks, the folder's cross-rank analysis")


if __name__ == "__main__":
    main()
