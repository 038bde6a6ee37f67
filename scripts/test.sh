#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest:
# clang-format on the lines changed since .ci/format-base, the Release build (all labels
# but bench), then the Qt-free libraries and their tests under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the headless portable build for GPU servers and its check
# (scripts/build-headless.sh: no Qt; only libc, libstdc++, libm, libgcc, zlib and CUPTI
# needed), then the fuzz targets (libFuzzer, 6000 fixed-seed inputs each; docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
JOBS="$(nproc)"

./scripts/check-format.sh

cmake --preset release >/dev/null
cmake --build --preset release -j "$JOBS"
ctest --preset release -j "$JOBS"

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
ctest --preset asan -j "$JOBS"

./scripts/build-headless.sh

./scripts/fuzz.sh --runs 6000 --seconds 120
