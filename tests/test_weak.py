"""Planted-weakness agents: each fails exactly the episodes its structural trigger predicts."""

from __future__ import annotations

import json

import pytest

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.running.weak import (
    PROFILES,
    WEAKNESSES,
    expected_failures,
    parse_weak,
    structure,
)
from lm_eval_memrisk.scoring.scorer import score

EPISODES = load_episodes(track="all")
#: The catalogue's strengths and the deep-chain property were designed on v1, whose
#: seeds carry no cross-risk foils (v2 puts revocations and other scopes' newer notes in
#: every risk, so its seeds already meet two deep-chain conditions).
V1 = load_episodes("v1", track="all")


def _failed(agent_name: str) -> set[str]:
    agent = get_agent(agent_name)
    return {e.id for e in EPISODES if not score(e, run_episode(e, agent)).success}


def _predicted(agent_name: str, episodes=EPISODES) -> set[str]:
    return {i for ids in expected_failures(parse_weak(agent_name), episodes).values() for i in ids}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_fails_exactly_what_its_trigger_predicts(name):
    failed = _failed(f"weak:{name}")
    assert failed == _predicted(f"weak:{name}")


def test_catalogue_has_eight_profiles_of_different_strengths():
    counts = {name: len(_predicted(f"weak:{name}", V1)) for name in PROFILES}
    assert len(PROFILES) >= 8
    assert len({n for n in counts.values() if n > 0}) >= 5, counts
    # the two-condition profiles are reached by (almost) no unmutated episode
    assert counts["churn-bleed"] <= 2 and counts["decay-churn"] <= 2, counts
    assert counts["deep-chain"] == 0
    assert counts["churn1"] > counts["churn2"] > 0


def test_no_seed_is_one_mutation_from_the_deep_chain():
    """Each operator adds at most one of deep-chain's three conditions (a constraint, an
    update, another scope's newer note), and no seed checkpoint has two of them."""
    from lm_eval_memrisk.fuzz.seeds import make_seeds

    seeds, _ = make_seeds(V1)
    for seed in seeds:
        s = structure(seed.episode, seed.episode.decision_points[-1].id)
        met = [s.constraint_age is not None and s.constraint_age >= 4, s.updates >= 1, s.foreign_newer]
        assert sum(met) <= 1, seed.episode.id


@pytest.mark.parametrize("name", sorted(WEAKNESSES))
def test_every_acting_weakness_has_its_trigger_true(name):
    agent = parse_weak(f"weak:{name}")
    w = WEAKNESSES[name]
    for e in EPISODES:
        for dp in e.decision_points:
            _, acting = agent.decide(e, dp.id)
            if acting is not None:
                assert w.trigger(structure(e, dp.id)), (e.id, dp.id)


def test_structure_of_a_known_episode():
    e = V1[0]  # an R1 episode: one update of the email address, 3 turns before the ask
    s = structure(e, e.decision_points[-1].id)
    assert s.key == "email address" and s.updates == 1 and not s.foreign_newer
    assert not s.indirect and s.constraint_age is None and not s.conflict


def test_rate_is_seeded_and_a_subset():
    full = _failed("weak:churn1")
    a, b = _failed("weak:churn1:p=0.5:seed=1"), _failed("weak:churn1:p=0.5:seed=2")
    assert a == _failed("weak:churn1:p=0.5:seed=1")
    assert a <= full and b <= full and a != b
    assert 0.2 * len(full) < len(a) < 0.8 * len(full)


def test_combined_profiles_fail_the_union():
    assert _predicted("weak:churn2+scope-bleed") == _predicted("weak:churn2") | _predicted("weak:scope-bleed")


@pytest.mark.parametrize("bad", ["weak:nope", "weak:churn1:p=2", "weak:churn1:q=1", "weak:churn1:p=x", "weakling"])
def test_bad_names_are_clear_errors(bad):
    with pytest.raises(MemriskError):
        get_agent(bad)


def test_cli_list_json(capsys):
    assert main(["weak", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(PROFILES)
    for row in rows:
        assert set(row) >= {"name", "description", "expected_fail"}
        assert sum(row["expected_fail"].values()) == len(_predicted(f"weak:{row['name']}"))


def test_cli_run_accepts_weak_agents(capsys):
    assert main(["run", "--agent", "weak:scope-bleed", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    main_track = {i for i in _predicted("weak:scope-bleed") if not i.startswith("R6")}
    assert summary["n"] - summary["passed"] == len(main_track)


def test_cli_run_rejects_unknown_weak_agent(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--agent", "weak:nope"])
    assert "unknown planted-weakness profile" in capsys.readouterr().err


def test_weak_agent_through_lm_eval():
    """``lm_eval --model memrisk-agent --model_args agent=weak:NAME`` scores what the trigger predicts."""
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from lm_eval_memrisk._autoload import tasks_dir

    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    res = simple_evaluate(model="memrisk-agent", model_args="agent=weak:revoked-blind:p=0.5:seed=3",
                          tasks=["memriskbench_r4", "memriskbench_r1"], task_manager=tm, bootstrap_iters=0)
    predicted = _predicted("weak:revoked-blind:p=0.5:seed=3")
    for risk in ("R4", "R1"):  # v2 has revocation foils in R1 too
        episodes = [e for e in EPISODES if e.risk == risk]
        fails = [e for e in episodes if e.id in predicted]
        assert res["results"][f"memriskbench_{risk.lower()}"]["pass,none"] == pytest.approx(
            1 - len(fails) / len(episodes))
    assert 0 < len([i for i in predicted if i.startswith("R4")]) < 24
