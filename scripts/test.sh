#!/usr/bin/env bash
# Install everything the tests need (venv, project with extras, Chromium for the
# browser test), lint (ruff) and type-check (mypy --strict), and run the whole test
# suite, real-model, slow and browser tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will be skipped" >&2
fi
. scripts/_setup.sh "llama,server,plots,memory,test"
python -m ruff check .
python -m mypy lm_eval_memrisk selector
# the other end of the declared lm-eval range (setup.cfg): a second venv, ~1.5 min warm
bash scripts/test_oldest_lm_eval.sh
# -m "": every test, also the model, slow and browser ones the default run leaves out
python -m pytest -q -p no:cacheprovider -m "" "$@"
