#!/usr/bin/env bash
# The oldest lm-eval we support, in a second venv (.venv-oldest): lm-eval at the lower
# bound of setup.cfg's range plus this project without the llama extra (no llama-cpp
# build), then the plain `lm_eval` CLI on one task with the oracle and the lm-eval
# integration tests.  The newest end is the main .venv (pip picks the newest in range).
# Idempotent and cache-friendly (pip's wheel cache); each step is time-bounded.
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST="$(sed -n 's/^ *lm-eval>=\([0-9.]*\),.*/\1/p' setup.cfg)"
[ -n "$OLDEST" ] || { echo "setup.cfg declares no lm-eval>=X,<Y range" >&2; exit 1; }
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.11 python3; do command -v "$cand" >/dev/null && PY="$cand" && break; done
fi
VENV=.venv-oldest
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
timeout 600 "$VENV/bin/python" -m pip install -q --disable-pip-version-check "lm-eval[api]==$OLDEST" ".[test]"
"$VENV/bin/python" -c "import lm_eval, sys; v = lm_eval.__version__; print('lm-eval', v); sys.exit(v != '$OLDEST')"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
# the plain CLI finds our tasks and models through the installed .pth (run outside the checkout)
(cd "$OUT" && timeout 300 "$OLDPWD/$VENV/bin/lm_eval" --model memrisk-agent --model_args agent=oracle,model=oracle \
   --tasks memriskbench_r3 --output_path "$OUT/run" >"$OUT/log" 2>&1) || { tail -20 "$OUT/log" >&2; exit 1; }
"$VENV/bin/python" - "$OUT/run" <<'PY'
import json, pathlib, sys
(res,) = pathlib.Path(sys.argv[1]).glob("*/results_*.json")
r3 = json.loads(res.read_text())["results"]["memriskbench_r3"]
assert r3["pass,none"] == 1.0, r3
print(f"lm_eval with lm-eval {json.loads(res.read_text()).get('lm_eval_version', '?')}: oracle pass = 1.0 on memriskbench_r3")
PY
timeout 300 "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_lm_eval_fit.py tests/test_request_building.py
