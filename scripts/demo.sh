#!/usr/bin/env bash
# make demo: the small Chinese models that the guide (docs/guide.zh.md, docs/guide.md) uses,
# trained on Tang and Song poems (the fortunes-zh corpus), 200 steps each: under a minute on 2 idle
# cores; demo-zh-rope ends well below the add-k 2-gram
# (`poslab figure ngram --data data/fortunes-zh`, section 0 of the guide).
#
#   scripts/demo.sh PATH/TO/poslab [STEPS]        run from the repository root
#
# Writes data/fortunes-zh and four runs, all d = 64, 2 layers, 4 heads, T0 = 64:
#   runs/demo-zh-rope        causal, RoPE          (attend, generate, eval with RoPE scaling)
#   runs/demo-zh-none        causal, no PE         (the causal mask alone leaks position)
#   runs/demo-zh-mlm-none    no mask, no PE        (masked-LM: blind to order, 我送君 = 君送我)
#   runs/demo-zh-mlm-rope    no mask, RoPE         (masked-LM: sees order)
# A run that is already trained is kept; delete runs/demo-zh-* to train them again.
set -euo pipefail
# idle OpenMP threads spin briefly, then sleep (the Makefile's choice: bench/wait_policy.sh)
[ -n "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ] || export GOMP_SPINCOUNT=1000
POSLAB=${1:?usage: scripts/demo.sh PATH/TO/poslab [STEPS]}
STEPS=${2:-200}
DATA=data/fortunes-zh
COMMON=(--data "$DATA" --d 64 --layers 2 --heads 4 --ctx 64 --batch 16 --lr 3e-3
        --steps "$STEPS" --quiet)

[ -f "$DATA/vocab.json" ] || "$POSLAB" prepare --corpus fortunes-zh --out "$DATA"

# train NAME FLAGS...: trains runs/NAME, or continues it if it was interrupted.
train() {
  local name=$1 out
  shift
  if [ ! -f "runs/$name/state.safetensors" ]; then
    "$POSLAB" train "${COMMON[@]}" --out "runs/$name" --force "$@"
  elif ! out=$("$POSLAB" train "${COMMON[@]}" --out "runs/$name" --resume "$@" 2>&1); then
    if grep -q "already finished" <<<"$out"; then
      echo "runs/$name: already trained"
    else
      echo "$out" >&2
      return 1
    fi
  else
    echo "$out"
  fi
}

start=$SECONDS
train demo-zh-rope --pe rope
train demo-zh-none --pe none
train demo-zh-mlm-none --pe none --causal false --objective mlm
train demo-zh-mlm-rope --pe rope --causal false --objective mlm
echo "demo ready in $((SECONDS - start)) s: runs/demo-zh-{rope,none,mlm-none,mlm-rope}; next: docs/guide.zh.md"
