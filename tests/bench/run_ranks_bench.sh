#!/usr/bin/env bash
# Many ranks in one session (issue 13): RANKS ranks of >= SIZE_MB each, made from the 8 DLRM
# ranks (make_rank_traces.py), analysed and opened in the GUI by holding digests (rank
# summaries) and loading one rank's detail on demand. The baseline in the same run is the
# same folder loaded whole: every rank imported, analysed and kept (`analyze --json DIR`, what
# the GUI did for a folder before). Each measure is a separate process (its own peak RSS).
#
#   cmake --preset release && cmake --build --preset release
#   RANKS=128 SIZE_MB=50 tests/bench/run_ranks_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build/release}
WORK=${WORK:-/tmp/stallscope-bench}
RANKS=${RANKS:-128}
SIZE_MB=${SIZE_MB:-50}
SHARED=${STALLSCOPE_SHARED_TRACES:-../shared/traces}
DIR=$WORK/ranks$RANKS
SUM=$WORK/ranks$RANKS-summaries
CLI=$BUILD/app/stallscope-cli
GUI=$BUILD/app/stallscope
mkdir -p "$WORK"
if [ "$(find "$DIR" -name '*.pt.trace.json' 2>/dev/null | wc -l)" -ne "$RANKS" ]; then
    rm -rf "$DIR"
    python3 tests/bench/make_rank_traces.py "$SHARED/param-dlrm-8rank" "$DIR" --ranks "$RANKS" --size-mb "$SIZE_MB"
fi
bytes=$(du -sb "$DIR" | cut -f1)
echo "ranks: $RANKS files, $(awk -v b="$bytes" 'BEGIN{printf "%.2f GB", b/1e9}') in $DIR"
# Warm the page cache so every measure reads from memory alike.
cat "$DIR"/*.pt.trace.json > /dev/null

declare -A S KB
measure() { # name, command...
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" ||
        { echo "$name failed:"; tail -5 "$WORK/$name.err"; exit 1; }
    read -r S[$name] KB[$name] < "$WORK/time.txt"
    printf "%-34s %8.2f s  peak RSS %7.0f MB\n" "$name" "${S[$name]}" "$(echo "${KB[$name]} / 1024" | bc -l)"
}

measure baseline_load_all "$CLI" analyze --json "$DIR"
measure ranks_digested "$CLI" analyze --ranks --json "$DIR"
rm -rf "$SUM"
measure summaries_one_process "$CLI" analyze --summary -o "$SUM" "$DIR"
first=$(find "$DIR" -name '*.pt.trace.json' | sort | sed -n 1p) # (head would close the pipe early: pipefail)
measure summary_one_rank "$CLI" analyze --summary -o "$WORK/one.summary.json" "$first"
measure merge_summaries "$CLI" merge --json "$SUM"
cmp -s "$WORK/ranks_digested.out" "$WORK/merge_summaries.out" ||
    { echo "merge of the summaries differs from analyze --ranks"; exit 1; }
export QT_QPA_PLATFORM=offscreen
measure gui_first_paint_folder "$GUI" --screenshot "$WORK/ranks-gui-folder.png" --size 1600x1000 --view ranks "$DIR"
measure gui_first_paint_summaries "$GUI" --screenshot "$WORK/ranks-gui-summaries.png" --size 1600x1000 --view ranks "$SUM"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }'; }
echo
echo "ratios against loading every rank whole (baseline_load_all):"
for m in ranks_digested summaries_one_process merge_summaries gui_first_paint_folder gui_first_paint_summaries; do
    printf "  %-32s time %5s×  peak RSS %5s×\n" "$m" "$(ratio "${S[$m]}" "${S[baseline_load_all]}")" \
        "$(ratio "${KB[$m]}" "${KB[baseline_load_all]}")"
done
echo "  merge output equals analyze --ranks: yes"
echo "screenshots: $WORK/ranks-gui-folder.png, $WORK/ranks-gui-summaries.png"
