#!/usr/bin/env bash
# Real model runs of a risk the dataset v8 candidate rebuilds (R3 in stop 46, R2 in stop
# 47): the eight llama.cpp systems of the reference set, lm-eval's memriskbench_<risk> on
# v8 built at the shipped seed, under the default presentation.  Each run lands in
# OUT/<system>/ (default runs/v8<risk>); --use_cache lets a cut run continue.  About 1 h
# a risk on 2 cores (Qwen2.5-Coder-1.5B about 6 min a system when the machine is idle).
# Usage: bash scripts/run_v8.sh [r3|r2]   (after scripts/_setup.sh; fetches the models it lacks)
set -euo pipefail
cd "$(dirname "$0")/.."
RISK=${1:-r3}
case "$RISK" in r2|r3) ;; *) echo "usage: bash scripts/run_v8.sh [r3|r2] (the risks v8 rebuilds)" >&2; exit 2;; esac
OUT=${OUT:-runs/v8$RISK}
export PATH="$PWD/.venv/bin:$PATH"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's code, not an older install's
mkdir -p "$OUT"
python -m lm_eval_memrisk.generator --version v8 --out "$OUT/episodes_v8.jsonl"
for spec in "qwen2.5-coder-0.5b full q05" "smollm2-135m full smol" "qwen2.5-coder-1.5b full q15" \
    "qwen2.5-coder-0.5b recency:3 q05-recency3" "qwen2.5-coder-0.5b bm25:3 q05-bm25-3" \
    "qwen2.5-coder-0.5b mem0:3 q05-mem0-3" "qwen2.5-coder-1.5b recency:3 q15-recency3" \
    "qwen2.5-coder-1.5b mem0:3 q15-mem0-3"; do
  set -- $spec
  if [ -d "$OUT/$3" ]; then echo "skip $3 (exists)"; continue; fi
  echo "== $3 $(date -u +%T)"
  memrisk eval --model llama-cpp --model_args "model=$1,n_threads=${N_THREADS:-2}" --tasks "memriskbench_$RISK" \
    --metadata "{\"episodes\": \"$OUT/episodes_v8.jsonl\", \"memory_policy\": \"$2\", \"presentation\": \"history\", \"tools\": \"text\"}" \
    --apply_chat_template --log_samples --use_cache "$OUT/cache/$3" --output_path "$OUT/tmp_$3"
  mv "$OUT/tmp_$3/$1" "$OUT/$3"
  rm -rf "$OUT/tmp_$3"
  echo "== $3 done $(date -u +%T)"
done
