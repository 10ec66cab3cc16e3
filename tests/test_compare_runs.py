"""scripts/compare_runs.py: paired per-risk pass/violation and McNemar against the first run."""

from __future__ import annotations

import pytest
from script_loading import load_script

from lm_eval_memrisk.cli import main as memrisk


def _load():
    return load_script("compare_runs")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for agent in ("oracle", "stale"):
        assert memrisk(["run", "--agent", agent, "--risk", "R1", "--limit", "6", "--out", str(root / agent)]) == 0
    return root


def test_pairs_against_the_first_run_in_argument_order(runs):
    rows = _load().compare([f"stale={runs / 'stale'}", f"oracle={runs / 'oracle'}"])
    assert [r["system"] for r in rows] == ["stale", "oracle"]
    stale, oracle = rows[0]["risks"]["R1"], rows[1]["risks"]["R1"]
    assert (stale["n"], stale["passed"], stale["violation"]) == (6, 0, 6)
    assert (oracle["passed"], oracle["violation"]) == (6, 0)
    assert "vs_base" not in stale
    vs = oracle["vs_base"]
    assert vs["n"] == 6
    # six discordant episodes, all one way: exact two-sided p = 2 * 0.5**6
    assert vs["pass"] == {"p": pytest.approx(2 * 0.5**6), "only_base": 0, "only_other": 6}
    assert vs["violation"] == {"p": pytest.approx(2 * 0.5**6), "only_base": 6, "only_other": 0}


def test_markdown_names_each_run_with_its_cells(runs, capsys):
    assert _load().main([f"oracle={runs / 'oracle'}", f"stale={runs / 'stale'}", "--markdown"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("| oracle | full | scripted | 6/6 · 0 |")
    assert out[3].startswith("| stale | full | scripted | 0/6 · 6 |") and "0.0312 (6/0)" in out[3]


def test_shared_keeps_only_the_episodes_every_run_has(runs, tmp_path):
    assert memrisk(["run", "--agent", "oracle", "--risk", "R1", "--limit", "2", "--out", str(tmp_path / "two")]) == 0
    rows = _load().compare([f"six={runs / 'oracle'}", f"two={tmp_path / 'two'}"], shared=True)
    assert [r["risks"]["R1"]["n"] for r in rows] == [2, 2]
    assert rows[1]["risks"]["R1"]["vs_base"]["n"] == 2
