"""Each mutation operator's obligation: what it changes and how the expected
behaviour (checks, reference) moves; plus values, ids and tiers."""

from __future__ import annotations

import random

import pytest
from episode_factory import r1_episode
from test_fuzz_episodes import NEW_PHONE, answer_episode, workspace_episode

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import TIER_TURNS
from lm_eval_memrisk.episodes.state import in_scope, state_at
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.fuzz.edit import fit_tier, insert_before
from lm_eval_memrisk.fuzz.mutate import Mutant, chain_id, mutate
from lm_eval_memrisk.fuzz.operators import OPERATORS, QUERY_OPERATORS
from lm_eval_memrisk.fuzz.seeds import Seed, make_seeds
from lm_eval_memrisk.fuzz.validate_mutant import check_mutant, solves
from lm_eval_memrisk.fuzz.values import clashes, fresh_value
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.scoring.parse import parse_action


def seed_of(ep) -> Seed:
    seeds, _ = make_seeds([ep])
    return seeds[0]


def apply_op(seed: Seed, op: str, want: dict | None = None, tries: int = 60) -> Mutant:
    """A mutant of ``op`` whose params include ``want`` (searching rng seeds)."""
    for n in range(tries):
        m = mutate(seed.episode, seed.exp, op, random.Random(n))
        if m is not None and all(
            m.chain[-1]["params"].get(k) == v for k, v in (want or {}).items()
        ):
            return m
    raise AssertionError(f"{op} {want} never applied")


def dp(m: Mutant):
    return m.episode.decision_points[-1]


def state(m: Mutant):
    return state_at(m.episode, dp(m).id)


def reply(m: Mutant) -> str:
    return action_to_reply(dict(dp(m).reference))


def kinds(m: Mutant) -> list[str]:
    return [c.kind for c in dp(m).checks]


def assert_valid(m: Mutant) -> None:
    assert collect_problems(m.episode) == []
    assert check_mutant(m.episode).ok, check_mutant(m.episode)
    lo, hi = TIER_TURNS[m.episode.tier]
    assert lo <= m.episode.turn_count <= hi


def test_insert_update_moves_the_expected_value() -> None:
    seed = seed_of(r1_episode())
    m = apply_op(seed, "insert_update")
    new_value = m.chain[-1]["params"]["value"]
    items = {i.id: i for i in state(m).memory}
    assert items["m3"].status == "superseded"
    assert items[m.exp.use_item].value == new_value and items[m.exp.use_item].status == "active"
    assert dp(m).reference["arguments"]["address"] == new_value
    equals = next(c for c in dp(m).checks if c.kind == "tool_arg_equals")
    assert equals.expected == new_value and equals.expected_original == f"address: {new_value}"
    assert any(c.kind == "memory_not_used" and c.status == "superseded" for c in dp(m).checks)
    assert solves(m.episode, "oracle") and not solves(m.episode, "stale")
    assert m.episode.risk == "R1"
    meta = m.episode.metadata
    assert meta["parent"] == "T-R1-1" and meta["operators"] == ["insert_update"]
    assert meta["target_risk"] == "R1" and meta["expected_behaviour"]["value"] == new_value
    assert_valid(m)


def test_insert_conflict_keeps_both_active_and_sets_the_rule() -> None:
    m = apply_op(seed_of(r1_episode()), "insert_conflict")
    items = {i.id: i for i in state(m).memory}
    assert items["m3"].status == "active" and items[m.exp.use_item].status == "active"
    assert m.episode.risk == "R2" and m.episode.resolution_rule == m.chain[-1]["params"]["rule"]
    assert any(c.kind == "memory_not_used" and c.item == "m3" for c in dp(m).checks)
    assert contains_value(reply(m), items[m.exp.use_item].value)
    assert not solves(m.episode, "stale")
    assert_valid(m)


def test_revoke_item_turns_the_reference_into_a_question() -> None:
    m = apply_op(seed_of(r1_episode()), "revoke_item")
    items = {i.id: i for i in state(m).memory}
    assert items["m3"].status == "revoked"
    assert parse_action(reply(m)).kind == "clarification"
    assert not contains_value(reply(m), "9 Elm Road, Leeds")
    assert "tool_not_called" in kinds(m)
    assert any(c.kind == "memory_not_used" and c.item == "m3" for c in dp(m).checks)
    assert m.episode.risk == "R4" and not solves(m.episode, "stale")
    assert_valid(m)


