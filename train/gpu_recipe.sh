#!/usr/bin/env bash
# One-GPU recipe: generate trajectories, pack them, train a larger model, all within WALL_MIN minutes.
#
#   bash train/gpu_recipe.sh OUT                     # one H200 + 16 cores: base preset, bf16, torch.compile
#   GPU_RECIPE_TINY=1 bash train/gpu_recipe.sh OUT   # the same steps on the CPU with tiny data (tests)
#
# Reads only what the repository carries (no network): the CruxEval file that synth keeps out of the
# data is $CRUXEVAL_PATH, else the copy the repository carries (tracegen/cruxeval/cruxeval.jsonl). Writes:
#   OUT/synth/    trajectory shards          OUT/data/   packed sequences + tokenizer
#   OUT/model/    the Hugging Face checkpoint, with metrics.jsonl and training_summary.json
#   OUT/recipe.log  what each phase took
# Knobs (environment): WALL_MIN (10), PRESET (base), MODEL_CONFIG (a JSON shape instead of a preset),
# WORKERS (all cores), SYNTH_S (seconds of data generation, 150), SEQ_LEN (1024), BATCH (32),
# GRAD_ACCUM (1), LR, STEPS (a step cap), PYTHON, WHEELS (a folder of wheels to install missing
# pure-Python dependencies from, offline), SOURCES (tracegen's --sources; default the realcode mix without
# packages), PKGS (a `tracegen packages` folder, carried: adds packages:PKGS@2 to the mix).
set -euo pipefail

OUT=${1:?usage: bash train/gpu_recipe.sh OUT}
START=$(date +%s)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$REPO"

if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
LOG="$OUT/recipe.log"
say() { echo "[recipe +$(( $(date +%s) - START ))s] $*" | tee -a "$LOG" >&2; }

TINY=${GPU_RECIPE_TINY:-0}
if [ "$TINY" = "1" ]; then
  WALL_MIN=${WALL_MIN:-10}; WORKERS=${WORKERS:-2}; SEQ_LEN=${SEQ_LEN:-512}; BATCH=${BATCH:-2}
  COUNT=${COUNT:-16}; STEPS=${STEPS:-2}; PRESET=${PRESET:-tiny}; DEVICE=cpu; COMPILE=""
  EVAL_STATES=${EVAL_STATES:-2}; VOCAB=${VOCAB:-1024}
else
  WALL_MIN=${WALL_MIN:-10}; WORKERS=${WORKERS:-$(nproc)}; SEQ_LEN=${SEQ_LEN:-1024}; BATCH=${BATCH:-32}
  COUNT=${COUNT:-1000000}; STEPS=${STEPS:-}; PRESET=${PRESET:-base}; DEVICE=cuda; COMPILE="--compile"
  EVAL_STATES=${EVAL_STATES:-64}; VOCAB=${VOCAB:-4096}
fi
SYNTH_S=${SYNTH_S:-150}
# the realcode mix (docs/data.md); PKGS: a folder written by `tracegen packages` (the device has no network: carry it)
SOURCES=${SOURCES:-everyday@5,synthetic@2,project@1,long@1,doctest-user@1}
if [ -n "${PKGS:-}" ]; then
  [ -f "$PKGS/manifest.json" ] || { echo "error: PKGS=$PKGS is not a folder written by 'tracegen packages' (no manifest.json)" >&2; exit 2; }
  SOURCES="$SOURCES,packages:$(cd "$PKGS" && pwd)@2"
fi
FINAL_S=${FINAL_S:-75}   # reserved after training: final held-out evaluation and saving
GRAD_ACCUM=${GRAD_ACCUM:-1}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false

# ---- dependencies: everything must already be importable (or installable from carried wheels) ----
if ! "$PYTHON" -c "import torch, transformers, tokenizers, pydantic, typer, tqdm, numpy, safetensors" 2>/dev/null; then
  if [ -n "${WHEELS:-}" ] && [ -d "$WHEELS" ]; then
    say "installing missing dependencies from $WHEELS (offline)"
    "$PYTHON" -m pip install -q --no-index --find-links "$WHEELS" pydantic typer tqdm rich safetensors tokenizers >>"$LOG" 2>&1
  fi
  "$PYTHON" -c "import torch, transformers, tokenizers, pydantic, typer, tqdm, numpy, safetensors" || {
    echo "error: $PYTHON lacks a dependency (see the import error above); carry wheels and set WHEELS=folder" >&2; exit 2; }
