"""Planted-weakness margins: graded distance to firing, 0 exactly where a weakness acts."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from episode_factory import r1_episode

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.fuzz.mutate import mutate
from lm_eval_memrisk.fuzz.operators import OPERATORS
from lm_eval_memrisk.fuzz.seeds import make_seeds
from lm_eval_memrisk.fuzz.validate_mutant import check_mutant
from lm_eval_memrisk.running.weak import WEAKNESSES, Condition, parse_weak, structure
from lm_eval_memrisk.running.weak_margin import checkpoint_margins, decision_margins

ALL = parse_weak("weak:" + "+".join(WEAKNESSES))


def test_condition_shortfall_scale() -> None:
    s = structure(r1_episode(), "dp1")  # gap 4, one update, constraint 3 turns old, indirect
    assert Condition("gap", 10).shortfall(s) == pytest.approx(0.6)
    assert Condition("updates", 1).shortfall(s) == 0.0
    assert Condition("updates", 3).shortfall(s) == pytest.approx(2 / 3)
    assert Condition("constraint_age", 4).shortfall(s) == pytest.approx(0.25)
    assert Condition("indirect").shortfall(s) == 0.0
    assert Condition("foreign_newer").shortfall(s) == 1.0
    # nothing to count (no constraint) is as far as it gets
    assert Condition("constraint_age", 4).shortfall(replace(s, constraint_age=None)) == 1.0


def test_margins_of_a_handcrafted_episode() -> None:
    """r1_episode: the shipping address was updated once, written 4 turns before an
    indirect request; the only constraint (3 turns old) is about email, not shipping."""
    e = r1_episode()
    m = checkpoint_margins(ALL, e)
    assert m.of("gap10").margin == pytest.approx(0.3)  # gap 4 of 10 -> 0.6; differs: 0
    assert m.of("churn3").margin == pytest.approx(1 / 3)  # 1 of 3 updates -> 2/3; differs: 0
    assert m.of("churn1").margin == 0.0 and m.of("churn1").fired
    assert m.of("scope-bleed").margin == 1.0  # no other scope; leaky picks the right note
    deep = m.of("deep-chain")
    assert [(c.name, c.value, c.shortfall) for c in deep.conditions] == [
        ("constraint_age>=4", 3, 0.25),
        ("updates>=1", 1, 0.0),
        ("foreign_newer", False, 1.0),
        ("differs", False, 1.0),
    ]
    assert deep.margin == pytest.approx(0.5625)
    # the decision's margin is the smallest weakness margin; a profile sees only its own
    assert m.margin == 0.0 and m.closest == "churn1"
    two = decision_margins(parse_weak("weak:gap10+churn3"), e, "dp1")
    assert two.margin == pytest.approx(0.3) and two.closest == "gap10"
    assert parse_weak("weak:churn1").decide(e, "dp1")[1] == "churn1"
    assert parse_weak("weak:gap10+churn3").decide(e, "dp1")[1] is None


def test_margin_is_zero_exactly_where_a_weakness_acts() -> None:
    """Over every decision point of v1, the weaknesses with margin <= 0 are exactly the
    ones whose wrong reply the agent would give."""
    for e in load_episodes("v1", track="all"):
        for dp in e.decision_points:
            acting = {name for name, _ in ALL.wrong_replies(e, dp.id)}
            graded = decision_margins(ALL, e, dp.id)
            assert {w.weakness for w in graded.weaknesses if w.fired} == acting, (e.id, dp.id)
            assert all(0.0 <= w.margin <= 1.0 for w in graded.weaknesses)


def test_deep_chain_needs_two_shrinking_steps() -> None:
    """From a v1 seed the target passes, move_scope (another scope's newer note) takes
    deep-chain's margin from 3/4 to 1/2 and declare_constraint then fires it; no single
    operator on the seed fires it."""
    target = parse_weak("weak:fuzz-target")
    seeds, _ = make_seeds(load_episodes("v1", track="all"))
    seed = next(s for s in seeds if s.episode.id == "R1-easy-03")
    start = checkpoint_margins(target, seed.episode)
    assert start.margin > 0 and start.of("deep-chain").margin == 0.75
    for op in OPERATORS:
        once = mutate(seed.episode, seed.exp, op, random.Random(0))
        if once is not None:
            assert checkpoint_margins(target, once.episode).of("deep-chain").margin > 0, op
    step1 = mutate(seed.episode, seed.exp, "move_scope", random.Random(0))
    assert step1 is not None and check_mutant(step1.episode).ok
    m1 = checkpoint_margins(target, step1.episode)
    assert m1.margin > 0 and m1.of("deep-chain").margin == 0.5  # still passes, closer
    step2 = mutate(step1.episode, step1.exp, "declare_constraint", random.Random(0), step1.chain)
    assert step2 is not None and check_mutant(step2.episode).ok
    m2 = checkpoint_margins(target, step2.episode)
    assert m2.of("deep-chain").margin == 0.0 and m2.closest == "deep-chain"
    assert target.decide(step2.episode, step2.episode.decision_points[-1].id)[1] == "deep-chain"
