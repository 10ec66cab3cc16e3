"""Dataset v10 (issue 26): v9 with the history readers of v9 asked for
(:mod:`~lm_eval_memrisk.generator.polish.v10`).

* v10 is v9 but for: restatements replaced before anything used them left out, rules
  not lifted in the sitting that set them, requests weeks (not days) after a deletion,
  and the user's words; every decision, tool call and check is v9's (a check names the
  same note, renumbered);
* each change does what it is for, on every build;
* every check of v7 and v8 holds on v10's builds, the template band and the learned
  reader's goals included, and the learned reader passes no more than measured.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import pytest
import test_dataset_v7 as v7_checks
import test_dataset_v8 as v8_checks
import test_dataset_v9 as v9_checks

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.records import TURN_EVENTS, Episode
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator import polish as v9
from lm_eval_memrisk.generator.polish import history, v10
from lm_eval_memrisk.generator.risks.common import V7_LOOKUP_ASKS

SEEDS = v7_checks.SEEDS
#: The learned reader (``learned_audit``) on v10's builds, as measured: main 68 / 68 / 62 /
#: 67 (shipped seed, seeds 1-3; v9: 68 / 63 / 61 / 66), the most of each risk on any build
#: (issue 26's goals: 72 of main, 18 of a risk).
LEARNED_MEASURED = 68
LEARNED_RISK_MEASURED = {"R1": 15, "R2": 14, "R3": 14, "R4": 17, "R5": 15}


@pytest.fixture(scope="module")
def pairs() -> dict[str, list[tuple[Episode, Episode]]]:
    """Per build: (v9 episode, v10 episode)."""
    return v9_checks.version_pairs("v9", "v10")


@pytest.fixture(scope="module")
def datasets(pairs: dict[str, list[tuple[Episode, Episode]]]) -> dict[str, list[Episode]]:
    return v9_checks.later_of(pairs)


def _dropped(a: Episode, b: Episode) -> set[str]:
    """The ids of ``a``'s notes (v9) whose value no note of ``b`` (v10) holds."""
    kept = {e.item.value for e in b.events if e.item is not None}
    return {e.item.id for e in a.events if e.item is not None and e.item.value not in kept}


def _skeleton(ep: Episode, left_out: set[str] = frozenset()) -> list[tuple]:
    """Every event but the conversation's turns and headers, each note named by its key
    and value (v10 renumbers notes; a chat note's key may be renamed), the notes in
    ``left_out`` and their events skipped, and what superseded one of them superseding the
    note it superseded."""
    items = {e.item.id: e.item for e in ep.events if e.item is not None}
    before = {e.item.id: e.supersedes for e in ep.events if e.item is not None}

    def name(item_id: str | None) -> tuple[str, str] | str | None:
        while item_id in left_out:
            item_id = before[item_id]
        if item_id not in items:
            return item_id
        return (v10.RENAMED_KEYS.get(items[item_id].key, items[item_id].key), items[item_id].value)

    out = []
    for e in ep.events:
        if e.type in TURN_EVENTS or e.type == "scope_switch" or (e.item is not None and e.item.id in left_out):
            continue
        item = e.item and dataclasses.replace(e.item, id="", key=name(e.item.id)[0], valid_from=0, valid_to=None)
        rule = e.constraint and dataclasses.replace(e.constraint, text="")
        checks = tuple(dataclasses.replace(c, item=name(c.item)) if c.item else c for c in e.checks)
        target = name(e.target) if e.type == "memory_revoke" else e.target
        out.append((e.type, item, name(e.supersedes), target, rule, checks, e.tool, e.arguments, e.result,
                    e.terminal_tool, _supplied(ep, e.reference)))  # fmt: skip
    return out


def _supplied(ep: Episode, reference: dict | None) -> dict | None:
    """A supplier bill's reference as v10 says it (:data:`~.polish.v10.SUPPLIER_ITEMS`)."""
    said = ((reference or {}).get("arguments") or {}).get("reference")
    if ep.family != "supplier_payment" or said not in v10.SUPPLIER_ITEMS:
        return reference
    return {**reference, "arguments": {**reference["arguments"], "reference": v10.SUPPLIER_ITEMS[said]}}