fi
if [ "$DEVICE" = "cuda" ] && ! "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "error: no CUDA device visible to torch; run with GPU_RECIPE_TINY=1 for the CPU variant" >&2; exit 2
fi
export CRUXEVAL_PATH="${CRUXEVAL_PATH:-$REPO/tracegen/cruxeval/cruxeval.jsonl}"
[ -f "$CRUXEVAL_PATH" ] || { echo "error: cruxeval.jsonl not found at $CRUXEVAL_PATH (set CRUXEVAL_PATH to a CruxEval JSON-lines file)" >&2; exit 2; }
say "python=$PYTHON device=$DEVICE workers=$WORKERS preset=${MODEL_CONFIG:-$PRESET} seq_len=$SEQ_LEN wall=${WALL_MIN}min"

# ---- 1. data: synth for SYNTH_S seconds (finished shards are kept when the time runs out) ----
SYNTH_ARGS=(tracegen synth --count "$COUNT" --out "$OUT/synth" --workers "$WORKERS" --seed "${SEED:-0}" --sources "$SOURCES" --no-progress)
if [ "$TINY" = "1" ]; then
  "$PYTHON" -m neural_debugger_cli "${SYNTH_ARGS[@]}" --shard-size 8 >>"$LOG" 2>&1
else
  status=0
  timeout -k 10 "$SYNTH_S" "$PYTHON" -m neural_debugger_cli "${SYNTH_ARGS[@]}" --shard-size 500 >>"$LOG" 2>&1 || status=$?
  [ "$status" = 0 ] || [ "$status" = 124 ] || { echo "error: tracegen synth failed (exit $status), see $LOG" >&2; exit 2; }
fi
say "synth done: $(ls "$OUT/synth"/shard-*.jsonl 2>/dev/null | wc -l) shards"

# ---- 2. pack ----
"$PYTHON" -m train.data "$OUT/synth" "$OUT/data" --seq-len "$SEQ_LEN" --workers "$WORKERS" --vocab-size "$VOCAB" \
  --heldout-fraction "${HELDOUT:-0.05}" >"$OUT/data.json" 2>>"$LOG"
say "packed: $("$PYTHON" -c "import json,sys; m=json.load(open(sys.argv[1])); s=m['splits']; print(s['train']['tokens'], 'train tokens,', s['heldout']['tokens'], 'held-out tokens')" "$OUT/data/pack.json")"

# ---- 3. train for what is left of the wall clock ----
NOW=$(date +%s)
LEFT_S=$(( WALL_MIN * 60 - (NOW - START) - FINAL_S ))
if [ "$LEFT_S" -lt 30 ]; then LEFT_S=30; fi
TRAIN_ARGS=(train --data "$OUT/data" --out "$OUT/model" --overwrite --device "$DEVICE" --batch "$BATCH" --grad-accum "$GRAD_ACCUM"
            --eval-every "${EVAL_EVERY:-1000000}" --eval-states "$EVAL_STATES" --eval-sequences 64 --save-every 1000000 --log-every 10)
if [ -n "${MODEL_CONFIG:-}" ]; then TRAIN_ARGS+=(--config "$MODEL_CONFIG"); else TRAIN_ARGS+=(--preset "$PRESET"); fi
if [ -n "$STEPS" ]; then TRAIN_ARGS+=(--steps "$STEPS"); fi
if [ "$TINY" != "1" ]; then TRAIN_ARGS+=(--time-budget "$(awk "BEGIN{print $LEFT_S/60}")" --no-progress); else TRAIN_ARGS+=(--no-progress); fi
if [ -n "$COMPILE" ]; then TRAIN_ARGS+=("$COMPILE"); fi
if [ -n "${LR:-}" ]; then TRAIN_ARGS+=(--lr "$LR"); fi
say "training for ${LEFT_S}s: ${TRAIN_ARGS[*]}"
"$PYTHON" -m neural_debugger_cli "${TRAIN_ARGS[@]}" 2>>"$LOG" | tee -a "$LOG"
say "done in $(( $(date +%s) - START ))s: $OUT/model"
