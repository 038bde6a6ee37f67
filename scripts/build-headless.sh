#!/usr/bin/env bash
# The headless, portable build for GPU servers (no Qt, no display, no package manager):
# stallscope-cli and the CUPTI injection library, with protobuf and simdjson linked in, copied
# into a folder that can be moved to another Linux machine (same or newer glibc) as is:
#   DEST/bin/stallscope-cli
#   DEST/lib/stallscope/libstallscope_cupti_injection.so   (found relative to the CLI)
# Then checks it (scripts/check-portable.sh). Usage: scripts/build-headless.sh [DEST]
# (default: dist/headless, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-dist/headless}"
JOBS="$(nproc)"

cmake --preset headless >/dev/null
cmake --build --preset headless -j "$JOBS"

rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/lib/stallscope"
cp build/headless/app/stallscope-cli "$DEST/bin/"
if [ -f build/headless/capture/cupti/libstallscope_cupti_injection.so ]; then
  cp build/headless/capture/cupti/libstallscope_cupti_injection.so "$DEST/lib/stallscope/"
fi
strip --strip-unneeded "$DEST/bin/stallscope-cli" "$DEST"/lib/stallscope/*.so 2>/dev/null || true
./scripts/check-portable.sh "$DEST"
