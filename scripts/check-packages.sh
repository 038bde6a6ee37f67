#!/usr/bin/env bash
# Checks the Debian packages of scripts/package.sh as a user's machine would see them, without
# installing anything: every package is unpacked (dpkg-deb -x) into one temporary root and run
# from there, so nothing may depend on the build folder.
#  * stallscope-cli --version finds the injection library (and the demo) under the root;
#    info and analyze on a real trace; the man page and completion are there;
#  * stallscope --screenshot (offscreen) on the bundled sample, from the root;
#  * desktop-file-validate, appstreamcli validate, the MIME database built in the root and
#    looked up for *.pt.trace.json, *.pt.trace.json.gz and *.summary.json, icons in the
#    hicolor sizes;
#  * lintian: every tag it reports must be explained in docs/packaging.md (packaging/lintian-explained).
# Usage: scripts/check-packages.sh DIR_WITH_DEBS
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:?usage: check-packages.sh DIR}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
R="$TMP/root"
mkdir -p "$R"
fail=0
say() { printf 'check-packages: %s\n' "$*"; }
bad() { say "FAIL: $*"; fail=1; }

shopt -s nullglob
debs=("$DIR"/*.deb)
[ ${#debs[@]} -gt 0 ] || { say "FAIL: no .deb in $DIR"; exit 1; }
for d in "${debs[@]}"; do
  dpkg-deb -x "$d" "$R"
  say "$(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version): Depends: $(dpkg-deb -f "$d" Depends)"
  dpkg-deb -f "$d" Depends | grep -q "libc6" || bad "$(basename "$d") has binaries but no Depends on libc6"
  # Its own synopsis on the Description's first line, the body indented by one space.
  desc="$(dpkg-deb -f "$d" Description)"
  if [ "$(head -1 <<<"$desc")" = "" ] || grep -q '^  ' <<<"$desc"; then
    bad "$(basename "$d"): malformed Description: $(head -3 <<<"$desc")"
  fi
done

CLI="$R/usr/bin/stallscope-cli"
GUI="$R/usr/bin/stallscope"
if [ -x "$CLI" ]; then
  v="$("$CLI" --version)"
  if [ -f "$R/usr/lib/stallscope/libstallscope_cupti_injection.so" ]; then
    grep -q "live GPU capture: built ($R/usr/lib/stallscope/libstallscope_cupti_injection.so)" <<<"$v" ||
      bad "the unpacked CLI does not find its injection library: $v"
  else
    grep -q "live GPU capture: not built" <<<"$v" || bad "no injection library packed, yet the CLI says: $v"
  fi
  if [ -e "$R/usr/lib/stallscope/stallscope-demo" ]; then
    grep -q "LibTorch demos (record --demo): $R/usr/lib/stallscope/stallscope-demo" <<<"$v" ||
      bad "the unpacked CLI does not find the demo: $v"
  fi
  TRACE="$(find "${STALLSCOPE_SHARED_TRACES:-../shared/traces}/hta/df_index_resolver" -name '*.json*' 2>/dev/null | sort | head -1 || true)"
  [ -z "$TRACE" ] && TRACE="resources/samples/synthetic_training.pt.trace.json.gz"
  "$CLI" info "$TRACE" >/dev/null || bad "info $TRACE"
  "$CLI" analyze --json "$TRACE" >"$TMP/a.json" || bad "analyze $TRACE"
  [ -f "$R/usr/share/man/man1/stallscope-cli.1.gz" ] || bad "no stallscope-cli.1.gz"
  zcat "$R/usr/share/man/man1/stallscope-cli.1.gz" | groff -man -ww -z 2>"$TMP/man.txt"
  [ ! -s "$TMP/man.txt" ] || bad "man stallscope-cli: $(cat "$TMP/man.txt")"
  [ -f "$R/usr/share/bash-completion/completions/stallscope-cli" ] || bad "no bash completion for stallscope-cli"
  # The completion as bash runs it: commands, a command's options (from its --help), values.
  complete_words() { # words... -> COMPREPLY, one per line
    bash -c 'source /usr/share/bash-completion/bash_completion
             source "$1"; shift
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
             _stallscope_cli; printf "%s\n" "${COMPREPLY[@]}"' _ "$R/usr/share/bash-completion/completions/stallscope-cli" "$@"
  }
  if [ -f /usr/share/bash-completion/bash_completion ]; then
    complete_words "$CLI" an | grep -qx analyze || bad "completion: stallscope-cli an<TAB> does not give analyze"
    complete_words "$CLI" -q re | grep -qx report || bad "completion: stallscope-cli -q re<TAB> does not give report"
    complete_words "$CLI" record --att | grep -qx -- --attach || bad "completion: record --att<TAB> does not give --attach"
    complete_words "$CLI" report --format p | grep -qx pdf || bad "completion: report --format p<TAB> does not give pdf"
    say "bash completion: commands, options from each command's --help, option values"
  else
    bad "bash-completion is not installed (scripts/setup-deps.sh installs it)"
  fi
  [ -f "$R/usr/share/stallscope/workloads/data_loading.py" ] || bad "no workloads"
  # The Python package, as Debian's python3 finds it, finds the CLI beside itself (usr/bin of
  # the same root): no STALLSCOPE_CLI, no stallscope-cli on PATH.
  PY="$R/usr/lib/python3/dist-packages"
  [ -f "$PY/stallscope/__init__.py" ] || bad "no Python package in dist-packages"
  find "$PY" -name __pycache__ | grep -q . && bad "__pycache__ in the package"
  env -u STALLSCOPE_CLI PATH=/usr/bin:/bin PYTHONPATH="$PY" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -c 'import stallscope, sys; sys.stdout.write(stallscope.find_cli())' >"$TMP/py-cli.txt" 2>&1 ||
    bad "python3 -c 'import stallscope': $(cat "$TMP/py-cli.txt")"
  [ "$(cat "$TMP/py-cli.txt")" = "$CLI" ] || bad "the Python package found $(cat "$TMP/py-cli.txt"), not $CLI"
  env -u STALLSCOPE_CLI PATH=/usr/bin:/bin PYTHONPATH="$PY" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -m stallscope "$TRACE" >"$TMP/py-out.txt" 2>&1 || bad "python3 -m stallscope: $(tail -3 "$TMP/py-out.txt")"
  grep -q "finding" "$TMP/py-out.txt" || bad "python3 -m stallscope printed no findings: $(head -3 "$TMP/py-out.txt")"
  say "stallscope-cli runs from the unpacked root: $(head -1 <<<"$v"), info and analyze on $(basename "$TRACE"); python3 -m stallscope finds it"
else
  bad "no stallscope-cli package"
fi

if [ -x "$GUI" ]; then
  if ! QT_QPA_PLATFORM=offscreen "$GUI" --screenshot "$TMP/gui.png" --size 1200x800 \
      resources/samples/synthetic_training.pt.trace.json.gz >"$TMP/gui.txt" 2>&1 || [ ! -s "$TMP/gui.png" ]; then
    bad "the unpacked GUI: $(tail -3 "$TMP/gui.txt")"
  fi
  [ -f "$R/usr/share/man/man1/stallscope.1.gz" ] || bad "no stallscope.1.gz"
  zcat "$R/usr/share/man/man1/stallscope.1.gz" | groff -man -ww -z 2>"$TMP/man.txt"
  [ ! -s "$TMP/man.txt" ] || bad "man stallscope: $(cat "$TMP/man.txt")"
  desktop="$R/usr/share/applications/io.github.stallscope.Stallscope.desktop"
  desktop-file-validate "$desktop" || bad "desktop-file-validate"
  appstreamcli validate --no-net "$R/usr/share/metainfo/io.github.stallscope.Stallscope.metainfo.xml" >"$TMP/as.txt" 2>&1 ||
    bad "appstreamcli validate: $(cat "$TMP/as.txt")"
  for px in 16 22 24 32 48 64 128 256; do
    f="$R/usr/share/icons/hicolor/${px}x${px}/apps/stallscope.png"
    if [ ! -f "$f" ] || ! file -b "$f" | grep -q "${px} x ${px}"; then bad "icon ${px}x${px}: $(file -b "$f" 2>&1)"; fi
  done
  [ -f "$R/usr/share/icons/hicolor/scalable/apps/stallscope.svg" ] || bad "no scalable icon"
  # The MIME database of the root, and a lookup by file name as xdg-mime does (globs2).
  update-mime-database "$R/usr/share/mime" >/dev/null 2>&1 || bad "update-mime-database"
  lookup() { # file name -> MIME type, by the longest matching glob
    local name="$1" best="" bestlen=0 w t g
    while IFS=: read -r w t g; do
      [[ "$w" == \#* ]] && continue
      # shellcheck disable=SC2053
      if [[ "$name" == $g ]] && ((${#g} > bestlen)); then best="$t"; bestlen=${#g}; fi
    done <"$R/usr/share/mime/globs2"
    echo "$best"
  }
  for pair in "run.pt.trace.json:application/x-pytorch-trace" "run.pt.trace.json.gz:application/x-pytorch-trace" \
              "rank3.summary.json:application/x-stallscope-rank-summary"; do
    got="$(lookup "${pair%%:*}")"
    [ "$got" = "${pair#*:}" ] || bad "MIME type of ${pair%%:*}: '$got', not ${pair#*:}"
  done
  grep -q "MimeType=.*application/x-pytorch-trace" "$desktop" || bad "the desktop file does not open traces"
  say "stallscope runs from the unpacked root (offscreen screenshot), desktop file, AppStream, MIME types, icons: checked"
else
  say "no stallscope package (no GUI build)"
fi

# lintian: tags not explained in docs/packaging.md fail.
if command -v lintian >/dev/null 2>&1; then
  for d in "${debs[@]}"; do
    # Exit 1: lintian itself failed; 2: tags at its --fail-on level (listed below, judged here).
    set +e
    lintian --tag-display-limit 0 "$d" >"$TMP/lintian-one.txt" 2>"$TMP/lintian-err.txt"
    rc=$?
    set -e
    if [ "$rc" -eq 1 ] || [ "$rc" -gt 2 ]; then
      bad "lintian failed on $(basename "$d"): $(tail -3 "$TMP/lintian-err.txt")"
    fi
    awk '{print $1" "$3}' "$TMP/lintian-one.txt" | sort -u >>"$TMP/lintian.txt"
  done
  while read -r level tag; do
    [ -n "$tag" ] || continue
    if grep -qx "$tag" packaging/lintian-explained; then
      say "lintian $level $tag (explained in docs/packaging.md)"
    else
      bad "lintian $level $tag is not explained in docs/packaging.md"
    fi
  done <"$TMP/lintian.txt"
else
  bad "lintian is not installed (scripts/setup-deps.sh installs it)"
fi
[ "$fail" -eq 0 ] || { say "FAILED"; exit 1; }
say "OK: ${#debs[@]} packages"
