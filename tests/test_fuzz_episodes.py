"""Hand-built seed episodes for the fuzzer tests (shared by the other test_fuzz_* files),
and the tests that they are usable seeds."""

from __future__ import annotations

from dataclasses import replace

from episode_factory import EMAIL, SHIP, chain, item, r1_episode

from lm_eval_memrisk.episodes.records import Check, Episode, Event
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.fuzz.seeds import checkpoint, make_seeds
from lm_eval_memrisk.fuzz.validate_mutant import solves

NEW_PHONE = "+44 20 7946 0977"


def answer_episode() -> Episode:
    """Bob changed his phone number and asks for it (an answer task)."""
    events = [
        {
            "type": "scope_switch",
            "scopes": ("user:bob", "workspace:acme"),
            "text": "Session 1 — Bob (Acme)",
        },
        {"type": "user_message", "text": "Please remember my phone number: +44 20 7946 0018."},
        {
            "type": "memory_write",
            "item": item("m1", "phone number", "+44 20 7946 0018", scope="user:bob"),
        },
        {"type": "assistant_message", "text": "Saved."},
        {"type": "user_message", "text": f"My number changed, it is {NEW_PHONE} now."},
        {
            "type": "memory_update",
            "item": item("m2", "phone number", NEW_PHONE, scope="user:bob", t=6),
            "supersedes": "m1",
        },
        {"type": "assistant_message", "text": "Updated."},
        {"type": "user_message", "text": "Hello again. What's my phone number?"},
        {
            "id": "dp1",
            "type": "decision_point",
            "checks": (
                Check(id="c1", kind="text_contains", value=NEW_PHONE),
                Check(id="c2", kind="memory_not_used", status="superseded"),
            ),
            "reference": {"answer": f"Your phone number is {NEW_PHONE}."},
            "naive": {"answer": "Your phone number is {{mem:phone number}}."},
        },
    ]
    return Episode(
        id="T-ANS-1",
        version="1.0",
        risk="R1",
        tier="easy",
        track="main",
        family="phone",
        description="Bob asks for his phone number.",
        tools=(SHIP, EMAIL),
        events=chain(events),
    )


def workspace_episode() -> Episode:
    """The team's shared shipping address lives in the workspace scope."""
    ep = r1_episode()
    events = tuple(
        replace(e, item=replace(e.item, scope="workspace:acme"))
        if e.item and e.item.key == "shipping address"
        else e
        for e in ep.events
    )
    return replace(ep, id="T-WS-1", events=events)


def two_decision_episode() -> Episode:
    """An R1 episode with an earlier decision point (two checkpoints)."""
    early = {
        "id": "dp0",
        "type": "decision_point",
        "checks": (Check(id="c1", kind="text_contains", value="12 Oak Street, York"),),
        "reference": {"answer": "Your address is 12 Oak Street, York."},
    }
    ep = r1_episode(extra_events=())
    events = list(ep.events)
    pos = next(i for i, e in enumerate(events) if e.type == "memory_write" and e.item.id == "m2")
    spec = dict(early, time=events[pos - 1].time, after=(events[pos - 1].id,))
    events.insert(pos, Event(**spec))
    return replace(ep, id="T-R1-2", events=tuple(events))


def all_seed_episodes() -> list[Episode]:
    return [r1_episode(), answer_episode(), workspace_episode()]


def test_seed_episodes_are_valid_and_solved() -> None:
    for ep in all_seed_episodes() + [two_decision_episode()]:
        assert collect_problems(ep) == [], ep.id
        assert solves(ep, "oracle"), ep.id


def test_checkpoints_of_a_two_decision_episode() -> None:
    ep = two_decision_episode()
    assert checkpoint(ep, "dp1") is not ep  # the earlier decision point is dropped
    cp0 = checkpoint(ep, "dp0")
    assert cp0.id == "T-R1-2@dp0"
    assert [d.id for d in cp0.decision_points] == ["dp0"]
    assert collect_problems(cp0) == []  # padded with filler turns up to the easy tier
    seeds, skipped = make_seeds([ep])
    assert sorted(s.episode.id for s in seeds) == ["T-R1-2@dp0", "T-R1-2@dp1"]
    assert skipped == {"invalid": 0, "oracle_fails": 0, "no_expectation": 0}


def test_single_decision_checkpoint_is_the_episode() -> None:
    ep = r1_episode()
    assert checkpoint(ep, "dp1") is ep


def test_expectations_are_inferred() -> None:
    seeds, _ = make_seeds(all_seed_episodes())
    by_id = {s.episode.id: s.exp for s in seeds}
    assert by_id["T-R1-1"].mode == "use" and by_id["T-R1-1"].use_item == "m3"
    assert by_id["T-R1-1"].avoid == ("m1",) and by_id["T-R1-1"].slot() == ("address", True)
    assert by_id["T-ANS-1"].mode == "use" and not by_id["T-ANS-1"].is_tool
