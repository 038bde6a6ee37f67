#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest:
# clang-format on the lines changed since .ci/format-base, the Release build (all labels
# but bench), then the Qt-free libraries, their tests and the fuzz targets under
# AddressSanitizer + UndefinedBehaviorSanitizer (clang-14; labels bench, gui and audit left
# out: the audits are release-build figures; so is PyTorch's time in the workloads), then the headless portable build for GPU
# servers and its check (scripts/build-headless.sh: no Qt; only libc, libstdc++, libm,
# libgcc, zlib and CUPTI needed), the GPU check's dry run and the Debian packages
# (scripts/package.sh), then the fuzz targets (libFuzzer, 2000 fixed-seed inputs each;
# docs/fuzzing.md).
# Each phase's seconds are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

# Seconds per phase, printed at the end (also when a phase fails): CI shows only the tail.
PHASES=()
PHASE_NAME="" PHASE_T0=$(date +%s) ALL_T0=$(date +%s)
phase() {
  local now; now=$(date +%s)
  [ -n "$PHASE_NAME" ] && PHASES+=("$(printf '%-28s %5d s' "$PHASE_NAME" $((now - PHASE_T0)))")
  PHASE_NAME="$1" PHASE_T0=$now
}
report_phases() {
  local rc=$?
  phase ""
  echo "test.sh: time per phase (exit $rc)"
  printf '  %s\n' "${PHASES[@]}"
  printf '  %-28s %5d s\n' total $(($(date +%s) - ALL_T0))
}
trap report_phases EXIT

phase "setup-deps"
./scripts/setup-deps.sh
JOBS="$(nproc)"

phase "check-format"
./scripts/check-format.sh

phase "release build"
cmake --preset release >/dev/null
cmake --build --preset release -j "$JOBS"
phase "release tests"
ctest --preset release -j "$JOBS"

phase "asan build"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS"
phase "asan tests"
ctest --preset asan -j "$JOBS"

phase "headless build + check"
./scripts/build-headless.sh
# The prepared GPU check, as far as a CPU allows (the workloads, the headless CLI, record and
# attach without a GPU, the GPU verdicts on made-up figures).
phase "gpu-check dry run"
# Two workloads prove the script, the headless binaries and the workloads together;
# test_workloads_cpu has run all of them on the CPU.
OUT="$(mktemp -d)" ./scripts/gpu-check.sh --dry-run --only data_loading,sync_copies
# The Debian packages from the two builds above, unpacked and run, desktop-file-validate,
# appstreamcli, the MIME database, man pages, lintian (scripts/check-packages.sh).
phase "packages"
./scripts/package.sh "$(mktemp -d)/packages"

# The fuzz targets were built by the asan preset above (clang-14: one sanitizer build serves
# the tests and the fuzzers).
phase "fuzz"
./scripts/fuzz.sh --build-dir build/asan --no-build --runs 2000 --seconds 30
