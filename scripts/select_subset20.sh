#!/usr/bin/env bash
# Select the shipped memriskbench_subset20 from the committed reference set and
# install it as the subset the task loads.  tests/test_reference_set.py checks that
# this reproduces lm_eval_memrisk/data/subset20.json byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-runs/subset20}"
memrisk select --reference --fraction 0.2 --seed 0 --out "$OUT" --no-progress
cp "$OUT/subset.json" lm_eval_memrisk/data/subset20.json
echo "installed lm_eval_memrisk/data/subset20.json"
