#!/usr/bin/env bash
# Builds the libFuzzer targets (cmake --preset fuzz: clang-14, ASan + UBSan), makes their
# seed corpora and runs every target (docs/fuzzing.md).
#
#   ./scripts/fuzz.sh --seconds N   CI: each target N seconds, two at a time; exits 1 on any
#                                   crash, hang, leak or OOM and prints where the input is
#   ./scripts/fuzz.sh --runs R --seconds N
#                                   CI as scripts/test.sh runs it: each target R inputs from
#                                   the fresh seeds with a fixed -seed (the same inputs every
#                                   run: a CI failure reproduces, a pass is not luck), at most
#                                   N seconds; its corpus is build/fuzz/corpus-fixed
#   ./scripts/fuzz.sh --minutes N   the long run: each target N minutes, one after the other,
#                                   crashes collected without stopping (libFuzzer -fork)
# Options:
#   --jobs J            long run: J fuzzing processes per target (default 1)
#   --targets a,b       only these (chrome_json chrome_gzip tensorboard capture_protocol
#                       annotated_trace formats pickle foreign mcp)
#   --fresh             start from the seeds again (forget build/fuzz/corpus)
#   --seed S            libFuzzer's -seed (default: 1 with --runs, else random)
#   --no-build          use the binaries already built (no configure, no build)
#   --build-dir DIR     the build with the fuzz targets (default build/fuzz; CI: build/asan,
#                       whose preset builds them beside the sanitizer tests)
#
# The corpus of each target is kept in build/fuzz/corpus/<target>, so later runs continue
# from it; new seeds are merged into it (-merge=1) before every run. Seeds: the committed
# tests/fuzz/seeds/ and tests/fuzz/regressions/, plus slices of the real traces
# (../shared/traces or $STALLSCOPE_SHARED_TRACES) cut into build/fuzz/seeds by
# tests/fuzz/make_seeds.py, and capture streams from fuzz_make_capture_seeds. Crashing
# inputs land in build/fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SECONDS_PER_TARGET=""
MINUTES=""
JOBS=1
TARGETS=(chrome_json chrome_gzip tensorboard capture_protocol annotated_trace formats pickle foreign mcp)
FRESH=0
BUILD=1
RUNS=""
SEED=""
BUILD_DIR_ARG="build/fuzz"
while (($#)); do
  case "$1" in
    --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --minutes) MINUTES="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --targets) IFS=, read -r -a TARGETS <<<"$2"; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --no-build) BUILD=0; shift ;;
    --build-dir) BUILD_DIR_ARG="$2"; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$SECONDS_PER_TARGET" ] && [ -z "$MINUTES" ]; then SECONDS_PER_TARGET=60; fi
if [ -n "$MINUTES" ]; then RUN_SECONDS=$((MINUTES * 60)); MODE=long; else RUN_SECONDS="$SECONDS_PER_TARGET"; MODE=ci; fi
CORPUS_ROOT="corpus"
if [ -n "$RUNS" ]; then
  [ "$MODE" = ci ] || { echo "fuzz.sh: --runs is for the CI mode (--seconds)" >&2; exit 2; }
  # The same corpus every time (only then are the runs the same), in a folder of its own:
  # the long runs' corpus in build/fuzz/corpus is kept.
  FRESH=1
  CORPUS_ROOT="corpus-fixed"
  SEED="${SEED:-1}"
fi