def test_v10_is_v9_but_for_history_and_words(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    dropped = 0
    for name, both in pairs.items():
        for a, b in both:
            assert (a.id, a.risk, a.tier, a.family, a.tools, a.metadata) == (b.id, b.risk, b.tier, b.family, b.tools, b.metadata)
            assert b.version == "10.0"
            gone = _dropped(a, b)
            for item_id in gone:  # each a restatement that a later update replaced before any decision
                i = next(k for k, e in enumerate(a.events) if e.item is not None and e.item.id == item_id)
                assert history._droppable(a.events, i), (name, a.id, item_id)
            dropped += len(gone)
            assert _skeleton(a, gone) == _skeleton(b), (name, a.id)
            # the conversation: the same turns in order, but for those of a left-out note
            left = {k - 1 for k, e in enumerate(a.events) if e.item is not None and e.item.id in gone}
            left |= {k + 2 for k in left if k + 2 < len(a.events) and a.events[k + 2].type == "assistant_message"}
            ta = [e for k, e in enumerate(a.events) if e.type in TURN_EVENTS and k not in left]
            tb = [e for e in b.events if e.type in TURN_EVENTS]
            if gone:  # a greeting left alone in its session by a restatement's going goes too
                greetings = [e for e in ta if e.text in history.GREETINGS and not any(x.text == e.text for x in tb)]
                ta = [e for e in ta if e not in greetings[:1]]
            assert [e.type for e in ta] == [e.type for e in tb], (name, a.id)
    assert dropped >= 30, dropped


def test_no_restatement_is_left_that_a_later_update_replaces_unused(datasets: dict[str, list[Episode]]) -> None:
    from lm_eval_memrisk.episodes.records import TIER_TURNS

    for name, episodes in datasets.items():
        for ep in episodes:
            turns = sum(e.type in ("user_message", "assistant_message") for e in ep.events)
            for i in range(len(ep.events)):  # (one kept where leaving it out would go below the tier's turns)
                assert not history._droppable(ep.events, i) or turns - 3 < TIER_TURNS[ep.tier][0], (name, ep.id, ep.events[i].id)


def _sessions(ep: Episode) -> list[tuple[int, dt.date]]:
    return [(k, d) for k, e in enumerate(ep.events) if e.type == "scope_switch" and (d := v9.header_day(e.text or "")) is not None]


def _session_of(ep: Episode, k: int) -> int:
    return max(i for i, _ in _sessions(ep) if i < k)


def _left_in_place(ep: Episode, k: int, fewest_days: int) -> bool:
    """Whether v10 may leave the event at ``k`` in its session: the next session is fewer
    than ``fewest_days`` days on, or the rest of the session names a day."""
    head = _session_of(ep, k)
    nxt = next((i for i, _ in _sessions(ep) if i > k), None)
    days = dict(_sessions(ep))
    close = nxt is not None and (days[nxt] - days[head]).days < fewest_days
    return close or history._says_a_day(ep.events[k : nxt or len(ep.events)])


def test_rules_are_lifted_in_a_later_session_than_they_are_set(datasets: dict[str, list[Episode]]) -> None:
    later = 0
    for name, episodes in datasets.items():
        for ep in episodes:
            declared = {e.constraint.id: k for k, e in enumerate(ep.events) if e.type == "constraint_declare" and e.constraint}
            for k, e in enumerate(ep.events):
                if e.type != "constraint_lift" or e.target not in declared:
                    continue
                if _session_of(ep, k) != _session_of(ep, declared[e.target]):
                    later += 1
                    continue
                assert _left_in_place(ep, k, 4), (name, ep.id, e.text)
    assert later >= 20, later


def test_a_hold_on_a_value_just_given_comes_in_a_later_session(datasets: dict[str, list[Episode]]) -> None:
    held = 0
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if e.family not in v9.DATE_FAMILIES):
            for k, e in enumerate(ep.events):
                value = e.constraint.forbid_value if e.type == "constraint_declare" and e.constraint else None
                if not value:
                    continue
                head = _session_of(ep, k)
                said = any(x.type == "user_message" and value in (x.text or "") for x in ep.events[head + 1 : k])
                held += not said
                assert not said or _left_in_place(ep, k, 2), (name, ep.id, e.text)
    assert held >= 60, held


def test_a_request_after_a_deletion_comes_two_weeks_or_more_later(datasets: dict[str, list[Episode]]) -> None:
    weeks = 0
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if e.family not in v9.DATE_FAMILIES):
            days = dict(_sessions(ep))
            for k, e in enumerate(ep.events):
                decision = next((j for j in range(k + 1, len(ep.events)) if ep.events[j].type == "decision_point"), None)
                if e.type != "memory_revoke" or decision is None or _session_of(ep, decision) == _session_of(ep, k):
                    continue
                at = _session_of(ep, decision)
                gap = (days[at] - days[_session_of(ep, k)]).days
                assert gap >= history.AFTER_DELETION or history._says_a_day(ep.events[at:]), (name, ep.id, e.text, gap)
                weeks += 1
    assert weeks >= 40, weeks


