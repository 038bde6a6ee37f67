#!/usr/bin/env bash
# Checks a headless build folder (scripts/build-headless.sh) for what a GPU server without
# Qt or a package manager needs:
#  * the shared libraries each binary needs (objdump -p NEEDED) are only glibc's, libstdc++,
#    libgcc_s and zlib; the injection library may also need CUPTI (the CUDA driver loads it
#    into a CUDA program, where CUPTI is at hand);
#  * the symbol versions needed are at most glibc 2.34 and GLIBCXX_3.4.30 (Ubuntu 22.04,
#    Debian 12 and newer);
#  * no Qt, protobuf or simdjson library is needed, and no RPATH points into a build folder;

#  * the CLI runs: --version, info / analyze / report on a real trace, PDF refused with a
#    message, `record` of a program that uses no GPU;
#  * a trace it records opens in the desktop GUI (when build/release has one).
# Usage: scripts/check-portable.sh DEST
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:?usage: check-portable.sh DEST}"
CLI="$DEST/bin/stallscope-cli"
INJ="$DEST/lib/stallscope/libstallscope_cupti_injection.so"
fail=0
say() { printf 'check-portable: %s\n' "$*"; }

# glibc's own libraries (libc, libm, libdl, librt, libpthread, the loader), the C++ runtime, zlib.
ALLOWED='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|librt\.so\.1|libpthread\.so\.0|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1)$'
check_needed() { # file extra-allowed-regex
  local f="$1" extra="$2" lib
  [ -f "$f" ] || { say "FAIL: $f is missing"; fail=1; return; }
  while read -r lib; do
    if [[ "$lib" =~ $ALLOWED ]] || { [ -n "$extra" ] && [[ "$lib" =~ $extra ]]; }; then
      continue
    fi
    say "FAIL: $(basename "$f") needs $lib"
    fail=1
  done < <(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}')
  local rpath
  rpath="$(objdump -p "$f" | awk '$1 == "RPATH" || $1 == "RUNPATH" {print $2}')"
  if [[ "$rpath" == *"/build/"* || "$rpath" == *"$PWD"* ]]; then
    say "FAIL: $(basename "$f") has a run path into the build folder: $rpath"
    fail=1
  fi
      local glibc cxx
  glibc="$(objdump -T "$f" | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tail -1)"
  cxx="$(objdump -T "$f" | grep -oE 'GLIBCXX_[0-9.]+' | sort -uV | tail -1 || true)"
  # The oldest systems it must start on: Ubuntu 22.04 (glibc 2.35, GCC 12's libstdc++) and
  # Debian 12; glibc 2.34 and GLIBCXX_3.4.30 at most.
  if [ "$(printf '%s\n' "GLIBC_2.34" "$glibc" | sort -V | tail -1)" != "GLIBC_2.34" ]; then
    say "FAIL: $(basename "$f") needs $glibc (newer than Ubuntu 22.04's)"; fail=1
  fi
  if [ -n "$cxx" ] && [ "$(printf '%s\n' "GLIBCXX_3.4.30" "$cxx" | sort -V | tail -1)" != "GLIBCXX_3.4.30" ]; then
    say "FAIL: $(basename "$f") needs $cxx (newer than GCC 12's C++ runtime)"; fail=1
  fi
  say "$(basename "$f"): needs $(objdump -p "$f" | awk '$1 == "NEEDED" {printf "%s ", $2}'); newest symbol versions $glibc ${cxx:-}; run path ${rpath:-none}"
}

check_needed "$CLI" ''
if [ -f "$INJ" ]; then
  check_needed "$INJ" '^libcupti\.so\.[0-9]+$'
else
  say "no injection library in $DEST (built without the CUDA toolkit): GPU capture unavailable there"
fi

# It runs, from its folder, with nothing of the build tree.
TRACE="${STALLSCOPE_SHARED_TRACES:-../shared/traces}/hta/df_index_resolver"
TRACE="$(find "$TRACE" -maxdepth 1 -name '*.json*' 2>/dev/null | sort | head -1 || true)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$CLI" --version | sed 's/^/  /'
if [ -n "$TRACE" ]; then
  "$CLI" info "$TRACE" >"$TMP/info.txt" || { say "FAIL: info $TRACE"; fail=1; }
  "$CLI" analyze --json "$TRACE" >"$TMP/a.json" || { say "FAIL: analyze $TRACE"; fail=1; }
  "$CLI" report -o "$TMP/r.html" "$TRACE" >/dev/null || { say "FAIL: report html"; fail=1; }
  "$CLI" report -o "$TMP/r.md" "$TRACE" >/dev/null || { say "FAIL: report md"; fail=1; }
  if "$CLI" report -o "$TMP/r.pdf" "$TRACE" >"$TMP/pdf.txt" 2>&1; then
    say "FAIL: a PDF report was accepted by a build without Qt"; fail=1
  elif ! grep -qi "qt" "$TMP/pdf.txt"; then
    say "FAIL: the PDF refusal does not say why: $(cat "$TMP/pdf.txt")"; fail=1
  fi
  say "info, analyze, report (HTML, Markdown) ran on $(basename "$TRACE"); PDF refused: $(head -1 "$TMP/pdf.txt")"
else
  say "no real trace found (set STALLSCOPE_SHARED_TRACES): skipped the trace commands"
fi
# A program that uses no GPU: the recorder runs it and says there was nothing on a GPU.
if "$CLI" record -o "$TMP/t.pt.trace.json.gz" -- /bin/sh -c 'exit 0' >"$TMP/rec.txt" 2>&1; then
  say "record of a program without CUDA: $(grep -m1 -iE 'gpu|cuda|event' "$TMP/rec.txt" || head -1 "$TMP/rec.txt")"
else
  say "FAIL: record of /bin/sh failed: $(tail -3 "$TMP/rec.txt")"; fail=1
fi
# A recording made with the headless CLI (a scripted training loop as the source) opens in the
# desktop GUI when one was built here (build/release), offscreen.
if "$CLI" record --fake-source -o "$TMP/server.pt.trace.json.gz" >"$TMP/fake.txt" 2>&1; then
  GUI="${STALLSCOPE_GUI_BINARY:-build/release/app/stallscope}"
  if [ -x "$GUI" ]; then
    if QT_QPA_PLATFORM=offscreen "$GUI" --screenshot "$TMP/server.png" --size 1200x800 "$TMP/server.pt.trace.json.gz" \
        >"$TMP/gui.txt" 2>&1 && [ -s "$TMP/server.png" ]; then
      say "a trace recorded by the headless CLI opened in the desktop GUI ($GUI)"
    else
      say "FAIL: the desktop GUI did not open the headless recording: $(tail -3 "$TMP/gui.txt")"; fail=1
    fi
  else
    say "no desktop GUI built here ($GUI): the headless recording was not opened in it"
  fi
else
  say "FAIL: record --fake-source: $(tail -3 "$TMP/fake.txt")"; fail=1
fi
if [ "$fail" -ne 0 ]; then
  say "FAILED"
  exit 1
fi
say "OK: $DEST runs without Qt, protobuf or simdjson installed"
