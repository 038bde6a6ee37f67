#!/usr/bin/env bash
# The prepared GPU check: for an NVIDIA machine with Python and PyTorch 2.x but no Qt, no
# package manager and no network. Build the headless binaries here first
# (scripts/build-headless.sh -> dist/headless, carried with the working tree), then on the
# GPU machine:
#   OUT=/some/folder scripts/gpu-check.sh            # the check, under 8 minutes
#   scripts/gpu-check.sh --dry-run                   # no GPU: what a CPU can check
# Each workload of resources/workloads/ runs bad and fixed under torch.profiler, under
# `stallscope-cli record` (CUPTI) and under `record --attach` (Kineto's daemon protocol);
# scripts/gpu_check.py says what is checked. Results: $OUT/results.json and $OUT/traces/.
# Options are gpu_check.py's (--bin DIR, --cli PATH, --python PY, --only W1,W2, --budget S).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=""
for p in python3 /usr/bin/python3 python; do
  if command -v "$p" >/dev/null 2>&1; then PY="$p"; break; fi
done
if [ -z "$PY" ]; then
  echo "gpu-check: no python3 on this machine" >&2
  exit 2
fi
# 8 minutes in all: the runs stop at gpu_check.py's budget (440 s); this is the backstop (on
# SIGINT the script still writes what it has). Exit: 0 all passed, 1 a check failed, 2 runs
# skipped for time.
exec timeout --signal=INT --kill-after=15 465 "$PY" scripts/gpu_check.py "$@"
