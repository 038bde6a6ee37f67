#!/usr/bin/env bash
# Installs what is missing, builds Release and opens the GUI on PATH (default: the
# bundled sample trace). Extra options go to `stallscope` (see `stallscope --help`), e.g.
#   ./scripts/run.sh --screenshot out.png --view flame PATH
# Without a display (no DISPLAY / WAYLAND_DISPLAY) the GUI runs under Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

SAMPLE="resources/samples/synthetic_training.pt.trace.json.gz"
args=("$@")
# No path among the arguments: open the sample.
has_path=0
skip=0
for a in "${args[@]}"; do
  if ((skip)); then skip=0; continue; fi
  case "$a" in
    --screenshot|--size|--finding|--view|--theme) skip=1 ;;
    -*) ;;
    *) has_path=1 ;;
  esac
done
((has_path)) || args+=("$SAMPLE")

APP=./build/release/app/stallscope
screenshot=0
for a in "${args[@]}"; do [ "$a" = "--screenshot" ] && screenshot=1; done
if ((screenshot)) || [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$APP" "${args[@]}"
fi
echo "run.sh: no display; running the GUI under Xvfb (use --screenshot OUT.png to render a PNG instead)" >&2
exec xvfb-run -a -s "-screen 0 1920x1080x24" "$APP" "${args[@]}"
