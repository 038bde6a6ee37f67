#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest:
# clang-format on the lines changed since .ci/format-base, the Release build (all labels
# but bench), then the Qt-free libraries and their tests under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the headless portable build for GPU servers and its check
# (scripts/build-headless.sh: no Qt; only libc, libstdc++, libm, libgcc, zlib and CUPTI
# needed), the GPU check's dry run and the Debian packages (scripts/package.sh), then the
# fuzz targets (libFuzzer, 6000 fixed-seed inputs each; docs/fuzzing.md).
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
# The prepared GPU check, as far as a CPU allows (the workloads, the headless CLI, record and
# attach without a GPU, the GPU verdicts on made-up figures).
OUT="$(mktemp -d)" ./scripts/gpu-check.sh --dry-run
# The Debian packages from the two builds above, unpacked and run, desktop-file-validate,
# appstreamcli, the MIME database, man pages, lintian (scripts/check-packages.sh).
./scripts/package.sh "$(mktemp -d)/packages"

./scripts/fuzz.sh --runs 6000 --seconds 120
