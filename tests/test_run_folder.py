"""``memrisk run --out``: the folder a run writes (#29): model-derived names stay inside it."""

from __future__ import annotations

from pathlib import Path

from test_interactive import multi_episode

from lm_eval_memrisk.agents import get_agent
from lm_eval_memrisk.interactive import agent_generate
from lm_eval_memrisk.pipeline import run_benchmark
from lm_eval_memrisk.systems import System, model_system_name


def oracle_named(name: str) -> System:
    return System(name, agent_generate(get_agent("oracle")), {"agent": "oracle"})


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_a_model_name_with_dot_dot_slashes_stays_inside_out(tmp_path):
    """The issue's repro: ``--model_args 'agent=oracle,model=../../../ESCAPED'``."""
    name = model_system_name("memrisk-agent", "agent=oracle,model=../../../ESCAPED")
    out = tmp_path / "a" / "b" / "out1"
    run_benchmark(oracle_named(name), [multi_episode(1)], dataset_hash="h", out=out, progress=False)
    written = _files(tmp_path)
    assert written and all(out in p.parents for p in written)
    folder, = (p for p in out.iterdir() if p.is_dir())
    assert folder.name == "memrisk-agent-agent-oracle_model-..__..__..__ESCAPED"  # as memrisk eval names it
    assert list(folder.glob("results_*.json")) and list(folder.glob("samples_*.jsonl"))
