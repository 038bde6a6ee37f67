#!/usr/bin/env bash
# Compare benchmark (issue 30): replicates the ResNet-50 num_workers 0 and 4 traces to SIZE_GB
# each (make_big_trace.py), then in one run on those files: bench_diff (import both, analyse
# both, then diffRuns, each part timed; the ratio against opening both), and the whole
# `stallscope-cli diff` against `stallscope-cli analyze` of each, as CPU seconds of each child
# process. Prints the figures and the ratios. Does not gate.
# Usage: SIZE_GB=1 tests/bench/run_diff_bench.sh      (from the project root)
set -euo pipefail
SIZE_GB="${SIZE_GB:-0.2}"
BUILD="${BUILD:-build/release}"
WORK="${WORK:-${TMPDIR:-/tmp}/stallscope-bench}"
SRC="${SRC:-../shared/traces/kineto-tb-plugin}"
PY="${PYTHON:-python3}"
W0="$SRC/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"
W4="$SRC/resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz"
if [ ! -f "$W0" ]; then echo "SKIP: $W0 is absent"; exit 0; fi
mkdir -p "$WORK"
B="$WORK/diff_before_${SIZE_GB}gb.json"
A="$WORK/diff_after_${SIZE_GB}gb.json"
[ -f "$B" ] || "$PY" tests/bench/make_big_trace.py "$W0" "$B" --size-gb "$SIZE_GB"
[ -f "$A" ] || "$PY" tests/bench/make_big_trace.py "$W4" "$A" --size-gb "$SIZE_GB"
"$BUILD/tests/bench/bench_diff" "$B" "$A"
"$PY" - "$BUILD/app/stallscope-cli" "$B" "$A" <<'PYEOF'
import json, os, resource, subprocess, sys, time
cli, b, a = sys.argv[1:]
def cpu(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([cli, *args], stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), time.perf_counter() - t0
ab, wb = cpu(["analyze", "--json", b])
aa, wa = cpu(["analyze", "--json", a])
d, wd = cpu(["diff", "--json", b, a])
mb = (os.path.getsize(b) + os.path.getsize(a)) / 1e6
print(json.dumps({"files_mb": round(mb, 1), "analyze_both_cpu_s": round(ab + aa, 2),
                  "diff_cpu_s": round(d, 2), "ratio_cpu": round(d / (ab + aa), 3),
                  "analyze_both_wall_s": round(wb + wa, 2), "diff_wall_s": round(wd, 2),
                  "ratio_wall": round(wd / (wb + wa), 3)}))
PYEOF