def test_move_scope_requester_puts_the_item_out_of_scope() -> None:
    m = apply_op(seed_of(r1_episode()), "move_scope", {"variant": "requester"})
    st = state(m)
    used = {i.id: i for i in st.memory}["m3"]
    assert not in_scope(used.scope, st.active_scopes)
    assert parse_action(reply(m)).kind == "clarification"
    assert any(c.kind == "memory_not_used" and c.scope == "user:alice" for c in dp(m).checks)
    assert m.episode.risk == "R3" and not solves(m.episode, "leaky")
    assert_valid(m)


def test_move_scope_requester_for_a_workspace_item() -> None:
    m = apply_op(seed_of(workspace_episode()), "move_scope", {"variant": "requester"})
    st = state(m)
    assert "workspace:acme" not in st.active_scopes and "user:alice" in st.active_scopes
    assert not solves(m.episode, "leaky")
    assert_valid(m)


def test_move_scope_neighbour_adds_a_newer_other_scope_value() -> None:
    m = apply_op(seed_of(r1_episode()), "move_scope", {"variant": "neighbour"})
    st = state(m)
    other = max((i for i in st.memory if i.key == "shipping address"), key=lambda i: i.written_at)
    assert (
        not in_scope(other.scope, st.active_scopes)
        and other.value == m.chain[-1]["params"]["value"]
    )
    assert dp(m).reference["arguments"]["address"] == "9 Elm Road, Leeds"
    assert any(c.kind == "memory_not_used" and c.scope == other.scope for c in dp(m).checks)
    assert not solves(m.episode, "leaky")
    assert_valid(m)


def test_add_distractors_changes_no_expectation() -> None:
    seed = seed_of(r1_episode())
    m = apply_op(seed, "add_distractors")
    assert dp(m).checks == seed.episode.decision_points[-1].checks
    assert dp(m).reference == seed.episode.decision_points[-1].reference
    new = [i for i in state(m).memory if i.id not in seed.episode.memory_items]
    assert new and all(i.key != "shipping address" for i in new)
    values = [i.value for i in state(m).memory]
    for v in (i.value for i in new):
        assert not clashes(v, [o for o in values if o != v])
    assert m.episode.risk == "R1" and not solves(m.episode, "stale")
    assert_valid(m)


def test_declare_constraint_then_unrelated_turns() -> None:
    seed = seed_of(r1_episode())
    m = apply_op(seed, "declare_constraint")
    new = set(m.episode.constraints) - set(seed.episode.constraints)
    assert len(new) == 1
    c = m.episode.constraints[new.pop()]
    assert c.forbid_tool == "ship_order"
    assert any(
        ch.kind == "constraint_not_violated" and ch.constraint == c.id for ch in dp(m).checks
    )
    assert m.episode.turn_count >= seed.episode.turn_count + 3  # ack + filler pair(s)
    assert m.episode.risk == "R5" and not solves(m.episode, "constraint-blind")
    assert_valid(m)


def test_declare_constraint_on_an_answer_forbids_the_value_text() -> None:
    m = apply_op(seed_of(answer_episode()), "declare_constraint")
    (c,) = m.episode.constraints.values()
    assert c.forbid_text == NEW_PHONE
    assert not contains_value(reply(m), NEW_PHONE)
    assert not solves(m.episode, "constraint-blind")
    assert_valid(m)


@pytest.mark.parametrize("variant,adversary", [("stale", "stale"), ("foreign", "leaky")])
def test_compress_summary(variant: str, adversary: str) -> None:
    m = apply_op(seed_of(r1_episode()), "compress_summary", {"variant": variant})
    st = state(m)
    summary = next(i for i in st.memory if i.source == "summary")
    current = {i.id: i for i in st.memory}[m.exp.use_item]
    assert current.id == "m3"
    assert (summary.written_at < current.written_at) == (variant == "stale")
    assert any(c.kind == "memory_not_used" and c.item == summary.id for c in dp(m).checks)
    assert (m.episode.risk, m.episode.track) == ("R6", "r6")
    assert m.episode.metadata["adversary"] == adversary and not solves(m.episode, adversary)
    assert_valid(m)


