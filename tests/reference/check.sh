#!/usr/bin/env bash
# Cross-check `poslab eval --json` against an independent PyTorch reference written from
# the specification alone (tests/reference/spec_model.py, float64), and `poslab prepare`'s
# train/val split against tests/reference/spec_split.py.
#
#   tests/reference/check.sh build/release/train/poslab
#
# Two families of checkpoints, on a tiny prepared corpus:
#   trained  - written by `poslab train` (30 steps, T0 = 32), one per pe;
#   synth    - written by spec_model.py with large random weights (sharp attention, so the
#              loss really depends on positions: a 30-step model hardly uses them), plus
#              variants: ALiBi with 6 heads (non-power-of-two slopes), RoPE with theta 500
#              and hd 16, RoPE with the half layout and with a rope fraction < 1 (both
#              layouts), T5 with its defaults and with 8 buckets up to distance 12 (windows
#              reach past it), no causal mask (none, alibi, t5); embedding = scaled for none,
#              learned, sinusoidal, rope, and an explicit embedding = gpt2 key.
# Trained checkpoints also with --embedding scaled (learned, sinusoidal), and RoPE with
# --rope-layout half --rope-fraction 0.5.
# For every pe, L in {16, 32, 64, 128}; for rope also every --rope-scaling and explicit
# --factor. Exit 0 if every loss, ppl and bucket loss agrees to 1e-4 relative, 1 if not,
# 77 if /usr/bin/python3 has no torch. KEEP=1 keeps the temporary folder.
set -u

POSLAB=${1:?usage: check.sh PATH/TO/poslab}
PY=/usr/bin/python3
HERE=$(cd "$(dirname "$0")" && pwd)
REF="$HERE/spec_model.py"
TOL=1e-4

if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "SKIP: python3-torch not installed (apt-get install python3-torch)"
  exit 77
fi
[ -x "$POSLAB" ] || { echo "check.sh: $POSLAB is not executable" >&2; exit 2; }
POSLAB=$(cd "$(dirname "$POSLAB")" && pwd)/$(basename "$POSLAB")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/poslab-ref.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "keeping $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
fail=0
# Run a private copy: the build tree may be relinked by someone else during the check.
cp "$POSLAB" "$TMP/poslab" && POSLAB="$TMP/poslab" || { echo "cannot copy $POSLAB"; exit 2; }

# ---- corpus (deterministic, ~25 kB, 10% val = ~2.5k tokens >= 3 windows of 129)
"$PY" - "$TMP/corpus.txt" <<'EOF'
import random, sys
random.seed(7)
words = ("the quick brown fox jumps over a lazy dog while every rotary position "
         "keeps its own angle and linear bias decays with distance so long windows "
         "need scaling before they fit").split()
lines = []
for _ in range(620):
    n = random.randint(3, 11)
    lines.append(" ".join(random.choice(words) for _ in range(n)) + random.choice(".!?,;"))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF
DATA="$TMP/data"
"$POSLAB" prepare --corpus "$TMP/corpus.txt" --out "$DATA" >/dev/null || { echo "prepare failed"; exit 1; }
"$PY" "$HERE/spec_split.py" "$TMP/corpus.txt" "$DATA" || fail=1

# ---- checkpoints
CKPTS=()   # "family pe path"
for pe in none learned sinusoidal rope alibi t5; do
  extra=()
  [ "$pe" = learned ] && extra=(--max-len 128)
  if ! "$POSLAB" train --data "$DATA" --pe "$pe" --out "$TMP/$pe" --steps 30 --ctx 32 --d 32 \
       --layers 2 --heads 4 --batch 8 --quiet "${extra[@]}" >/dev/null; then
    echo "train --pe $pe failed"; fail=1; continue
  fi
  CKPTS+=("trained $pe $TMP/$pe/model.safetensors")
done
if "$POSLAB" train --data "$DATA" --pe rope --rope-layout half --rope-fraction 0.5 \
     --out "$TMP/rope_half_f05" --steps 30 --ctx 32 --d 32 --layers 2 --heads 4 --batch 8 \
     --quiet >/dev/null; then
  CKPTS+=("trained:half-f0.5 rope $TMP/rope_half_f05/model.safetensors")
