#!/usr/bin/env bash
# Installs what is missing, builds Release and runs the main job on PATH
# (default: the bundled sample trace).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
TRACE="${1:-resources/samples/synthetic_training.pt.trace.json.gz}"
exec ./build/release/app/stallscope-cli info "$TRACE"
