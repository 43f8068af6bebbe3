#!/usr/bin/env bash
# make explorer: builds poslab for the browser and serves the explorer (docs/explorer.md).
#
#   scripts/explorer.sh [build|serve|all]        run from anywhere; default all
#
# build  installs Debian's emscripten if missing (scripts/deps.sh), compiles poslab's inference
#        path to WebAssembly into build/wasm (explorer/CMakeLists.txt, emcmake; JOBS=n, default
#        1), and puts what the page loads into docs/explorer/: poslab.js and poslab.wasm, and the
#        study's models from docs/results/models as models/<pe>.safetensors. After it the folder
#        is the whole site, ready to publish as it is.
# serve  serves docs/explorer/ at http://127.0.0.1:PORT/ (PORT, default 8000) with Python's
#        http.server until Ctrl-C; it opens nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
BUILD=${WASM_BUILD:-build/wasm}
SITE=docs/explorer
# Debian's emscripten runs its JavaScript tools with node, which finds Debian's node-acorn only
# here when node is not Debian's own build.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}

build() {
  POSLAB_EXPLORER=1 scripts/deps.sh
  [ -f "$BUILD/CMakeCache.txt" ] ||
    emcmake cmake -S explorer -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j "${JOBS:-1}"
  cp -p "$BUILD/poslab.js" "$BUILD/poslab.wasm" "$SITE/"
  mkdir -p "$SITE/models"
  cp -pu docs/results/models/*.safetensors "$SITE/models/"
  echo "explorer: $SITE/ built ($(du -sh "$SITE" | cut -f1); emscripten $(emcc -dumpversion))"
}

serve() {
  local port=${PORT:-8000}
  [ -f "$SITE/poslab.wasm" ] || { echo "explorer: $SITE/poslab.wasm missing: run $0 build" >&2; exit 1; }
  echo "explorer: http://127.0.0.1:$port/  (serving $SITE; Ctrl-C stops it)"
  exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$SITE"
}

case $what in
  build) build ;;
  serve) serve ;;
  all) build && serve ;;
  *) echo "usage: $0 [build|serve|all]" >&2; exit 2 ;;
esac