else
  echo "train --pe rope --rope-layout half --rope-fraction 0.5 failed"; fail=1
fi
for pe in learned sinusoidal; do
  extra=()
  [ "$pe" = learned ] && extra=(--max-len 128)
  if ! "$POSLAB" train --data "$DATA" --pe "$pe" --out "$TMP/$pe-scaled" --steps 30 --ctx 32 \
       --d 32 --layers 2 --heads 4 --batch 8 --embedding scaled --quiet "${extra[@]}" >/dev/null; then
    echo "train --pe $pe --embedding scaled failed"; fail=1; continue
  fi
  CKPTS+=("trained:scaled $pe $TMP/$pe-scaled/model.safetensors")
done
synth() {  # name pe [flags...]
  local name=$1 pe=$2; shift 2
  "$PY" "$REF" synth --out "$TMP/syn_$name.safetensors" --pe "$pe" --data "$DATA" --ctx 32 "$@" \
    && CKPTS+=("synth:$name $pe $TMP/syn_$name.safetensors")
}
synth none none --seed 1
synth learned learned --max-len 128 --seed 2
synth sinusoidal sinusoidal --seed 3
synth rope rope --seed 4
synth alibi alibi --seed 5
synth alibi-h6 alibi --heads 6 --d 48 --seed 26
synth rope-th500-hd16 rope --heads 2 --d 32 --theta 500 --seed 7
synth rope-half rope --rope-layout half --seed 10
synth rope-f0.5-hd16 rope --heads 2 --d 32 --rope-fraction 0.5 --seed 11
synth rope-half-f0.4 rope --heads 2 --d 32 --rope-layout half --rope-fraction 0.4 --seed 12
synth t5 t5 --seed 13
synth t5-nb8-md12 t5 --t5-buckets 8 --t5-max-distance 12 --seed 14
synth t5-bidir t5 --causal false --t5-buckets 8 --t5-max-distance 12 --seed 15
synth alibi-bidir alibi --causal false --seed 8
synth none-bidir none --causal false --seed 9
synth none-scaled none --embedding scaled --seed 10
synth learned-scaled learned --max-len 128 --embedding scaled --seed 11
synth sinusoidal-scaled sinusoidal --embedding scaled --seed 12
synth rope-scaled rope --embedding scaled --seed 13
synth sinusoidal-gpt2key sinusoidal --embedding gpt2 --seed 14

# ---- run poslab eval, collect a manifest for the reference
MAN="$TMP/manifest.tsv"; : > "$MAN"
n=0
ours() {  # family ckpt L scaling factor [extra eval flags]
  local fam=$1 ck=$2 L=$3 sc=$4 fa=$5; shift 5
  local args=(eval --ckpt "$ck" --data "$DATA" --len "$L" --windows 3 --json "$@")
  [ "$sc" != none ] && args+=(--rope-scaling "$sc")
  [ "$fa" != - ] && args+=(--factor "$fa")
  n=$((n + 1))
  local out="$TMP/ours_$n.json"
  if ! "$POSLAB" "${args[@]}" >"$out" 2>"$out.err"; then
    echo "FAIL: poslab ${args[*]} exited non-zero: $(tr '\n' ' ' <"$out.err")"; fail=1; return
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fam" "$out" "$ck" "$DATA" "$L" 3 "$sc" "$fa" >>"$MAN"
}
for entry in "${CKPTS[@]}"; do
  read -r fam pe ck <<<"$entry"
  for L in 16 32 64 128; do ours "$fam" "$ck" "$L" none -; done
  ours "$fam" "$ck" 64 none - --buckets 5          # ranges that do not divide L
  if [ "$pe" = rope ]; then
    for sc in linear ntk dynamic yarn; do
      for L in 16 32 64 128; do ours "$fam" "$ck" "$L" "$sc" -; done
    done
    for L in 16 32 64 128; do ours "$fam" "$ck" "$L" linear 3; done
    ours "$fam" "$ck" 64 ntk 3
    ours "$fam" "$ck" 64 yarn 3
    ours "$fam" "$ck" 16 yarn 2.5                    # s > 1 although L < T0
  fi
