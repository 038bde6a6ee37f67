#!/usr/bin/env bash
# Installs the Debian 12 packages Stallscope needs; skips everything already present,
# so it is cheap to run before every build.
set -euo pipefail

# Only what the build and the tests use (qt6-base-dev brings the GL headers Qt's CMake
# files ask for; Qt Charts, QtOpenGL and libdeflate are not used).
PKGS=(
  cmake ninja-build g++ pkg-config ccache
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev
  xvfb xauth fonts-dejavu-core
  libprotobuf-dev protobuf-compiler
  libsimdjson-dev zlib1g-dev libsqlite3-dev
  poppler-utils
  clang-14 libfuzzer-14-dev libclang-rt-14-dev clang-format-14
  chromium
  shellcheck python3-yaml
  python3-torch python3-venv
  dpkg-dev lintian desktop-file-utils appstream shared-mime-info file man-db bash-completion
  libtorch-dev
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
command -v python3 >/dev/null 2>&1 || missing+=(python3)

if ((${#missing[@]})); then
  echo "setup-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
