"""Dataset v10's history: which of v9's turns go, and which move to a session of their own.

Blind readers of v9 (docs/reader_study/v9_full) read some histories as a puzzle's, not a
user's; :mod:`.v10` applies these moves before its rewording:

* :func:`thinned_chains`: a value restated and replaced again before anything used it
  is left out (readers: "four door codes in six weeks", "six work addresses");
* :func:`lifts_in_a_later_session`, :func:`holds_in_a_later_session`: a rule lifted in
  the sitting that set it, and a hold on a value just given, come a few days later;
* :func:`deletions_given_time`: a request right after a deletion comes weeks later.

Nothing is drawn at random: the same v9 build gives the same events.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Sequence

from lm_eval_memrisk.episodes.records import TIER_TURNS, Episode, Event
from lm_eval_memrisk.generator.distractors import EXTRA_GREETINGS
from lm_eval_memrisk.generator.distractors import GREETINGS as FIRST_GREETINGS
from lm_eval_memrisk.generator.polish import DATE_FAMILIES, header_day, with_day
from lm_eval_memrisk.generator.polish.requests import _date_argument

__all__ = ["deletions_given_time", "holds_in_a_later_session", "lifts_in_a_later_session", "thinned_chains"]

#: Words that make a restatement a correction of the value before it (kept: the value
#: it corrects is part of the story).
CORRECTION_WORDS = re.compile(r"\b(?:mistake|muddled|wrong|misspoke)\b", re.IGNORECASE)
#: Words that tie a message to a day: a session moved to another day must not say them.
DAY_WORDS = re.compile(
    r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|today|tonight|tomorrow|yesterday|weekend"
    r"|this week|next week|this month|next month|January|February|March|April|May|June|July|August"
    r"|September|October|November|December)\b"
)
#: A request after a deletion comes at least this many days after the deletion.
AFTER_DELETION = 14
#: The greetings a session may open with (a session left with one alone loses it).
GREETINGS = frozenset((*FIRST_GREETINGS, *EXTRA_GREETINGS))


def _turns(events: Sequence[Event]) -> int:
    return sum(e.type in ("user_message", "assistant_message") for e in events)


def _droppable(events: Sequence[Event], i: int) -> bool:
    """Whether the user's update at ``i`` is a restatement a later update replaces before
    any decision, whose value nothing else names or checks."""
    x = events[i]
    if x.type != "memory_update" or x.item is None or x.item.source != "user" or i == 0:
        return False
    said = events[i - 1]
    later = next((j for j in range(i + 1, len(events)) if events[j].type == "memory_update" and events[j].supersedes == x.item.id), None)
    if later is None or said.type != "user_message" or CORRECTION_WORDS.search(said.text or ""):
        return False
    value, key = x.item.value, x.item.key
    others = {e.item.value for e in events if e.item is not None and e.item.key == key and e.item.value != value}
    if any(v in (said.text or "") for v in others) or any(e.type == "decision_point" for e in events[i:later]):
        return False
    named = [k for k, e in enumerate(events)
             if k not in (i - 1, i) and (value in (e.text or "") or value in repr((e.reference, e.checks, e.result, e.constraint))
                                         or e.target == x.item.id)]  # fmt: skip
    return not named


def thinned_chains(episode: Episode, events: list[Event]) -> list[Event]:
    """Leave out each restatement a later update replaces before anything used it (the
    user's message, the note and the assistant's acknowledgement), the later update now
    replacing the note before it; not below the tier's fewest turns."""
    fewest = TIER_TURNS.get(episode.tier, (0, 0))[0]
    out = list(events)
    i = 0
    while i < len(out):
        if not _droppable(out, i):
            i += 1
            continue
        x = out[i]
        end = i + 2 if i + 1 < len(out) and out[i + 1].type == "assistant_message" else i + 1
        kept = out[: i - 1] + out[end:]
        if _turns(kept) < fewest:
            i += 1
            continue
        out = [dataclasses.replace(e, supersedes=x.supersedes) if e.supersedes == x.item.id else e for e in kept]  # type: ignore[union-attr]
        out = _without_lone_greeting(out, max(i - 2, 0), fewest)
        i -= 1
    return out


def _without_lone_greeting(events: list[Event], at: int, fewest: int) -> list[Event]:
    """``events`` without the greeting that is all the user says in the session holding
    index ``at`` (what was left of a session whose restatement went), not below the
    tier's ``fewest`` turns."""
    head = max((k for k in range(min(at, len(events) - 1) + 1) if events[k].type == "scope_switch"), default=None)
    if head is None:
        return events
    end = next((k for k in range(head + 1, len(events)) if events[k].type == "scope_switch"), len(events))
    turns = [k for k in range(head + 1, end) if events[k].type in ("user_message", "assistant_message", "decision_point", "tool_call")]
    if len(turns) != 1 or events[turns[0]].text not in GREETINGS or _turns(events) - 1 < fewest:
        return events
    return events[: turns[0]] + events[turns[0] + 1 :]


