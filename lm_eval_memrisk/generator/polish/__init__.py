"""Dataset v9: v8's episodes in the words blind readers asked for.

Readers of the packaged v8 (docs/reader_study/v8_full) and six rounds of readers of all
120 main episodes of v9's drafts (docs/reader_study/v9_full) agreed with the reference
actions but found wording odd.  v9 keeps every note, constraint, check value, decision
and tool call of v8 (tests/test_dataset_v9.py) and changes how they are said:

* requests (:mod:`.requests`: :func:`fit_purposes`, :func:`early_work_requests`,
  :func:`fit_self_texts`, :func:`fit_payouts`, :func:`explicit_days`,
  :func:`plain_contexts`): the errand fits what the user calls it (work or private),
  relative days with two readings are said as dates, a request says whose matter it is
  and no more;
* the user's words (:mod:`.words`: :func:`reworded`): retractions, corrections,
  backdated notes, a colleague's shared value, deletions by description, a
  prescription's hold, lead-ins;
* turns that change no state (:mod:`.turns`: :func:`without_mentions`,
  :func:`answered_lookups`, :func:`without_empty_sessions`, :func:`within_turns`,
  :func:`spread_sessions`, :func:`rules_in_their_own_session`): an assistant line after
  each lookup result, no session that is only a header, v2's mentions of an old value
  left out, R1's sessions spread out, an R5 rule against a value just given in a later
  session (the day a session header names, and a header moved to another day:
  :mod:`.days`).

A text a request changes is changed in the decision's reference and naive action too, so
the checks the scorer derives from the request (an item, a dictated message, a day)
follow it; a refill may name the drug and strength alone where that is unambiguous
(:func:`shorter_prescriptions`).  Choices are seeded per episode: the same seed gives the
same bytes.  Templates that carry a value are module tuples (``V9_…``), re-exported
here, so the audit's template table tags them
(:mod:`~lm_eval_memrisk.generator.templates`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from lm_eval_memrisk.episodes.records import TIER_TURNS, Episode
from lm_eval_memrisk.generator.polish.days import DATE_FAMILIES, header_day, with_day
from lm_eval_memrisk.generator.polish.requests import (
    AFTER_NEXT,
    FIRST_WEEKEND,
    NOT_A_PAYOUT,
    NOT_TO_SELF,
    PLAIN_CONTEXTS,
    PRIVATE_SAYS,
    PURPOSES,
    SAME_WEEKDAY,
    V9_CONTEXT_ASKS,
    V9_EARLY_CONTEXTS,
    V9_PERSONAL_MATTERS,
    V9_PRIVATE_ASKS,
    V9_TEAM_MATTERS,
    WORK_SAYS,
    Purposes,
    early_work_requests,
    explicit_days,
    fit_payouts,
    fit_purposes,
    fit_self_texts,
    plain_contexts,
)
from lm_eval_memrisk.generator.polish.requests import _context as _context  # (tests read them)
from lm_eval_memrisk.generator.polish.requests import _purpose as _purpose
from lm_eval_memrisk.generator.polish.turns import (
    LONGEST_GAP,
    LOOKUP_REPLIES,
    MENTION_REPLY,
    SHORTEST_GAP,
    STRETCH,
    _renumbered,
    answered_lookups,
    rules_in_their_own_session,
    spread_sessions,
    within_turns,
    without_empty_sessions,
    without_mentions,
)
from lm_eval_memrisk.generator.polish.words import (
    ANCHOR,
    BACKDATED_FROM,
    BACKDATED_SAID,
    CORRECTED,
    DATE_WORDS,
    JOB_LEAD,
    LEAD_IN,
    LIFTED,
    MEDICATION_HOLDS,
    NOTICE_INSTEAD,
    NOTICE_QUESTIONS,
    PENDING_WORDS,
    PERSONAL_TAIL,
    PHONE_ASKS,
    PLAIN_DROPS,
    PRESCRIPTION,
    SAFE_DISH,
    SHARED_FROM,
    SHARED_HOW,
    STARTED,
    UNDONE,
    V9_ANNOUNCED_DATES,
    V9_BACKDATED,
    V9_CORRECTIONS,
    V9_MEDICATION_HOLDS,
    V9_TEAM_STATES,
    WITHDRAWN,
    reworded,
    safe_dishes,
    shorter_prescriptions,
    unasked_notices,
)
from lm_eval_memrisk.generator.seeding import rng_for

__all__ = [
    "polish", "polished",
    # requests
    "AFTER_NEXT", "FIRST_WEEKEND", "NOT_A_PAYOUT", "NOT_TO_SELF", "PLAIN_CONTEXTS", "PRIVATE_SAYS", "PURPOSES",
    "SAME_WEEKDAY", "V9_CONTEXT_ASKS", "V9_EARLY_CONTEXTS", "V9_PERSONAL_MATTERS", "V9_PRIVATE_ASKS",
    "V9_TEAM_MATTERS", "WORK_SAYS", "Purposes", "early_work_requests", "explicit_days", "fit_payouts",
    "fit_purposes", "fit_self_texts", "plain_contexts",
    # the user's words
    "ANCHOR", "BACKDATED_FROM", "BACKDATED_SAID", "CORRECTED", "DATE_WORDS", "JOB_LEAD", "LEAD_IN", "LIFTED",
    "MEDICATION_HOLDS", "NOTICE_INSTEAD", "NOTICE_QUESTIONS", "PENDING_WORDS", "PERSONAL_TAIL", "PHONE_ASKS",
    "PLAIN_DROPS", "PRESCRIPTION", "SAFE_DISH", "SHARED_FROM", "SHARED_HOW", "STARTED", "UNDONE",
    "V9_ANNOUNCED_DATES", "V9_BACKDATED", "V9_CORRECTIONS", "V9_MEDICATION_HOLDS", "V9_TEAM_STATES", "WITHDRAWN",
    "reworded", "safe_dishes", "shorter_prescriptions", "unasked_notices",
    # turns
    "LONGEST_GAP", "LOOKUP_REPLIES", "MENTION_REPLY", "SHORTEST_GAP", "STRETCH", "answered_lookups",
    "rules_in_their_own_session", "spread_sessions", "within_turns", "without_empty_sessions", "without_mentions",
    # days
    "DATE_FAMILIES", "header_day", "with_day",
]  # fmt: skip


def polished(episodes: Iterable[Episode], version: str) -> list[Episode]:
    """``episodes`` (a v8 build) in v9's words, their ``version`` field set to ``version``."""
    return [dataclasses.replace(polish(ep), version=version) for ep in episodes]


def polish(episode: Episode) -> Episode:
    """One episode in v9's words (see the module docstring)."""
    rng = rng_for(int(episode.metadata.get("generator_seed", 0)), episode.id, "v9 wording")
    events = list(episode.events)
    spread_sessions(episode, events)
    events = rules_in_their_own_session(episode, events)
    early_work_requests(episode, events, rng)
    fit_purposes(episode, events, rng)
    fit_self_texts(episode, events, rng)
    fit_payouts(episode, events)
    explicit_days(episode, events)
    plain_contexts(episode, events)
    reworded(episode, events)
    unasked_notices(events)
    safe_dishes(events)
    shorter_prescriptions(episode, events)
    before = len(events)
    events = answered_lookups(without_empty_sessions(without_mentions(events)), rng)
    events = without_empty_sessions(within_turns(events, TIER_TURNS.get(episode.tier, (0, len(events)))[1]))
    if len(events) != before or any(e.id != f"e{k + 1}" for k, e in enumerate(events)):
        events = _renumbered(events)
    return dataclasses.replace(episode, events=tuple(events))
