"""Dataset v9 (issue 26): v8 in the words blind readers of the whole of v8 asked for
(:mod:`~lm_eval_memrisk.generator.polish`).

* v9 is v8 but for wording: the same notes, constraints, checks and decisions; the
  requests and user turns it rewords change their decision's reference and naive action
  only where the request's own words are (an errand, a message, a day), and the only new
  events are the assistant's lines after lookup results;
* each rewording does what it is for, on every build: work errands for requests the user
  calls work and private ones for private requests, no one texts themselves a heads-up
  that they are late, no "the Sunday after next" (the day it means, in its first reading),
  no lookup result followed by the user's next message unanswered, no note that "fell
  through", no old value volunteered "just for the records";
* every check of v7 and v8 holds on v9's builds, the template band and the learned
  reader's goals included, and the learned reader passes no more than measured.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import re

import pytest
import test_dataset_v7 as v7_checks
import test_dataset_v8 as v8_checks

from lm_eval_memrisk.episodes.action_checks import FREE_TEXT_ARGUMENTS
from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.records import TURN_EVENTS, Episode, Event
from lm_eval_memrisk.episodes.relative_days import accepted_days, session_day
from lm_eval_memrisk.generator import generate
from lm_eval_memrisk.generator import polish as v9
from lm_eval_memrisk.generator.distractors import CHATTER, EXTRA_CHATTER
from lm_eval_memrisk.generator.risks.v2 import MENTION_OLD
from lm_eval_memrisk.generator.risks.v7 import EARLY_CONTEXTS
from lm_eval_memrisk.generator.templates import wildcard

SEEDS = v7_checks.SEEDS
#: The learned reader (trained on v9 seed 4242) on v9's builds, as measured: main 68 / 63 /
#: 61 / 66 (shipped seed, seeds 1-3; v8: 68 / 65 / 67 / 66), most of any risk 18 (R4, the
#: shipped seed: issue 26's per-risk goal is at most 18 of 24).
LEARNED_MEASURED = 68
LEARNED_RISK_MEASURED = {"R1": 13, "R2": 13, "R3": 15, "R4": 18, "R5": 15}


def version_pairs(base: str, version: str) -> dict[str, list[tuple[Episode, Episode]]]:
    """Per build (the shipped seed, seeds 1-3): (``base`` episode, ``version`` episode)."""
    return {f"seed {seed}": list(zip(generate(seed, version=base), generate(seed, version=version), strict=True)) for seed in SEEDS}


def later_of(pairs: dict[str, list[tuple[Episode, Episode]]]) -> dict[str, list[Episode]]:
    """Per build: the later version's episodes of :func:`version_pairs`."""
    return {name: [b for _, b in both] for name, both in pairs.items()}


@pytest.fixture(scope="module")
def pairs() -> dict[str, list[tuple[Episode, Episode]]]:
    """Per build: (v8 episode, v9 episode)."""
    return version_pairs("v8", "v9")


@pytest.fixture(scope="module")
def datasets(pairs: dict[str, list[tuple[Episode, Episode]]]) -> dict[str, list[Episode]]:
    return later_of(pairs)


def _skeleton(ep: Episode) -> list[tuple]:
    """What an episode holds beyond its conversation's wording and its sessions' headers:
    every other event in order (a note's times left out: they follow the renumbering; a
    check of a word of a reworded errand may go, see below)."""
    out = []
    for e in ep.events:
        if e.type in TURN_EVENTS or e.type == "scope_switch":
            continue
        item = e.item and dataclasses.replace(e.item, valid_from=0, valid_to=None)
        rule = e.constraint and dataclasses.replace(e.constraint, text="")  # (said in other words)
        checks = tuple(dataclasses.replace(c, accept=()) for c in e.checks
                       if not (c.kind == "tool_arg_equals" and c.argument in FREE_TEXT_ARGUMENTS))  # fmt: skip
        out.append((e.type, item, e.supersedes, e.target, rule, checks, e.tool, e.arguments, e.result,
                    e.terminal_tool, (e.reference or {}).get("tool")))  # fmt: skip
    return out


