#!/usr/bin/env bash
# Keeps what the study has finished, so that the next `make experiments`, on this machine or a
# fresh clone, continues where this one stopped (study/archive.h brings it back):
#   - the small files of every finished run (results/runs/<run>/done.json there): its log,
#     evaluations, probes, scores and stage times, into docs/results/runs/<run>/ (not its
#     models, states or caches: job.log, sliding.bin, sliding.json, *.safetensors);
#     A run made earlier that gained a measurement since (copy v2, a new scaling, passkey by
#     distance: runner.h) keeps its done.json; its new or changed files are copied.
#   - the model of seed 1 of each main scheme, into docs/results/models/<pe>.safetensors (about
#     3 MB each), for learners to eval, attend and generate with, and for the report's
#     attention maps (a screened scheme has one once it is promoted);
#   - throughput.csv, the speed each invocation measured first, tuning.csv, the learning rates
#     every run was trained with, and screening.csv, the promotions decided.
# done.json is copied last, so an archive interrupted halfway holds no run that looks done.
# Then commit docs/results.
#
#   scripts/study_archive.sh [RESULTS] [DOCS]     defaults: results docs/results
set -euo pipefail
res=${1:-results}
docs=${2:-docs/results}
n=0
for done in "$res"/runs/*/done.json; do
  [ -e "$done" ] || continue
  run=$(basename "$(dirname "$done")")
  dest="$docs/runs/$run"
  mkdir -p "$dest"
  changed=0
  for f in "$res/runs/$run"/*; do
    case "$(basename "$f")" in
      *.safetensors | job.log | sliding.bin | sliding.json | done.json) ;;
      *) if ! cmp -s "$f" "$dest/$(basename "$f")"; then cp -p "$f" "$dest/"; changed=1; fi ;;
    esac
  done
  cmp -s "$done" "$dest/done.json" || { cp -p "$done" "$dest/done.json"; changed=1; }
  n=$((n + changed))
done
for pe in none learned sinusoidal rope alibi t5 kerple fire prope rope_rand rope_nope4 \
          xpos learned_rand prope25; do
  model="$res/runs/${pe}_s1/model.safetensors"
  if [ -f "$res/runs/${pe}_s1/done.json" ] && [ -f "$model" ] &&
     ! cmp -s "$model" "$docs/models/$pe.safetensors"; then
    mkdir -p "$docs/models"
    cp -p "$model" "$docs/models/$pe.safetensors"
    cp -p "$res/runs/${pe}_s1/vocab.json" "$docs/models/vocab.json"
  fi
done
for f in throughput.csv tuning.csv screening.csv; do
  if [ -f "$res/$f" ]; then cp -p "$res/$f" "$docs/runs/$f"; fi
done
echo "study_archive: $n runs newly finished or with new files kept in $docs/runs"
