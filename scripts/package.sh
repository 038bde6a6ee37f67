#!/usr/bin/env bash
# Builds the Debian packages into dist/packages/ (or the folder given):
#   stallscope-cli   from the headless build (no Qt): CLI, CUPTI injection library, workloads,
#                    man page, bash completion
#   stallscope       from the release build: the GUI and its desktop integration
#   stallscope-demo  from the release build, when LibTorch was found
# Then checks them (scripts/check-packages.sh). Usage: scripts/package.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${1:-dist/packages}"
JOBS="$(nproc)"
./scripts/setup-deps.sh

cmake --preset release >/dev/null
cmake --build --preset release -j "$JOBS"
cmake --preset headless >/dev/null
cmake --build --preset headless -j "$JOBS"

# The CLI package's Depends, from its binaries (dpkg-shlibdeps). CUPTI comes with NVIDIA's
# toolkit or PyTorch's wheels, not from a Debian package, so its missing information is
# ignored (and named in Suggests by the package itself).
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/debian"
touch "$STAGE/debian/control"
cp build/headless/app/stallscope-cli "$STAGE/"
cp build/headless/capture/cupti/libstallscope_cupti_injection.so "$STAGE/" 2>/dev/null || true
ELF=(-e stallscope-cli)
if [ -f "$STAGE/libstallscope_cupti_injection.so" ]; then ELF+=(-e libstallscope_cupti_injection.so); fi
DEPENDS="$(cd "$STAGE" && dpkg-shlibdeps -O --ignore-missing-info "${ELF[@]}" | sed -n 's/^shlibs:Depends=//p')"
if [ -z "$DEPENDS" ]; then
  echo "package.sh: dpkg-shlibdeps gave no Depends for stallscope-cli" >&2
  exit 1
fi
echo "package: stallscope-cli Depends: $DEPENDS"
cmake --preset headless -DSTALLSCOPE_CLI_DEPENDS="$DEPENDS" >/dev/null

rm -rf "$OUT"
mkdir -p "$OUT"
for build in headless release; do
  (cd "build/$build" && cpack -G DEB -B "$STAGE/cpack-$build" >/dev/null)
  cp "$STAGE/cpack-$build"/*.deb "$OUT/"
done
ls -l "$OUT"
"$ROOT/scripts/check-packages.sh" "$OUT"
