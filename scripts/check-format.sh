#!/usr/bin/env bash
# clang-format (.clang-format) on the lines changed since a base commit: the C++ changed
# after the base must be formatted; older lines are left as they are (no mass reformat).
#
#   ./scripts/check-format.sh           base: the commit in .ci/format-base
#   ./scripts/check-format.sh BASE      any commit, e.g. origin/main before pushing
#   ./scripts/check-format.sh --fix     rewrite the changed lines in place instead
#
# Exits 1 and prints the diff when a changed line is not formatted. In a clone without the
# base commit (shallow), says so and checks nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
FIX=0
if [ "${1:-}" = "--fix" ]; then FIX=1; shift; fi
BASE="${1:-$(cat .ci/format-base)}"
GCF="$(command -v git-clang-format-14 || command -v git-clang-format || true)"
if [ -z "$GCF" ]; then echo "check-format: git-clang-format not found (clang-format-14)" >&2; exit 2; fi
if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null; then
  echo "check-format: base $BASE is not in this clone (shallow?): nothing checked"
  exit 0
fi
EXT=c,cc,cpp,h,hpp,cu
if ((FIX)); then
  "$GCF" --binary clang-format-14 --force --extensions "$EXT" "$BASE"  # new files: git add them first
  exit 0
fi
diff="$("$GCF" --binary clang-format-14 --diff --extensions "$EXT" "$BASE" 2>&1 || true)"
case "$diff" in
  ""|*"no modified files to format"*|*"did not modify any files"*)
    echo "check-format: lines changed since $(git rev-parse --short "$BASE") are formatted"
    exit 0 ;;
esac
echo "$diff"
echo "check-format: lines changed since $(git rev-parse --short "$BASE") are not formatted; fix with ./scripts/check-format.sh --fix" >&2
exit 1