case "$BUILD_DIR_ARG" in /*) BUILD_DIR="$BUILD_DIR_ARG" ;; *) BUILD_DIR="$ROOT/$BUILD_DIR_ARG" ;; esac
BIN="$BUILD_DIR/tests/fuzz"
if ((BUILD)) && [ "$BUILD_DIR" != "$ROOT/build/fuzz" ]; then
  echo "fuzz.sh: --build-dir is for binaries already built (add --no-build)" >&2; exit 2
fi
T0=$(date +%s)
if ((BUILD)); then
  ./scripts/setup-deps.sh
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$(nproc)"
fi
T_BUILT=$(date +%s)

# ------------------------------------------------------------------ seeds
SHARED="${STALLSCOPE_SHARED_TRACES:-$ROOT/../shared/traces}"
SEEDS="$BUILD_DIR/seeds"
if [ ! -f "$SEEDS/.done" ] || [ "$ROOT/tests/fuzz/make_seeds.py" -nt "$SEEDS/.done" ]; then
  rm -rf "$SEEDS"
  mkdir -p "$SEEDS"
  if [ -d "$SHARED" ]; then
    python3 tests/fuzz/make_seeds.py --traces "$SHARED" --out "$SEEDS"
  else
    echo "fuzz.sh: $SHARED not found: only the committed seeds are used"
  fi
  "$BIN/fuzz_make_capture_seeds" "$SEEDS/capture_protocol" >/dev/null
  touch "$SEEDS/.done"
fi

declare -A SEED_DIRS=(
  [chrome_json]="$SEEDS/json tests/fuzz/seeds/json"
  [chrome_gzip]="$SEEDS/chrome_gzip tests/fuzz/seeds/chrome_gzip"
  [tensorboard]="$SEEDS/tensorboard tests/fuzz/seeds/tensorboard"
  [capture_protocol]="$SEEDS/capture_protocol tests/fuzz/seeds/capture_protocol"
  [annotated_trace]="$SEEDS/json tests/fuzz/seeds/json"
  [formats]="$SEEDS/formats tests/fuzz/seeds/formats"
  [pickle]="tests/fuzz/seeds/pickle"
  [foreign]="$SEEDS/foreign tests/fuzz/seeds/foreign"
  [mcp]="tests/fuzz/seeds/mcp"
)
declare -A MAX_LEN=([chrome_json]=65536 [chrome_gzip]=65536 [tensorboard]=4096 [capture_protocol]=65536
                    [annotated_trace]=65536 [formats]=65536 [pickle]=65536 [foreign]=131072
                    [mcp]=8192)
declare -A DICT=([chrome_json]=1 [chrome_gzip]=1 [annotated_trace]=1 [mcp]=1)

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
LOGS="$BUILD_DIR/logs"
mkdir -p "$LOGS"

# One target: merge the seeds into its corpus, fuzz, write the log.
run_target() {
  local t="$1"
  local corpus="$BUILD_DIR/$CORPUS_ROOT/$t" artifacts="$BUILD_DIR/artifacts/$t" log="$LOGS/$t.log"
  ((FRESH)) && rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  local dirs=()
  for d in ${SEED_DIRS[$t]} "tests/fuzz/regressions/$t"; do [ -d "$d" ] && dirs+=("$d"); done
  local common=(-rss_limit_mb=2048 -timeout=10 -max_len="${MAX_LEN[$t]}" -print_final_stats=1)
  [ -n "${DICT[$t]:-}" ] && common+=(-dict="$ROOT/tests/fuzz/json.dict")
  local fixed=()  # the fuzzing run only, not the merge
  [ -n "$SEED" ] && fixed+=(-seed="$SEED")
  [ -n "$RUNS" ] && fixed+=(-runs="$RUNS")
  local start end rc
  start=$(date +%s)
  "$BIN/fuzz_$t" -merge=1 "${common[@]}" "$corpus" "${dirs[@]}" >"$LOGS/$t.merge.log" 2>&1 || true
  if [ "$MODE" = long ]; then
    nice -n 10 "$BIN/fuzz_$t" "${common[@]}" -max_total_time="$RUN_SECONDS" -artifact_prefix="$artifacts/" \
      -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 "$corpus" >"$log" 2>&1 && rc=0 || rc=$?
  else
    "$BIN/fuzz_$t" "${common[@]}" "${fixed[@]}" -max_total_time="$RUN_SECONDS" -artifact_prefix="$artifacts/" \
      "$corpus" >"$log" 2>&1 && rc=0 || rc=$?
  fi
  end=$(date +%s)
  echo "$rc $((end - start))" >"$LOGS/$t.status"
}

rm -f "$LOGS"/*.status
if [ "$MODE" = ci ]; then
  running=0
  for t in "${TARGETS[@]}"; do
    if ((running >= 2)); then wait -n || true; running=$((running - 1)); fi
    echo "fuzz.sh: $t for ${RUN_SECONDS} s"
    run_target "$t" &
    running=$((running + 1))
  done
  wait || true
else
  for t in "${TARGETS[@]}"; do
    echo "fuzz.sh: $t for $MINUTES min ($JOBS job(s))"
    run_target "$t"
  done
fi
T_END=$(date +%s)

python3 tests/fuzz/fuzz_summary.py --build "$BUILD_DIR" --corpus-root "$CORPUS_ROOT" "${TARGETS[@]}" && status=0 || status=$?
echo "fuzz.sh: build $((T_BUILT - T0)) s, seeds + fuzzing $((T_END - T_BUILT)) s, total $((T_END - T0)) s"
exit "$status"
