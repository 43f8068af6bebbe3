#!/usr/bin/env bash
# Installs the system packages poslab needs, once. Called by every make target.
# As root (or with sudo) it runs apt-get; otherwise it prints the exact command and stops.
set -euo pipefail
# The corpora come from Debian packages: fortunes, fortunes-min, fortunes-zh, and bible-kjv for
# `prepare --corpus kjv` (a corpus with long-range structure; a 2.5 MB download, so always
# installed). `poslab prepare` never installs anything; without a package it names the
# apt-get line. libpython3.11-minimal and libpython3.11-stdlib install the *.py files of
# /usr/lib/python3.11 that `prepare --corpus pystdlib` (the study's source-code corpus) reads;
# Debian 12 has them already (python3 depends on them), a slim image may not.
# fonts-wqy-microhei (1.6 MB) draws the Chinese in the SVGs `attend` writes: they name a CJK font
# first ('Noto Sans CJK SC', 'WenQuanYi Micro Hei'); without one a viewer may show boxes.
pkgs=(cmake g++ make libopenblas-openmp-dev catch2 fortunes fortunes-min fortunes-zh bible-kjv
      libpython3.11-minimal libpython3.11-stdlib fonts-wqy-microhei)
if [ "${POSLAB_FUZZ:-0}" = 1 ]; then pkgs+=(clang libclang-rt-14-dev); fi
# The explorer (docs/explorer.md): emscripten compiles poslab to WebAssembly (make explorer,
# POSLAB_EXPLORER=1); its browser test also runs the page in Chromium, headless
# (tests/explorer/check.sh, POSLAB_BROWSER=1).
if [ "${POSLAB_EXPLORER:-0}" = 1 ]; then pkgs+=(emscripten); fi
if [ "${POSLAB_BROWSER:-0}" = 1 ]; then pkgs+=(emscripten chromium); fi
# PyTorch (Debian's, for /usr/bin/python3) with POSLAB_TORCH=1, as make test, test-portable and
# bench ask: the independent reference our evaluation is checked against
# (tests/reference/check.sh) and the baseline of the benchmark's ratios. About 50 MB to download.
# With it tcmalloc, the allocator PyTorch's performance tuning guide recommends preloading:
# make bench times PyTorch with it too (scripts/bench.sh). Under 1 MB.
if [ "${POSLAB_TORCH:-0}" = 1 ]; then pkgs+=(python3-torch libtcmalloc-minimal4); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ]; then
  echo "poslab: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && $cmd
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  echo "poslab: installing ${missing[*]} (sudo)" >&2
  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive $cmd
else
  echo "poslab: missing system packages: ${missing[*]}" >&2
  echo "poslab: run as root:  apt-get update && $cmd" >&2
  exit 1
fi