def test_the_users_words_are_v10s(datasets: dict[str, list[Episode]]) -> None:
    """An old value is kept on file for a reason and with its year; an announced change is
    asked for and confirmed; a lookup is asked for by what it looks up; no "Same as X's"
    or "X and I share this one"; nothing "cancelled" that cannot be; no dog's name that
    is a dog."""
    seen = dict.fromkeys(("backdated", "announced", "lookup", "shared", "retracted"), 0)
    shared_forms = [re.compile(p) for p in (r"^Same as \S+'s — ", r"^\S+ and I share this one: ")]
    for name, episodes in datasets.items():
        for ep in episodes:
            today = None
            for k, e in enumerate(ep.events):
                text = e.text or ""
                if e.type == "scope_switch":
                    today = v9.header_day(text) or today
                    continue
                assert "in case I need it" not in text and "two years" not in text, (name, ep.id, text)
                assert not any(p.search(text) for p in v10.ANNOUNCED_SAID), (name, ep.id, text)
                assert "dog's name" not in text and "board game is" not in text, (name, ep.id, text)
                assert not any(p.match(text) for p in shared_forms), (name, ep.id, text)
                assert "changed a few weeks ago" not in text, (name, ep.id, text)
                if ep.family == "supplier_payment":
                    assert not any(f"the {old}" in text for old in v10.SUPPLIER_ITEMS), (name, ep.id, text)
                if e.type == "user_message":
                    before = next((x for x in reversed(ep.events[:k]) if x.type in ("user_message", "assistant_message", "scope_switch")), None)
                    opens = before is None or before.type == "scope_switch"
                    assert not (opens and re.match(r"Separately, |One more, |Okay, next thing|One more thing|Right —", text)), (name, ep.id, text)
                    assert not v10._said_in_session(ep.events, k) or not v10.SECOND_GREETING.match(text), (name, ep.id, text)
                if ep.family in v10.NOT_CANCELLED:
                    assert "It's cancelled" not in text, (name, ep.id, text)
                nxt = ep.events[k + 1] if k + 1 < len(ep.events) else None
                if text in V7_LOOKUP_ASKS and nxt is not None and nxt.type == "tool_call":
                    from lm_eval_memrisk.generator.families import FAMILIES

                    assert FAMILIES[ep.family].noun not in str(nxt.arguments), (name, ep.id, text)
                if m := re.search(r"until (\w+) (\d{4}) it was|It was .+ until (\w+) (\d{4})\.", text):
                    year = int(m[2] or m[4])
                    assert today is not None and year < today.year, (name, ep.id, text)
                    seen["backdated"] += 1
                seen["announced"] += "I'll tell you once that's confirmed" in text or "it isn't sorted yet" in text
                seen["lookup"] += bool(re.match(r"(Could you check what the records have for|Can you pull up|Would you look up) my ", text))
                seen["shared"] += bool(re.search(r"\band I (get our parcels|are on the same|always|work with|pay the same)", text))
                seen["retracted"] += "I had it wrong" in text
    assert min(seen.values()) >= 4, seen


def test_the_packaged_v10_is_the_generators_build_at_the_shipped_seed() -> None:
    from lm_eval_memrisk.episodes.loader import default_dataset_path
    from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

    packaged = default_dataset_path("v10").read_text(encoding="utf-8")
    assert packaged == "".join(dumps_episode(e) + "\n" for e in generate(DEFAULT_SEED, version="v10"))


def test_v10_builds_are_deterministic() -> None:
    assert [dumps_episode(e) for e in generate(2, version="v10")] == [dumps_episode(e) for e in generate(2, version="v10")]


def test_learned_surface_reader_passes_no_more_than_measured(datasets: dict[str, list[Episode]]) -> None:
    v8_checks.learned_at_most(datasets, LEARNED_MEASURED, LEARNED_RISK_MEASURED)


@pytest.mark.parametrize("check", v8_checks.V7_CHECKS)
def test_v7_check_holds_on_v10(check: str, datasets: dict[str, list[Episode]]) -> None:
    getattr(v7_checks, check)(datasets)


@pytest.mark.parametrize("check", [
    "test_every_cell_of_the_team_table_occurs_and_is_right", "test_a_note_dropped_in_words_beside_the_team_note_says_it_is_the_users_own",
])  # fmt: skip
def test_v8_check_holds_on_v10(check: str, datasets: dict[str, list[Episode]]) -> None:
    getattr(v8_checks, check)(datasets)
