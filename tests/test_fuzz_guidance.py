"""Guidance, coverage and seed selection units."""

from __future__ import annotations

import random

import pytest
from episode_factory import r1_episode
from test_fuzz_episodes import all_seed_episodes

from lm_eval_memrisk.cli import main
from lm_eval_memrisk.fuzz.campaign import run_campaign
from lm_eval_memrisk.fuzz.coverage import STATES, static_keys, universe_size
from lm_eval_memrisk.fuzz.execute import Executor
from lm_eval_memrisk.fuzz.guidance import Entry, Guided, RandomMutation, make_strategy
from lm_eval_memrisk.fuzz.mutate import mutate
from lm_eval_memrisk.fuzz.operators import OPERATORS
from lm_eval_memrisk.fuzz.seeds import make_seeds, select_episodes
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.interactive import agent_generate
from lm_eval_memrisk.running.policies import make_policy


def entries() -> list[Entry]:
    seeds, _ = make_seeds(all_seed_episodes())
    return [Entry(episode=s.episode, exp=s.exp) for s in seeds]


def test_guided_picks_the_least_covered_candidate() -> None:
    g = Guided(entries(), random.Random(0))
    a = frozenset({("R1", "tool_arg_equals", "paraphrase", "current")})
    b = frozenset({("R4", "tool_not_called", "revoke_item", "revoked"), ("R4", "x", "y", "z")})
    assert g.pick([a, b], covered=set()) == 1
    assert g.pick([a, b], covered=set(b)) == 0
    assert RandomMutation(entries(), random.Random(0)).pick([a, b], covered=set()) == 0


def test_guided_queue_prefers_energetic_entries_and_grows() -> None:
    es = entries()
    g = Guided(es, random.Random(1))
    first, ops = g.choose()
    assert sorted(ops) == sorted(OPERATORS)  # every operator, in a weighted order
    child = Entry(episode=first.episode, exp=first.exp, chain=({"op": "paraphrase", "params": {}},))
    g.feedback(first, child, "paraphrase", new_points=5, divergence=0.5)
    assert child in g.corpus and child.energy > 1.0
    nxt, _ = g.choose()
    assert nxt is child  # the new, energetic entry goes first
    g.feedback(first, Entry(first.episode, first.exp, chain=child.chain), "paraphrase", 0, 0.0)
    assert len(g.corpus) == len(es) + 1  # no gain: not kept


def test_coverage_only_ignores_divergence() -> None:
    es = entries()
    c = make_strategy("coverage", es, random.Random(0))
    child = Entry(episode=es[0].episode, exp=es[0].exp, chain=({"op": "paraphrase", "params": {}},))
    c.feedback(es[0], child, "paraphrase", new_points=0, divergence=1.0)
    assert child not in c.corpus  # type: ignore[attr-defined]


def test_static_keys_match_the_mutant() -> None:
    s = make_seeds([r1_episode()])[0][0]
    m = mutate(s.episode, s.exp, "revoke_item", random.Random(0))
    assert m is not None
    keys = static_keys(m.episode, m.exp, m.op)
    assert ("R4", "tool_not_called", "revoke_item", "revoked") in keys


def test_universe_counts_hidden_only_under_retrieval() -> None:
    pairs = {("R1", "tool_arg_equals")}
    full, retrieving = universe_size(pairs), universe_size(pairs, retrieval=True)
    assert full * len(STATES) == retrieving * (len(STATES) - 1)


def test_a_retrieving_policy_yields_hidden_points() -> None:
    seeds, _ = make_seeds(all_seed_episodes())
    ex = Executor(agent_generate(get_agent("stale")), "stale", make_policy("recency:2"))
    result = run_campaign(seeds, ex, "guided", budget=10, seed=0, progress=False)
    assert any(p[4] == "hidden" for p in result.coverage)


def test_select_episodes_per_risk() -> None:
    eps = all_seed_episodes()
    assert [e.id for e in select_episodes(eps, per_risk=1)] == ["T-R1-1"]
    assert len(select_episodes(eps, risks=["r1"])) == 3
    assert select_episodes(eps, risks=["R3"]) == []


def test_cli_rejects_a_zero_budget(tmp_path, capsys) -> None:
    assert main(["fuzz", "--agent", "stale", "--budget", "0", "--out", str(tmp_path)]) == 2
    assert "budget" in capsys.readouterr().err


@pytest.mark.parametrize("strategy", ["guided", "random", "coverage"])
def test_same_seed_same_run(strategy: str) -> None:
    seeds, _ = make_seeds(all_seed_episodes())
    runs = [
        run_campaign(
            seeds,
            Executor(agent_generate(get_agent("leaky")), "leaky"),
            strategy,
            15,
            4,
            progress=False,
        )
        for _ in range(2)
    ]
    assert [e.episode for e in runs[0].executed] == [e.episode for e in runs[1].executed]
    assert runs[0].unique == runs[1].unique and runs[0].coverage == runs[1].coverage


def test_guided_never_starves_the_roots() -> None:
    """A hugely energetic lineage still leaves every root a chance: half the picks are
    uniform over the roots."""
    es = entries()
    g = Guided(es, random.Random(2))
    child = Entry(episode=es[0].episode, exp=es[0].exp, chain=({"op": "paraphrase", "params": {}},))
    g.feedback(es[0], child, "paraphrase", new_points=1000, divergence=1.0)
    picked = [g.choose()[0] for _ in range(400)]
    roots = {id(e) for e in picked if e in es}
    assert len(roots) == len(es)  # every root was picked at least once
    assert 0.3 < sum(e is child for e in picked) / len(picked) < 0.7


def test_coverage_does_not_read_the_reply() -> None:
    """Coverage points are the same whatever the system under test answered (under the
    ``full`` policy "an avoided item was used" would be the failure label itself)."""
    from lm_eval_memrisk.fuzz.coverage import points
    from lm_eval_memrisk.running.runner import run_episode

    seed = entries()[0]
    m = mutate(seed.episode, seed.exp, "insert_update", random.Random(0))
    assert m is not None
    recs = [run_episode(m.episode, get_agent(a)).decisions[-1] for a in ("oracle", "stale", "amnesiac")]
    assert len({points(m.episode, m.exp, m.op, r) for r in recs}) == 1
