"""The mutant validator rejects bad mutants (and says why) and keeps good ones."""

from __future__ import annotations

import random
from dataclasses import replace

from episode_factory import r1_episode

from lm_eval_memrisk.episodes.records import Check, Episode
from lm_eval_memrisk.fuzz.mutate import mutate
from lm_eval_memrisk.fuzz.seeds import make_seeds
from lm_eval_memrisk.fuzz.validate_mutant import adversaries, check_mutant


def good_mutant() -> Episode:
    seeds, _ = make_seeds([r1_episode()])
    m = mutate(seeds[0].episode, seeds[0].exp, "insert_update", random.Random(0))
    assert m is not None
    return m.episode


def with_dp(ep: Episode, **changes) -> Episode:
    dp = ep.decision_points[-1]
    return replace(
        ep, events=tuple(replace(e, **changes) if e.id == dp.id else e for e in ep.events)
    )


def test_a_good_mutant_passes() -> None:
    assert check_mutant(good_mutant()).ok


def test_rejects_a_check_that_names_an_unknown_item() -> None:
    ep = good_mutant()
    checks = ep.decision_points[-1].checks + (Check(id="c9", kind="memory_not_used", item="m99"),)
    v = check_mutant(with_dp(ep, checks=checks[-3:]))
    assert not v.ok and v.reason == "invalid_episode" and "m99" in v.detail


def test_rejects_a_mutant_whose_oracle_fails() -> None:
    ep = good_mutant()  # the reference still ships to the superseded address
    v = check_mutant(
        with_dp(ep, reference={"tool": "ship_order", "arguments": {"address": "9 Elm Road, Leeds"}})
    )
    assert not v.ok and v.reason == "oracle_fails"


def test_rejects_a_mutant_the_adversary_solves() -> None:
    ep = good_mutant()
    dp = ep.decision_points[-1]
    v = check_mutant(with_dp(ep, naive=dict(dp.reference)))  # the stale agent now acts correctly
    assert not v.ok and v.reason == "adversary_passes"


def test_rejects_a_turn_count_outside_every_tier() -> None:
    ep = good_mutant()
    v = check_mutant(replace(ep, tier="hard"))
    assert not v.ok and v.reason == "invalid_episode" and "tier" in v.detail


def test_rejects_what_does_not_survive_the_json_round_trip() -> None:
    ep = replace(good_mutant(), metadata={"bad": (1, 2)})  # a tuple comes back as a list
    v = check_mutant(ep)
    assert not v.ok and v.reason == "not_serialisable"


def test_adversary_per_risk() -> None:
    ep = r1_episode()
    assert adversaries(ep) == ("stale",)
    assert adversaries(replace(ep, risk="R3")) == ("leaky",)
    assert adversaries(replace(ep, risk="R5")) == ("constraint-blind",)
    assert adversaries(replace(ep, risk="R6", track="r6")) == ("stale", "leaky")
    assert adversaries(replace(ep, risk="R6", track="r6", metadata={"adversary": "leaky"})) == (
        "leaky",
    )


def _withholding_mutants() -> list[Episode]:
    """Valid mutants whose decision expects asking or declining (an item revoked, moved
    out of scope or newly forbidden), from three R1 seeds."""
    from lm_eval_memrisk.episodes.loader import load_episodes

    seeds, _ = make_seeds([e for e in load_episodes("v5") if e.id in ("R1-easy-01", "R1-easy-04", "R1-easy-07")])
    out = []
    for i, s in enumerate(seeds):
        for op in ("revoke_item", "move_scope", "declare_constraint"):
            m = mutate(s.episode, s.exp, op, random.Random(i))
            if m is not None and m.episode.metadata["expected_behaviour"]["mode"] != "use":
                out.append(m.episode)
    return out


def test_withholding_mutants_require_asking_or_declining_in_words() -> None:
    """Their checks include a question about the key (R5: or a refusal), so an agent that
    does nothing fails them; before, it passed every such mutant (46 of 306 valid
    mutants, one per seed checkpoint and operator, every third v2 checkpoint)."""
    from lm_eval_memrisk.running.agent_registry import get_agent
    from lm_eval_memrisk.running.runner import run_episode
    from lm_eval_memrisk.scoring.scorer import score

    mutants = _withholding_mutants()
    ops = {m.metadata["operators"][-1] for m in mutants}
    assert ops == {"revoke_item", "move_scope", "declare_constraint"}
    nothing = get_agent("do-nothing")
    for m in mutants:
        assert check_mutant(m).ok, m.id
        assert "text_regex" in [c.kind for c in m.decision_points[-1].checks], m.id
        assert not score(m, run_episode(m, nothing)).success, m.id


def test_rejects_a_mutant_an_agent_doing_nothing_passes() -> None:
    m = _withholding_mutants()[0]
    dp = m.decision_points[-1]
    without_question = tuple(c for c in dp.checks if c.kind != "text_regex")
    v = check_mutant(with_dp(m, checks=without_question))
    assert not v.ok and v.reason == "do_nothing_passes"