done

# ---- compare
"$PY" "$REF" compare "$MAN" --tol "$TOL" --sensitivity || fail=1

# ---- errors docs/cli.md and docs/evaluation.md require
expect_error() {  # description, must-contain..., -- , poslab args...
  local what=$1; shift
  local needles=()
  while [ "$1" != -- ]; do needles+=("$1"); shift; done; shift
  if "$POSLAB" "$@" >"$TMP/err.out" 2>&1; then
    echo "FAIL: $what: poslab $* succeeded, the docs say it is an error"; fail=1; return
  fi
  for s in "${needles[@]}"; do
    if ! grep -q -- "$s" "$TMP/err.out"; then
      echo "FAIL: $what: message lacks '$s': $(head -c 300 "$TMP/err.out")"; fail=1; return
    fi
  done
  echo "ok   error: $what: $(head -n1 "$TMP/err.out" | head -c 160)"
}
SR="$TMP/syn_rope.safetensors"; SL="$TMP/syn_learned.safetensors"; SA="$TMP/syn_alibi.safetensors"
expect_error "--factor without --rope-scaling" -- eval --ckpt "$SR" --data "$DATA" --len 16 --factor 2 --json
expect_error "--attention-factor with llama3" "--attention-factor applies only to" -- eval --ckpt "$SR" --data "$DATA" --len 16 --rope-scaling llama3 --attention-factor 2 --json
expect_error "--factor below 1" -- eval --ckpt "$SR" --data "$DATA" --len 16 --rope-scaling linear --factor 0.5 --json
expect_error "--rope-scaling with alibi" -- eval --ckpt "$SA" --data "$DATA" --len 16 --rope-scaling ntk --json
expect_error "learned L > max_len names both" 129 128 -- eval --ckpt "$SL" --data "$DATA" --len 129 --windows 1 --json
expect_error "--rope-layout with alibi" --rope-layout interleaved -- train --data "$DATA" --pe alibi --rope-layout half --out "$TMP/x1" --steps 1
expect_error "--rope-fraction with none" --rope-fraction -- train --data "$DATA" --pe none --rope-fraction 0.5 --out "$TMP/x2" --steps 1
expect_error "unknown --rope-layout" --rope-layout interleaved half -- train --data "$DATA" --pe rope --rope-layout diagonal --out "$TMP/x3" --steps 1
expect_error "--t5-buckets with rope" --t5-buckets -- train --data "$DATA" --pe rope --t5-buckets 8 --out "$TMP/x5" --steps 1
expect_error "--t5-max-distance within the exact buckets" --t5-max-distance "max_exact = 16" -- train --data "$DATA" --pe t5 --t5-max-distance 16 --out "$TMP/x6" --steps 1
expect_error "--rope-fraction 0" --rope-fraction "(0, 1]" -- train --data "$DATA" --pe rope --rope-fraction 0 --out "$TMP/x4" --steps 1
"$PY" "$REF" synth --out "$TMP/bad_fraction.safetensors" --pe rope --data "$DATA" --rope-fraction 1.5
expect_error "checkpoint rope_fraction 1.5" rope_fraction bad_fraction.safetensors "(0, 1]" -- eval --ckpt "$TMP/bad_fraction.safetensors" --data "$DATA" --len 16 --json
synth bad-embedding sinusoidal --embedding fairseq --seed 15  # eval must refuse it
expect_error "unknown embedding names the key and the file" "'embedding'" fairseq syn_bad-embedding -- \
  eval --ckpt "$TMP/syn_bad-embedding.safetensors" --data "$DATA" --len 16 --json

if [ "$fail" = 0 ]; then echo "PASS: poslab eval agrees with the independent reference"; else echo "FAIL"; fi
exit "$fail"
