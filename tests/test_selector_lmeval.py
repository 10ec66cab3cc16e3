"""End to end through real lm-eval: reference agents -> ``memrisk select`` -> ``--samples``.

Checks the input contract with the harness (the logged sample lines) and that the
written samples.json makes lm-eval run exactly the selected episodes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _memrisk(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from lm_eval_memrisk.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], check=False, cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _eval(agent: str, out: Path, *extra: str) -> None:
    res = _memrisk("eval", "--model", "memrisk-agent", "--model_args", f"agent={agent}", "--tasks", "memriskbench",
                   "--log_samples", "--output_path", str(out), *extra)
    assert res.returncode == 0, res.stderr[-2000:]


def test_select_on_lm_eval_runs_and_rerun_the_subset(tmp_path):
    agents = ("oracle", "stale", "leaky")
    for agent in agents:
        _eval(agent, tmp_path / agent)
    out = tmp_path / "sel"
    res = _memrisk("select", *(f"{a}={tmp_path / a}" for a in agents), "--bootstrap", "20", "--no-plots",
                   "--out", str(out))
    assert res.returncode == 0, res.stderr
    subset = json.loads((out / "subset.json").read_text())
    assert subset["size"] == 24 and subset["systems"] == sorted(agents)
    _eval("stale", tmp_path / "rerun", "--samples", str(out / "samples.json"))
    logged = sorted(json.loads(line)["doc"]["episode_id"]
                    for f in (tmp_path / "rerun").glob("*/samples_memriskbench_r*.jsonl")
                    for line in f.read_text().splitlines() if line.strip())
    assert logged == [e["episode_id"] for e in subset["episodes"]]