def _sessions(events: Sequence[Event]) -> list[int]:
    return [k for k, e in enumerate(events) if e.type == "scope_switch" and header_day(e.text or "") is not None]


def _says_a_day(events: Sequence[Event]) -> bool:
    """Whether any user turn or decision in ``events`` names a day (moving it would move the day)."""
    return any((e.type == "user_message" and DAY_WORDS.search(e.text or "")) or (e.type == "decision_point" and _date_argument(e))
               for e in events)  # fmt: skip


def _in_sessions_of_their_own(events: list[Event], moves: Callable[[Sequence[Event], int, int], bool], fewest_days: int) -> list[Event]:
    """``events`` with a session header (the same person signed in, halfway to the next
    session) inserted before each event at ``k`` that ``moves(events, k, head)`` picks,
    ``head`` the index of its session's header; not where the halfway day would be under
    ``fewest_days // 2`` days on or the rest of the session names a day."""
    out = list(events)
    k = 0
    while k < len(out):
        heads = [h for h in _sessions(out) if h < k]
        if not heads or not moves(out, k, heads[-1]):
            k += 1
            continue
        head = heads[-1]
        nxt = next((h for h in _sessions(out) if h > k), None)
        today = header_day(out[head].text or "")
        later = header_day(out[nxt].text or "") if nxt is not None else None
        gap = 6 if later is None or today is None else (later - today).days
        if today is None or gap < fewest_days or _says_a_day(out[k : nxt if nxt is not None else len(out)]):
            k += 1
            continue
        out.insert(k, dataclasses.replace(out[head], id="", time=-1, text=with_day(out[head].text or "", today + dt.timedelta(days=gap // 2))))
        k += 2
    return out


def _lifted_where_set(events: Sequence[Event], k: int, head: int) -> bool:
    """Whether ``events[k]`` lifts a rule declared in its own session (from ``head`` on)."""
    e = events[k]
    if e.type != "constraint_lift":
        return False
    declared = next((j for j, x in enumerate(events) if x.type == "constraint_declare" and x.constraint is not None
                     and x.constraint.id == e.target), None)  # fmt: skip
    return declared is not None and declared >= head


def _held_when_given(events: Sequence[Event], k: int, head: int) -> bool:
    """Whether ``events[k]`` holds a value the user gave earlier in its session."""
    e = events[k]
    value = e.constraint.forbid_value if e.type == "constraint_declare" and e.constraint is not None else None
    return value is not None and value != "" and any(x.type == "user_message" and value in (x.text or "") for x in events[head + 1 : k])


def lifts_in_a_later_session(episode: Episode, events: list[Event]) -> list[Event]:
    """A rule lifted in the session that set it is lifted in a session of its own, halfway
    to the next one (at least two days on), the same person signed in."""
    return _in_sessions_of_their_own(events, _lifted_where_set, 4)


def deletions_given_time(episode: Episode, events: list[Event]) -> None:
    """The first request after a deletion in an earlier session comes :data:`AFTER_DELETION`
    days or more after it: that session and every later one move on (not where a value is
    a date or a moved session names a day)."""
    if episode.family in DATE_FAMILIES:
        return
    heads = _sessions(events)
    for k, e in enumerate(events):
        if e.type != "memory_revoke":
            continue
        decision = next((j for j in range(k + 1, len(events)) if events[j].type == "decision_point"), None)
        before = [h for h in heads if h < k]
        if decision is None or not before:
            continue
        at = max(h for h in heads if h < decision)
        if at == before[-1]:
            continue
        gap = ((header_day(events[at].text or "") or dt.date.min) - (header_day(events[before[-1]].text or "") or dt.date.min)).days
        if gap >= AFTER_DELETION or _says_a_day(events[at:]):
            continue
        for h in (h for h in heads if h >= at):
            day = header_day(events[h].text or "")
            if day is not None:
                events[h] = dataclasses.replace(events[h], text=with_day(events[h].text or "", day + dt.timedelta(days=AFTER_DELETION - gap)))


def holds_in_a_later_session(episode: Episode, events: list[Event]) -> list[Event]:
    """A hold on a value the user gave earlier in the same session comes in a session of
    its own, halfway to the next one (at least two days on; v9 did this for R5's rules):
    readers found "saves an account and in the very next message tells me not to use it"
    a puzzle.  Not where a value is a date or the rest of the session names a day."""
    if episode.family in DATE_FAMILIES:
        return events
    return _in_sessions_of_their_own(events, _held_when_given, 2)
