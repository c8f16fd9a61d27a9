#!/usr/bin/env bash
# One device call: build the doc-clean literary corpus, pretrain the shipped default
# backbone on one GPU (bf16 autocast), export its best-dev step as bf16 safetensors.
# Usage (repo root, on the GPU machine): bash projects/pretrain/scripts/gpu_pretrain.sh MIRROR OUTDIR SECONDS
# Optional env: SOURCES (literary sources), STEPS (max steps), DECAY (decay share of the steps),
# EVERY (eval and checkpoint interval), INIT (a released-format directory to continue from, with a fresh schedule).
# MIRROR is laid out like $STOICHEIA_ASSET_MIRROR (only text/*.jsonl.xz are read).
set -uo pipefail
MIRROR=${1:?mirror}; OUT=${2:?out}; BUDGET=${3:-420}
export PYTHONPATH=$PWD:$PWD/lab
RUN=/tmp/stoicheia_run; CORPUS=/tmp/stoicheia_corpus/doc_clean.jsonl
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/device.txt"
python3 -c "import torch; print('torch', torch.__version__)" | tee -a "$OUT/device.txt"
t0=$(date +%s)
python3 projects/pretrain/scripts/build_corpus.py --mirror "$MIRROR" --out "$CORPUS" \
    --sources ${SOURCES:-perseus,glaux,first1k} 2>/dev/null | tail -1 | tee "$OUT/corpus.txt"
echo "corpus built in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/corpus.txt"
ENTRY=(-m pretrain); [ -n "${INIT:-}" ] && ENTRY=(projects/pretrain/scripts/continue_from.py)
STOICHEIA_INIT_FROM=${INIT:-} timeout "$BUDGET" python3 "${ENTRY[@]}" train --preset mini --data "$CORPUS" --out "$RUN" --seed 0 --device cuda \
    --set model.d_model=384 model.n_heads=6 model.depth=12 \
          data.row_len=8192 train.micro_rows=2 train.lr=1e-3 train.max_steps=${STEPS:-5000} train.decay_frac=${DECAY:-0.2} \
          train.eval_every=${EVERY:-250} train.ckpt_every=${EVERY:-250} train.log_every=50 train.patience=4 \
    > "$OUT/train.log" 2>&1
echo "train exit $? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/train.log"
python3 - "$RUN" "$OUT" <<'PY'
import sys, torch
from pretrain.export import export_run
path = export_run(sys.argv[1], sys.argv[2] + "/model", which="best", dtype=torch.bfloat16)
print("exported", path)
PY
ls -la "$OUT/model" || true
cp "$RUN"/*.json "$OUT/" 2>/dev/null || true
split -b 15M -d "$OUT/model/model.safetensors" "$OUT/model/model.safetensors.part" && rm "$OUT/model/model.safetensors"
tail -5 "$OUT/train.log"