def _header(e: Event) -> str:
    return re.sub(r"^Session \d+ —", "", e.text or "")


def _who(e: Event) -> str:
    """Who a session header says is signed in (its date may be spread out: R1)."""
    return (e.text or "").rsplit("— signed in as", 1)[-1]


def _day(e: Event) -> dt.date:
    day = v9.header_day(e.text or "")
    assert day is not None, e.text
    return day


def _spread(days: list[dt.date]) -> list[dt.date]:
    out = days[:1]
    for x0, x1 in itertools.pairwise(days):
        gap = (x1 - x0).days
        out.append(out[-1] + dt.timedelta(days=max(gap, min(max(v9.STRETCH * gap, v9.SHORTEST_GAP), v9.LONGEST_GAP))))
    return out


def _stretched(ep: Episode) -> bool:
    return ep.risk == "R1" and ep.tier != "easy" and ep.family not in v9.DATE_FAMILIES


def _rule_session(ep: Episode, header: Event) -> bool:
    """Whether ``header`` opens a session v9 added for an R5 rule (:func:`~.polish.rules_in_their_own_session`)."""
    i = ep.events.index(header)
    return ep.risk == "R5" and i + 1 < len(ep.events) and ep.events[i + 1].type == "constraint_declare"


def test_r5_rules_against_a_value_just_given_come_in_a_later_session(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    moved = 0
    for name, both in pairs.items():
        for a, b in both:
            for i, e in enumerate(b.events):
                if e.type != "constraint_declare" or b.risk != "R5" or b.family in v9.DATE_FAMILIES or not e.constraint.forbid_value:
                    continue
                head = max(j for j in range(i) if b.events[j].type == "scope_switch")
                said = [x for x in b.events[head + 1 : i] if x.type == "user_message" and e.constraint.forbid_value in (x.text or "")]
                if said:  # left where it was: the next session is less than two days on
                    nxt = next((x for x in b.events[i:] if x.type == "scope_switch"), None)
                    assert nxt is not None and (_day(nxt) - _day(b.events[head])).days < 2, (name, b.id)
                moved += head == i - 1 and _rule_session(b, b.events[head])
    assert moved >= 8, moved


def test_r1_sessions_are_spread_out_and_nothing_else_moves(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    """R1's medium and hard sessions are spread out (each gap :data:`~.polish.STRETCH` times
    as long, at most three weeks unless it was longer); no other episode's days change."""
    spread = 0
    for name, both in pairs.items():
        for a, b in both:
            days_a = [_day(e) for e in a.events if e.type == "scope_switch"]
            days_b = [_day(e) for e in b.events if e.type == "scope_switch" and not _rule_session(b, e)]
            expected = _spread(days_a) if _stretched(a) else days_a
            assert days_b == sorted(days_b) and set(days_b) <= set(expected), (name, a.id)
            spread += _stretched(a) and days_b[-1] > days_a[-1]
    assert spread >= 40, spread


def test_v9_is_v8_but_for_wording(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    chat = [wildcard(q) for q, _ in (*CHATTER, *EXTRA_CHATTER)] + [wildcard(t) for t in MENTION_OLD]
    reworded = added = merged = 0
    for name, both in pairs.items():
        for a, b in both:
            assert (a.id, a.risk, a.tier, a.family, a.tools, a.metadata) == (b.id, b.risk, b.tier, b.family, b.tools, b.metadata)
            assert b.version == "9.0"
            assert _skeleton(a) == _skeleton(b), (name, a.id)
            # sessions: only those with no conversation but chat or a mention of an old value go
            # (their notes join a neighbour); the others keep their order and user
            heads_a = [e for e in a.events if e.type == "scope_switch"]
            heads_b = [e for e in b.events if e.type == "scope_switch"]
            days = _spread([_day(e) for e in heads_a]) if _stretched(a) else [_day(e) for e in heads_a]
            keys = [(d, _who(e), e.scopes) for d, e in zip(days, heads_a, strict=True)]
            kept = [keys.index((_day(e), _who(e), e.scopes)) for e in heads_b if (_day(e), _who(e), e.scopes) in keys]
            added_heads = [e for e in heads_b if (_day(e), _who(e), e.scopes) not in keys]
            assert all(_rule_session(b, e) for e in added_heads), (name, a.id)
            assert kept == sorted(set(kept)), (name, a.id)
            for k in sorted(set(range(len(heads_a))) - set(kept)):
                i = a.events.index(heads_a[k])
                rest = a.events[i + 1 :]
                end = next((j for j, e in enumerate(rest) if e.type == "scope_switch"), len(rest))
                turns = [e for e in rest[:end] if e.type == "user_message"]
                assert all(any(c.fullmatch(e.text or "") for c in chat) for e in turns), (name, a.id, _header(heads_a[k]))
                assert all(e.type in TURN_EVENTS or e.type.startswith("memory_") for e in rest[:end]), (name, a.id)
                merged += 1
            # turns: the same but for reworded ones, lines added after lookups, chat pairs left out
            ev = b.events
            new = [e for k, e in enumerate(ev) if e.type in TURN_EVENTS]
            acks = [e for k, e in enumerate(ev) if e.type == "assistant_message" and ev[k - 1].type == "tool_return"
                    and e.text in v9.LOOKUP_REPLIES and not any(x.text == e.text and x.type == e.type for x in a.events)]  # fmt: skip
            added += len(acks)
            tb = [e for e in new if e not in acks]
            ta = [e for e in a.events if e.type in TURN_EVENTS]
            i = j = 0
            while i < len(ta):
                if j < len(tb) and (ta[i].text == tb[j].text or not any(c.fullmatch(ta[i].text or "") for c in chat)):
                    assert ta[i].type == tb[j].type, (name, a.id, ta[i].text, tb[j].text)
                    reworded += ta[i].text != tb[j].text
                    i, j = i + 1, j + 1
                else:  # a chat pair or a mention of an old value left out
                    assert ta[i].type == "user_message" and ta[i + 1].type == "assistant_message", (name, a.id, ta[i].text)
                    i += 2
            assert j == len(tb), (name, a.id)
    assert reworded >= 100 and added >= 8 and merged >= 4, (reworded, added, merged)


def test_the_packaged_v9_is_the_generators_build_at_the_shipped_seed() -> None:
    from lm_eval_memrisk.episodes.loader import default_dataset_path
    from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

    packaged = default_dataset_path("v9").read_text(encoding="utf-8")
    assert packaged == "".join(dumps_episode(e) + "\n" for e in generate(DEFAULT_SEED, version="v9"))


def test_v9_builds_are_deterministic() -> None:
    assert [dumps_episode(e) for e in generate(2, version="v9")] == [dumps_episode(e) for e in generate(2, version="v9")]


def _requests(ep: Episode) -> list[tuple[str, Event]]:
    ev = ep.events
    return [(ev[i - 1].text or "", e) for i, e in enumerate(ev) if e.type == "decision_point" and ev[i - 1].type == "user_message"]


def test_requests_called_work_are_work_errands_and_private_ones_private(datasets: dict[str, list[Episode]]) -> None:
    seen = {"work": 0, "private": 0}
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if e.family in v9.PURPOSES):
            work, private, _ = v9.PURPOSES[ep.family]
            for text, _ in _requests(ep):
                context, purpose = v9._context(text), v9._purpose(text, v9.PURPOSES[ep.family])
                if context is None or purpose is None:
                    continue
                seen[context] += 1
                assert purpose not in (private if context == "work" else work), (name, ep.id, text)
    assert min(seen.values()) >= 20, seen


def test_a_reworded_request_changes_its_checks_with_it(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    """Where a request's errand or day is said anew, the checks the scorer derives from
    the request follow it (and the oracle passes them: every file validates, below)."""
    from lm_eval_memrisk.episodes.action_checks import request_checks

    changed = 0
    for name, both in pairs.items():
        for a, b in both:
            for dp, dq in zip(a.decision_points, b.decision_points, strict=True):
                if dp.reference == dq.reference:
                    continue
                changed += 1
                assert request_checks(a, dp) != request_checks(b, dq), (name, b.id, dq.id)
    assert changed >= 60, changed


def test_no_one_texts_themselves_a_heads_up(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        for ep in episodes:
            for text, dp in _requests(ep):
                assert v9.NOT_TO_SELF not in text or (dp.reference or {}).get("tool") != "send_sms", (name, ep.id)


def test_travel_days_say_the_day_in_its_first_reading(pairs: dict[str, list[tuple[Episode, Episode]]]) -> None:
    days = 0
    for name, both in pairs.items():
        for a, b in both:
            for (text, dp), (_, dq) in zip(_requests(a), _requests(b), strict=True):
                assert not v9.AFTER_NEXT.search(_request_text(b, dq)), (name, b.id)
                phrase = (dp.reference or {}).get("arguments", {}).get("date")
                if not phrase or not v9.AFTER_NEXT.search(text):
                    continue
                today = session_day(b, dq)
                said = dq.reference["arguments"]["date"]
                weekday, day, month = said.split()
                first = min(accepted_days(phrase, today))
                assert (weekday, int(day), month) == (f"{first:%A}", first.day, f"{first:%B}"), (name, b.id, said)
                assert dt.timedelta(days=7) < first - today <= dt.timedelta(days=14)
                days += 1
    assert days >= 8, days


def _request_text(ep: Episode, dp: Event) -> str:
    i = ep.events.index(dp)
    return ep.events[i - 1].text or ""


def test_every_lookup_result_is_answered_before_the_user_speaks_again(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        for ep in episodes:
            ev = ep.events
            for i, e in enumerate(ev):
                if e.type != "tool_return":
                    continue
                nxt = next((x for x in ev[i + 1 :] if not x.type.startswith("memory_")), None)
                assert nxt is None or nxt.type != "user_message", (name, ep.id, e.id)


def test_no_session_is_only_a_header(datasets: dict[str, list[Episode]]) -> None:
    for name, episodes in datasets.items():
        for ep in episodes:
            ev = ep.events
            for i, e in enumerate(ev):
                nxt = next((x for x in ev[i + 1 :] if not x.type.startswith("memory_")), None)
                assert e.type != "scope_switch" or nxt is None or nxt.type != "scope_switch", (name, ep.id, e.text)
            numbers = [int(m[1]) for e in ev if e.type == "scope_switch" and (m := re.match(r"Session (\d+) —", e.text or ""))]
            assert numbers == list(range(1, len(numbers) + 1)), (name, ep.id, numbers)


def test_the_users_words_are_v9s(datasets: dict[str, list[Episode]]) -> None:
    """No note fell through, no old value is volunteered for the records or mentioned for no
    reason, no job is named twice before an update, no earlier request says the work note
    "is fine for this one", no request says which note to use besides whose matter it is,
    no colleague is "same as" another with a personal value, no deadline is switched, no
    deletion counts notes ("the one I added most recently"), no prescription is put on hold
    in a card's words."""
    said = [wildcard(t) for t in (*EARLY_CONTEXTS, *MENTION_OLD)]
    contexts = [wildcard(t) for olds, _ in v9.PLAIN_CONTEXTS for t in olds]
    plain = [wildcard(t) for _, news in v9.PLAIN_CONTEXTS for t in news]
    seen = dict.fromkeys(("withdrawn", "shared", "early", "contexts", "drops"), 0)
    for name, episodes in datasets.items():
        for ep in episodes:
            for e in ep.events:
                text = e.text or ""
                assert "fell through" not in text and v9.BACKDATED_FROM not in text, (name, ep.id, text)
                assert not re.search(r"Found an old letter|For an old form|I misspoke|restriction I gave you about that|switch I (mentioned|told)", text), (name, ep.id, text)
                assert not any(m.search(text) for m in said + contexts), (name, ep.id, text)
                assert not re.match(r"(About my .+ one|Work \(.+\)): ", text) and "added most recently" not in text, (name, ep.id, text)
                if ep.family in v9.SHARED_HOW and e.type == "user_message":
                    assert not re.match(r"Same as \S+'s — |\S+ and I share this one: ", text), (name, ep.id, text)
                    seen["shared"] += any(h in text for h in v9.SHARED_HOW.values())
                if ep.family in v9.DATE_FAMILIES:
                    assert not re.search(r"\bswitch", text), (name, ep.id, e.type, text)
                if ep.family == "medication":
                    assert "for anything until" not in text and "carry on using" not in text, (name, ep.id, text)
                seen["withdrawn"] += v9.WITHDRAWN[1] in text
                seen["early"] += any(wildcard(t).search(text) for t in v9.V9_EARLY_CONTEXTS)
                seen["contexts"] += any(p.search(text) for p in plain)
                seen["drops"] += any(new.split("{{")[0] in text for _, new in v9.PLAIN_DROPS)
    assert min(seen.values()) >= 4, seen


def test_a_prescription_may_be_refilled_by_drug_and_strength(datasets: dict[str, list[Episode]]) -> None:
    """Where no other note names its drug and strength, the schedule may go."""
    shorter = 0
    for name, episodes in datasets.items():
        for ep in (e for e in episodes if e.family == "medication"):
            values = {i.value for i in ep.memory_items.values()}
            for dp in ep.decision_points:
                for c in dp.checks:
                    m = v9.PRESCRIPTION.match(c.expected or "") if c.kind == "tool_arg_equals" else None
                    if m is None:
                        continue
                    unique = sum(v.startswith(m["strength"] + " ") for v in values) == 1
                    assert (m["strength"] in c.accept) == unique, (name, ep.id, c.expected)
                    shorter += unique
    assert shorter >= 8, shorter


def test_learned_surface_reader_passes_no_more_than_measured(datasets: dict[str, list[Episode]]) -> None:
    v8_checks.learned_at_most(datasets, LEARNED_MEASURED, LEARNED_RISK_MEASURED)


@pytest.mark.parametrize("check", v8_checks.V7_CHECKS)
def test_v7_check_holds_on_v9(check: str, datasets: dict[str, list[Episode]]) -> None:
    getattr(v7_checks, check)(datasets)


@pytest.mark.parametrize("check", [
    "test_every_cell_of_the_team_table_occurs_and_is_right", "test_a_note_dropped_in_words_beside_the_team_note_says_it_is_the_users_own",
])  # fmt: skip
def test_v8_check_holds_on_v9(check: str, datasets: dict[str, list[Episode]]) -> None:
    getattr(v8_checks, check)(datasets)


def test_every_request_after_the_team_note_says_whose_matter_it_is(datasets: dict[str, list[Episode]]) -> None:
    """v8's check in v9's words: the matter only ("It's for the team."), or "our" in a
    request for the team's note (which then needs no more)."""
    heads = [t.split("{{")[0].strip() for t in (*v9.V9_TEAM_MATTERS, *v9.V9_PERSONAL_MATTERS)]
    ours = 0
    for name, ep, request in v8_checks.requests_after_the_team_note(datasets):
        said = any(h in request for h in heads)
        ours += not said
        assert said or re.search(r"\bour\b", request), (name, ep.id, request)
    assert ours >= 4, ours
