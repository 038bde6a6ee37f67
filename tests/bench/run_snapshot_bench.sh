#!/usr/bin/env bash
# Allocator snapshot benchmark (issue 29): replicates a real snapshot to SIZE_MB
# (make_big_snapshot.py), then in one run on the same file: Stallscope's pickle reader alone,
# the whole import (reader, model, replay), and Python's pickle.load with a restricted
# Unpickler (the baseline), each its own process (its own peak RSS); prints the figures and
# the ratios. Does not gate.
# Usage: SIZE_MB=1000 tests/bench/run_snapshot_bench.sh      (from the project root)
set -euo pipefail
SIZE_MB="${SIZE_MB:-200}"
BUILD="${BUILD:-build/release}"
WORK="${WORK:-${TMPDIR:-/tmp}/stallscope-bench}"
SRC="${SRC:-../shared/traces/memory/snapshots/nothanmin_memory_snapshot.pickle}"
PY="${PYTHON:-python3}"
if [ ! -f "$SRC" ]; then echo "SKIP: $SRC is absent"; exit 0; fi
mkdir -p "$WORK"
BIG="$WORK/snapshot_${SIZE_MB}mb.pickle"
[ -f "$BIG" ] || "$PY" tests/bench/make_big_snapshot.py "$SRC" "$BIG" --size-mb "$SIZE_MB"
reader=$("$BUILD/tests/bench/bench_snapshot" --reader-only "$BIG")
import=$("$BUILD/tests/bench/bench_snapshot" "$BIG")
python=$("$PY" - "$BIG" <<'PYEOF'
import json, os, pickle, resource, sys, time
class Builtins(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    Builtins(f).load()
s = time.perf_counter() - t0
mb = os.path.getsize(sys.argv[1]) / 1e6
print(json.dumps({"mode": "python pickle.load", "seconds": round(s, 3),
                  "mb_per_s": round(mb / s, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "file_mb": round(mb, 1)}))
PYEOF
)
echo "$reader"
echo "$import"
echo "$python"
"$PY" - "$reader" "$import" "$python" <<'PYEOF'
import json, sys
r, i, p = (json.loads(x) for x in sys.argv[1:4])
print(f"file {i['file_mb']} MB: reader {r['seconds']} s ({r['mb_per_s']} MB/s, {r['peak_rss_mb']} MB RSS), "
      f"import {i['seconds']} s ({i['mb_per_s']} MB/s, {i['peak_rss_mb']} MB RSS), "
      f"Python pickle.load {p['seconds']} s ({p['mb_per_s']} MB/s, {p['peak_rss_mb']} MB RSS)")
print(f"ratios: import / pickle.load time {i['seconds'] / p['seconds']:.2f}, "
      f"reader / pickle.load time {r['seconds'] / p['seconds']:.2f}, "
      f"import RSS / pickle.load RSS {i['peak_rss_mb'] / p['peak_rss_mb']:.2f}, "
      f"import RSS / file {i['peak_rss_mb'] / i['file_mb']:.2f}")
PYEOF