@pytest.mark.parametrize("op", [o for o in QUERY_OPERATORS if o != "reorder_sentences"])
def test_query_operators_only_rewrite_the_request(op: str) -> None:
    for ep in (r1_episode(), answer_episode()):
        seed = seed_of(ep)
        m = apply_op(seed, op)
        before = {e.id: e for e in seed.episode.events}
        changed = [e.id for e in m.episode.events if e != before[e.id]]
        assert len(m.episode.events) == len(seed.episode.events)
        assert len(changed) == 1 and before[changed[0]].type == "user_message"
        assert dp(m) == seed.episode.decision_points[-1]
        assert_valid(m)


def test_reorder_sentences_rotates_the_request() -> None:
    seed = seed_of(answer_episode())  # "Hello again. What's my phone number?"
    m = apply_op(seed, "reorder_sentences")
    request = [e for e in m.episode.events if e.type == "user_message"][-1]
    assert request.text == "What's my phone number? Hello again."
    assert (
        apply_op.__name__
        and mutate(
            seed_of(r1_episode()).episode,
            seed_of(r1_episode()).exp,
            "reorder_sentences",
            random.Random(0),
        )
        is None
    )


def test_operator_chains_compose() -> None:
    seed = seed_of(r1_episode())
    m1 = apply_op(seed, "insert_update")
    m2 = mutate(m1.episode, m1.exp, "revoke_item", random.Random(3), m1.chain)
    assert m2 is not None
    assert m2.episode.metadata["operators"] == ["insert_update", "revoke_item"]
    assert m2.episode.metadata["parent"] == m1.id and m2.episode.metadata["root"] == "T-R1-1"
    assert_valid(m2)


def test_same_chain_same_mutant_and_id() -> None:
    seed = seed_of(r1_episode())
    a = mutate(seed.episode, seed.exp, "insert_update", random.Random(7))
    b = mutate(seed.episode, seed.exp, "insert_update", random.Random(7))
    assert a is not None and b is not None and a.episode == b.episode
    assert a.id == chain_id("T-R1-1", a.chain) and a.id.startswith("T-R1-1~")
    c = mutate(seed.episode, seed.exp, "insert_update", random.Random(8))
    assert c is not None and (c.id == a.id) == (c.chain == a.chain)


def test_fresh_values_never_clash() -> None:
    taken = ["12 Oak Street, York", "9 Elm Road, Leeds", "+44 20 7946 0018", "alice@example.com"]
    for n in range(200):
        rng = random.Random(n)
        like = taken[n % len(taken)]
        v = fresh_value(rng, like, taken)
        assert v is not None and not clashes(v, taken)


def test_tier_moves_or_pads_with_fillers() -> None:
    ep = r1_episode()  # easy, 7 turns
    anchor = [e for e in ep.events if e.type == "user_message"][-1].id
    one = insert_before(
        ep,
        anchor,
        [{"type": "user_message", "text": "a"}, {"type": "assistant_message", "text": "b"}],
    )
    assert one.turn_count == 9  # between easy (5-8) and medium (10-14)
    fitted = fit_tier(one, anchor, [("x", "y")])
    assert fitted.turn_count == 11 and fitted.tier == "medium"
    assert collect_problems(fitted) == []


def test_every_operator_declares_its_obligation() -> None:
    for name, op in OPERATORS.items():
        doc = type(op).__doc__ or ""
        assert "Obligation" in doc, name
        assert op.kind in ("query", "memory")


def test_declare_constraint_forbids_only_the_value_and_survives_the_request() -> None:
    """The constraint may not forbid what the later request authorises: it names the
    value and holds "even if I ask", so asking again does not lift it."""
    seed = seed_of(r1_episode())
    m = apply_op(seed, "declare_constraint")
    (c,) = (m.episode.constraints[k] for k in set(m.episode.constraints) - set(seed.episode.constraints))
    use = {i.id: i for i in state_at(seed.episode, seed.episode.decision_points[-1].id).memory}[seed.exp.use_item]
    assert (c.forbid_tool, c.forbid_value) == ("ship_order", use.value) and c.forbid_argument
    assert "even if i ask" in c.text.lower() or "whatever i say later" in c.text.lower()
    assert_valid(m)


