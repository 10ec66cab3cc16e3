"""End-to-end fuzzing with reference agents as the system under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fuzz_episodes import all_seed_episodes, two_decision_episode

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.fuzz import campaign as campaign_mod
from lm_eval_memrisk.fuzz.campaign import run_campaign
from lm_eval_memrisk.fuzz.coverage import divergence
from lm_eval_memrisk.fuzz.execute import Executor, Judgement
from lm_eval_memrisk.fuzz.seeds import make_seeds
from lm_eval_memrisk.fuzz.validate_mutant import solves
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate
from lm_eval_memrisk.running.runner import run_episode


@pytest.fixture(scope="module")
def seeds():
    out, _ = make_seeds(all_seed_episodes() + [two_decision_episode()])
    return out


def executor(agent: str) -> Executor:
    return Executor(agent_generate(get_agent(agent)), agent)


def test_stale_agent_fails_many_mutants_but_only_pairs_count(seeds) -> None:
    result = run_campaign(seeds, executor("stale"), "guided", budget=30, seed=0, progress=False)
    assert len(result.executed) == 30
    assert len(result.failures) >= 20
    for e in result.executed:  # everything executed was validated
        assert collect_problems(e.episode) == [] and solves(e.episode, "oracle")
    # a unique failure is a root cause of a (parent passes, mutant fails) pair, never a
    # mutant of a parent that already fails
    assert set(result.unique) == {k for e in result.executed if e.pair for k in e.keys}
    assert all(not e.keys for e in result.executed if not e.pair)
    assert len(result.unique) < len(result.failures)


def test_leaky_agent_gives_parent_pass_mutant_fail_pairs(seeds) -> None:
    result = run_campaign(seeds, executor("leaky"), "random", budget=30, seed=1, progress=False)
    pairs = [e for e in result.failures if e.pair]
    assert pairs, "leaky solves the R1 seeds but not their R3 mutants"
    assert result.failures[: len(pairs)] == pairs
    assert all(
        e.op
        in ("move_scope", "compress_summary", "insert_conflict", "insert_update", "revoke_item")
        or not e.passed
        for e in pairs
    )


def test_oracle_fails_nothing(seeds) -> None:
    result = run_campaign(seeds, executor("oracle"), "coverage", budget=20, seed=0, progress=False)
    assert len(result.executed) == 20 and not result.failures and not result.unique
    assert result.coverage  # coverage does not depend on failing


def test_failure_labels_do_not_steer_the_search(seeds, monkeypatch) -> None:
    first = run_campaign(seeds, executor("stale"), "guided", budget=25, seed=3, progress=False)
    monkeypatch.setattr(campaign_mod, "judge", lambda ep, exp, trace: Judgement(True))
    second = run_campaign(seeds, executor("stale"), "guided", budget=25, seed=3, progress=False)
    assert [e.episode.id for e in first.executed] == [e.episode.id for e in second.executed]
    assert first.coverage == second.coverage and not second.unique


def test_divergence_counts_changed_behaviour(seeds) -> None:
    ep = seeds[0].episode
    a = run_episode(ep, get_agent("oracle")).decisions[-1]
    b = run_episode(ep, get_agent("amnesiac")).decisions[-1]
    assert divergence(a, a) == 0.0
    assert divergence(a, b) > 0.5  # kind, tool and items used all differ


def _write_seeds(path: Path) -> Path:
    path.write_text("".join(dumps_episode(e) + "\n" for e in all_seed_episodes()), encoding="utf-8")
    return path


def test_cli_outputs_and_determinism(tmp_path: Path, capsys) -> None:
    episodes = _write_seeds(tmp_path / "seeds.jsonl")
    outs = []
    for n in range(2):
        out = tmp_path / f"run{n}"
        rc = main(
            [
                "fuzz",
                "--agent",
                "weak:fuzz-target",
                "--episodes",
                str(episodes),
                "--budget",
                "30",
                "--seed",
                "0",
                "--out",
                str(out),
                "--json",
            ]
        )
        assert rc == 0
        outs.append(out)
    for name in ("found.jsonl", "mutants.jsonl", "report.json", "report.md"):
        a, b = ((o / name).read_text().replace(str(o), "OUT") for o in outs)
        assert a == b, name  # byte-identical up to the output folder's name
    lines = capsys.readouterr().out.strip().splitlines()
    last = json.loads(lines[-1])
    assert set(last) >= {"strategy", "budget", "seed", "unique_failures", "coverage", "planted"}
    assert last["planted"]["total"] == 8 and last["planted"]["triggered"] == last["unique_failures"] > 0
    assert last["false_positives"] == 0
    loaded = load_episodes(outs[0] / "found.jsonl", track="all")
    assert loaded and all(solves(e, "oracle") for e in loaded)
    weak = get_agent("weak:fuzz-target")
    assert all(weak.acting(e) for e in loaded)  # a planted weakness explains every failure
    for e in loaded:
        assert {"parent", "operators", "target_risk", "expected_behaviour"} <= set(e.metadata)
    report = json.loads((outs[0] / "report.json").read_text())
    assert report["table"]["guided"]["unique_failures"]["mean"] > 0
    assert report["config"]["command"].startswith("memrisk fuzz --agent weak:fuzz-target")
    assert "| guided |" in (outs[0] / "report.md").read_text()


def test_cli_compare_over_seeds(tmp_path: Path) -> None:
    episodes = _write_seeds(tmp_path / "seeds.jsonl")
    out = tmp_path / "cmp"
    rc = main(
        [
            "fuzz",
            "--agent",
            "amnesiac",
            "--episodes",
            str(episodes),
            "--budget",
            "8",
            "--seeds",
            "0,1,2",
            "--compare",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert rc == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["table"]) == {"guided", "random", "coverage"}
    assert all(len(row["unique_failures"]["values"]) == 3 for row in report["table"].values())
    assert len(report["runs"]) == 9 and all(r["executed"] == 8 for r in report["runs"])
    pytest.importorskip("matplotlib")
    assert (out / "budget_curve.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_found_set_runs_as_an_lm_eval_task(tmp_path: Path) -> None:
    """found.jsonl loads through the tasks' ``episodes`` dataset option: the oracle
    passes every found episode and the system under test (stale) fails every one."""
    import subprocess
    import sys

    episodes = _write_seeds(tmp_path / "seeds.jsonl")
    out = tmp_path / "fz"
    assert (
        main(
            [
                "fuzz",
                "--agent",
                "stale",
                "--episodes",
                str(episodes),
                "--budget",
                "10",
                "--seed",
                "0",
                "--risk",
                "R1",
                "--out",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    found = load_episodes(out / "found.jsonl", track="all")
    r1 = [e for e in found if e.risk == "R1"]
    assert r1
    meta = json.dumps({"episodes": str(out / "found.jsonl")})
    for agent, expected in (("oracle", 1.0), ("stale", 0.0)):
        res = tmp_path / agent
        subprocess.run(
            [
                sys.executable,
                "-m",
                "lm_eval",
                "--model",
                "memrisk-agent",
                "--model_args",
                f"agent={agent}",
                "--tasks",
                "memriskbench_r1",
                "--metadata",
                meta,
                "--output_path",
                str(res),
            ],
            check=True,
            timeout=600,
            capture_output=True,
        )
        (result_file,) = res.rglob("results_*.json")
        results = json.loads(result_file.read_text())
        metrics = results["results"]["memriskbench_r1"]
        assert results["n-samples"]["memriskbench_r1"]["effective"] == len(r1)
        assert metrics["pass,none"] == expected


def test_each_run_is_reported_as_it_ends(tmp_path: Path) -> None:
    """``run_fuzz(on_run=...)`` hears of every (strategy, seed) run in order, before the
    outputs are written (``memrisk fuzz --json`` prints each line then, so a long model
    run stopped early keeps the lines of the runs it finished)."""
    from lm_eval_memrisk.fuzz.pipeline import FuzzOptions, run_fuzz

    heard: list[tuple[str, int, bool]] = []
    out = tmp_path / "out"
    options = FuzzOptions(budget=4, out=str(out), agent="weak:fuzz-target",
                          episodes=str(_write_seeds(tmp_path / "seeds.jsonl")), seeds=(0, 1),
                          strategies=("random", "margin"), progress=False)
    _, runs = run_fuzz(options, on_run=lambda r: heard.append((r.strategy, r.seed, out.exists())))
    assert heard == [("random", 0, False), ("random", 1, False), ("margin", 0, False), ("margin", 1, False)]
    assert [(r.strategy, r.seed) for r in runs] == [(s, k) for s, k, _ in heard]
