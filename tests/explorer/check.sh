#!/usr/bin/env bash
# The explorer's browser test (tests/explorer/check.py): the page in Debian's headless Chromium
# against `poslab eval`, every scheme, intervention and scaling it offers, to 1e-5; one
# screenshot per view.
#
#   tests/explorer/check.sh PATH/TO/poslab [SCREENSHOT_DIR]
#
# Installs emscripten and chromium when missing (scripts/deps.sh), builds the WebAssembly
# (scripts/explorer.sh build: build/wasm, JOBS cores, default all: on a fresh clone this build is
# most of the test, the longest of make test), then runs the check on a private copy of poslab
# (the build tree may be relinked meanwhile). Screenshots go to SCREENSHOT_DIR (default: a
# temporary folder, removed); docs/explorer/screenshots holds the ones the docs show.
set -euo pipefail
POSLAB=${1:?usage: check.sh PATH/TO/poslab [SCREENSHOT_DIR]}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
POSLAB=$(cd "$(dirname "$POSLAB")" && pwd)/$(basename "$POSLAB")
POSLAB_BROWSER=1 "$ROOT/scripts/deps.sh"
JOBS=${JOBS:-$(nproc)} "$ROOT/scripts/explorer.sh" build
TMP=$(mktemp -d "${TMPDIR:-/tmp}/poslab-explorer.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$POSLAB" "$TMP/poslab"
python3 "$HERE/check.py" "$TMP/poslab" "${2:-$TMP/screenshots}"