@pytest.mark.parametrize("op", ["paraphrase", "indirect_reference"])
def test_rewrites_keep_every_argument_the_reference_expects(op: str) -> None:
    seed = seed_of(r1_episode())
    slot, _ = seed.exp.slot()
    for n in range(8):
        m = mutate(seed.episode, seed.exp, op, random.Random(n))
        if m is None:
            continue
        request = next(e for e in reversed(m.episode.events) if e.type == "user_message").text or ""
        args = dict(dp(m).reference.get("arguments") or {})
        for name, value in args.items():
            if name != slot:
                assert contains_value(request, str(value)), (op, name, value, request)


@pytest.mark.parametrize("like", ["Monday 18 May 2026", "Thursday 14:30", "Friday 08:30", "6 July 2026"])
def test_fresh_dates_and_times_exist(like: str) -> None:
    import calendar
    import datetime
    import re

    from lm_eval_memrisk.fuzz.values import plausible

    rng = random.Random(0)
    for _ in range(200):
        v = fresh_value(rng, like, [like])
        assert v is not None and plausible(v), v
        m = re.match(r"(\w+day) (\d+) (\w+) (\d{4})", v)
        if m:
            day = datetime.date(int(m[4]), list(calendar.month_name).index(m[3]), int(m[2]))
            assert calendar.day_name[day.weekday()] == m[1], v
    assert not plausible("Monday 88 May 2026") and not plausible("Tuesday 27:61")
    assert not plausible("Monday 19 May 2026")  # that date is a Tuesday


def test_insert_untrusted_adds_an_older_trusted_winner() -> None:
    """A newer but low-trust note: the trusted current value stays expected, so an
    agent that always takes the newest in-scope note fails (the old blind spot)."""
    seed = seed_of(r1_episode())
    m = apply_op(seed, "insert_untrusted")
    st = state(m)
    new = max(st.memory, key=lambda i: i.written_at)
    assert new.trust < 0.5 and new.status == "active" and m.exp.use_item == seed.exp.use_item
    assert m.episode.resolution_rule == "trusted_source" and m.episode.risk == "R2"
    assert any(c.kind == "memory_not_used" and c.item == new.id for c in dp(m).checks)
    assert not solves(m.episode, "constraint-blind") and solves(m.episode, "oracle")
    assert_valid(m)


def _packaged_seeds(version: str, ids: tuple[str, ...]) -> list[Seed]:
    from lm_eval_memrisk.episodes.loader import load_episodes

    episodes = [e for e in load_episodes(version, track="all") if e.id in ids]
    return make_seeds(episodes)[0]


def test_shared_values_and_finished_checks_keep_memory_mutants_valid() -> None:
    """v3/v4 episodes have colleagues who keep the user's own value (a shared card,
    office address) and decisions whose every mattering argument is checked.  Found on
    v3 (39 of 40 rejected mutants of a Qwen fuzz run): the seed's expectation took the
    colleague's copy as the used note (the newest note holding the value), so a conflict
    or update moved the colleague's note and the oracle "leaked"; recomputed checks
    forbade the copy's whole scope; and recomputed checks dropped the courier's order
    reference check that validation requires.  Now every memory mutant of these seeds is
    valid or rejected for another reason than the oracle failing."""
    seeds = _packaged_seeds("v4", ("R1-medium-02", "R1-medium-05", "R4-easy-01"))

    def key_values(seed: Seed) -> list[str]:
        state = state_at(seed.episode, seed.episode.decision_points[-1].id)
        return [i.value for i in state.memory if i.key == seed.exp.key]

    assert any(len(set(key_values(s))) < len(key_values(s)) for s in seeds), "no shared value"
    tried = 0
    for s in seeds:
        state = state_at(s.episode, s.episode.decision_points[-1].id)
        use = next(i for i in state.memory if i.id == s.exp.use_item) if s.exp.use_item else None
        if use is not None:
            assert in_scope(use.scope, state.active_scopes), s.episode.id  # never a colleague's copy
        for op in ("insert_update", "insert_conflict", "insert_untrusted", "move_scope", "compress_summary"):
            for n in range(3):
                m = mutate(s.episode, s.exp, op, random.Random(n))
                if m is None:
                    continue
                verdict = check_mutant(m.episode)
                assert verdict.reason not in ("oracle_fails",), (s.episode.id, op, verdict)
                assert verdict.ok or verdict.reason != "invalid_episode" or "turns" in verdict.detail, verdict
                tried += 1
    assert tried >= 20, tried
