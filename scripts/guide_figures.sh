#!/usr/bin/env bash
# make guide-figures: every figure the guides show from docs/guide/, in English (NAME.svg, for
# docs/guide.md) and in Chinese (NAME.zh.svg, for docs/guide.zh.md), each pair drawn by the same
# code from the same numbers, only the words differ (--lang):
#   - the figures from the formulas: poslab figure NAME (cli/guide_figures.h), no model needed
#   - the attention maps: poslab attend on the guide's models, runs/demo-zh-* (make demo) and
#     runs/zh-alibi, trained here as section 5.1 of the guide trains it when it is missing
#
#   scripts/guide_figures.sh PATH/TO/poslab
#
# Run it where runs/ and data/ are (the repository root after make demo): the maps' titles name
# the checkpoints as given, runs/NAME/model.safetensors. The figures go to docs/guide/ of the
# repository this script is in. tests/cli/test_guide_figures.cpp checks the formula figures
# against the code, and every figure a guide shows for its language and its legibility.
set -euo pipefail
[ -n "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ] || export GOMP_SPINCOUNT=1000
POSLAB=${1:?usage: scripts/guide_figures.sh PATH/TO/poslab}
GUIDE=$(cd "$(dirname "$0")/.." && pwd)/docs/guide
declare -A SUFFIX=([en]=.svg [zh]=.zh.svg)

# figure FILE NAME FLAGS...: docs/guide/FILE.svg and FILE.zh.svg
figure() {
  local file=$1 name=$2 lang
  shift 2
  for lang in en zh; do
    "$POSLAB" figure "$name" "$@" --lang "$lang" --out "$GUIDE/$file${SUFFIX[$lang]}" >/dev/null
  done
}
figure rope-decay rope-decay --head-dim 32
figure rope-scaling rope-scaling
figure rope-scaling-study rope-scaling --head-dim 32 --train-len 256 --factor 16
figure yarn-ramp yarn-ramp --head-dim 32 --train-len 256
figure alibi-bias alibi-bias
figure rope-ramps rope-ramps --head-dim 32 --train-len 256 --factor 4
figure kerple-kernel kerple-kernel
figure xpos-decay xpos-decay --head-dim 32 --train-len 256
figure prope-pairs prope-pairs --head-dim 32 --train-len 256

for run in demo-zh-mlm-none demo-zh-mlm-rope demo-zh-none; do
  [ -f "runs/$run/model.safetensors" ] || { echo "runs/$run: missing; run make demo first" >&2; exit 1; }
done
[ -f runs/zh-alibi/model.safetensors ] ||
  "$POSLAB" train --data data/fortunes-zh --pe alibi --out runs/zh-alibi --d 64 --layers 2 --ctx 64 \
    --lr 3e-3 --steps 200 --quiet --force

# attend FILE RUN FLAGS...: the map of runs/RUN as docs/guide/FILE.svg and FILE.zh.svg
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
attend() {
  local file=$1 run=$2 lang
  shift 2
  for lang in en zh; do
    "$POSLAB" attend --ckpt "runs/$run/model.safetensors" "$@" --lang "$lang" --out "$TMP" >/dev/null
    mv "$TMP/attention.svg" "$GUIDE/$file${SUFFIX[$lang]}"
  done
}
attend attend-mlm-none demo-zh-mlm-none --text 我送君 --compare 君送我
attend attend-mlm-rope demo-zh-mlm-rope --text 我送君 --compare 君送我
attend attend-none-causal demo-zh-none --text 我送君 --compare 送我君
attend attend-alibi zh-alibi --text 床前明月光，疑是地上霜。
echo "wrote $GUIDE: $(ls "$GUIDE"/*.svg | wc -l) figures"
