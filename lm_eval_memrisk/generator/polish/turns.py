"""v9's turns that change no state: an assistant line after each lookup result, no
session that is only a header, v2's mentions of an old value left out, R1's sessions
spread out, an R5 rule against a value just given in a later session; the events
numbered again."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import re

from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.generator.distractors import CHATTER, EXTRA_CHATTER
from lm_eval_memrisk.generator.polish.days import DATE_FAMILIES, header_day, with_day
from lm_eval_memrisk.generator.risks.v2 import MENTION_OLD
from lm_eval_memrisk.generator.templates import wildcard

#: What the assistant answers to v2's mention of an old value (:func:`without_mentions`).
MENTION_REPLY = ("Ha — old paperwork turns up everywhere.",)
#: R1's sessions of a medium or hard episode, spread out: each gap between two sessions is
#: this many times as long (at least a week, at most :data:`LONGEST_GAP` days, never
#: shorter than it was):
#: readers found four door codes in ten days a puzzle.
STRETCH, SHORTEST_GAP, LONGEST_GAP = 3, 7, 21
#: What the assistant says when a lookup has answered, before the user speaks again.
LOOKUP_REPLIES: tuple[str, ...] = ("That's the entry I found.", "Here's what the records have.")


def without_mentions(events: list[Event]) -> list[Event]:
    """No old value dropped into the conversation for no reason: v2's mentions ("I found a
    sticky note with … on it") and the assistant's reply are left out (readers of every
    wording found them planted)."""
    forms = [wildcard(t) for t in MENTION_OLD]
    out: list[Event] = []
    skip = False
    for k, e in enumerate(events):
        if skip:
            skip = False
            continue
        if e.type == "user_message" and any(f.fullmatch(e.text or "") for f in forms):
            skip = k + 1 < len(events) and events[k + 1].text == MENTION_REPLY[0]
            continue
        out.append(e)
    return out


def rules_in_their_own_session(episode: Episode, events: list[Event]) -> list[Event]:
    """An R5 rule against a value the user gave earlier in the same session is given in a
    session of its own, a day or more later (readers found "save my usual … I've just been
    diagnosed with an allergy to it" in the next message a trap).  Where the next session
    is less than two days on, the rule stays where it is."""
    if episode.risk != "R5" or episode.family in DATE_FAMILIES:
        return events
    out = list(events)
    k = 0
    while k < len(out):
        e = out[k]
        head = next((j for j in range(k - 1, -1, -1) if out[j].type == "scope_switch"), None)
        if e.type != "constraint_declare" or e.constraint is None or head is None or not e.constraint.forbid_value:
            k += 1
            continue
        said = any(x.type == "user_message" and e.constraint.forbid_value in (x.text or "") for x in out[head + 1 : k])
        nxt = next((j for j in range(k + 1, len(out)) if out[j].type == "scope_switch"), None)
        today = header_day(out[head].text or "")
        if not said or today is None:
            k += 1
            continue
        later = header_day(out[nxt].text or "") if nxt is not None else None
        if later is not None and (later - today).days < 2:
            k += 1
            continue
        day = today + dt.timedelta(days=1 if later is None else (later - today).days // 2)
        header = dataclasses.replace(out[head], id="", time=-1, text=with_day(out[head].text or "", day))
        out.insert(k, header)
        k += 2
    return out


def spread_sessions(episode: Episode, events: list[Event]) -> None:
    """R1's medium and hard sessions spread out (:data:`STRETCH`); not where a note's value
    is itself a date (a deadline must stay ahead of the sessions)."""
    if episode.risk != "R1" or episode.tier == "easy" or episode.family in DATE_FAMILIES:
        return
    days = [(i, d) for i, e in enumerate(events) if e.type == "scope_switch" and (d := header_day(e.text or "")) is not None]
    if not days:
        return
    dates = [d for _, d in days]
    new = [dates[0]]
    for before, after in zip(dates, dates[1:]):
        gap = (after - before).days
        new.append(new[-1] + dt.timedelta(days=max(gap, min(max(STRETCH * gap, SHORTEST_GAP), LONGEST_GAP))))
    for (i, _), day in zip(days, new, strict=True):
        events[i] = dataclasses.replace(events[i], text=with_day(events[i].text or "", day))


def answered_lookups(events: list[Event], rng: random.Random) -> list[Event]:
    """An assistant line after each lookup result that the user's next message or the
    session's end would otherwise follow (ids left blank: :func:`_renumbered` gives them)."""
    out: list[Event] = []
    for i, e in enumerate(events):
        out.append(e)
        nxt = next((x for x in events[i + 1 :] if not x.type.startswith("memory_")), None)
        if e.type == "tool_return" and nxt is not None and nxt.type in ("user_message", "scope_switch"):
            # (time -2: at a session's end, the first to go where the tier has no room)
            out.append(Event(id="", type="assistant_message", time=-1 if nxt.type == "user_message" else -2,
                             text=rng.choice(LOOKUP_REPLIES)))  # fmt: skip
    return out


_SESSION_NO = re.compile(r"^Session \d+ —")


def without_empty_sessions(events: list[Event]) -> list[Event]:
    """No session header followed by the next one: a session in which only silent notes
    were written joins the one before (the first session: the one after), and the
    headers are numbered again."""
    out = list(events)
    k = 0
    while k < len(out):
        e = out[k]
        nxt = next((j for j in range(k + 1, len(out)) if not out[j].type.startswith("memory_")), None)
        if e.type == "scope_switch" and nxt is not None and out[nxt].type == "scope_switch":
            silent = out[k + 1 : nxt]
            out[k : nxt + 1] = [out[nxt], *silent] if k == 0 else [*silent, out[nxt]]
            continue
        k += 1
    n = 0
    for k, e in enumerate(out):
        if e.type == "scope_switch" and _SESSION_NO.match(e.text or ""):
            n += 1
            out[k] = dataclasses.replace(e, text=_SESSION_NO.sub(f"Session {n} —", e.text or "", count=1))
    return out


def within_turns(events: list[Event], most: int) -> list[Event]:
    """``events`` with chat pairs (a question and answer from the filler pool, last first),
    then the lines added at a session's end after a lookup, left out while the turns
    exceed the tier's ``most`` (what :func:`answered_lookups` adds must not make an
    episode longer than its tier allows)."""
    chat = [wildcard(q) for q, _ in (*CHATTER, *EXTRA_CHATTER)]
    out = list(events)
    turns = sum(e.type in ("user_message", "assistant_message") for e in out)
    k = len(out) - 2
    while turns > most and k >= 0:
        if (out[k].type == "user_message" and any(c.fullmatch(out[k].text or "") for c in chat)
                and out[k + 1].type == "assistant_message"):  # fmt: skip
            del out[k : k + 2]
            turns -= 2
        k -= 1
    while turns > most and any(e.time == -2 for e in out):
        del out[max(k for k, e in enumerate(out) if e.time == -2)]
        turns -= 1
    return out


def _renumbered(events: list[Event]) -> list[Event]:
    """``events`` in order as ``e1``, ``e2``, … at times 0, 1, …, each after the one before
    (a note's ``valid_from`` and ``valid_to`` follow its events' times)."""
    ids = [f"e{k + 1}" for k in range(len(events))]
    times = {e.time: k for k, e in enumerate(events) if e.time >= 0}

    def moved(e: Event) -> Event:
        item = e.item
        if item is not None:
            item = dataclasses.replace(item, valid_from=times.get(item.valid_from, item.valid_from),
                                       valid_to=None if item.valid_to is None else times.get(item.valid_to, item.valid_to))  # fmt: skip
        return e if item is e.item else dataclasses.replace(e, item=item)

    return [dataclasses.replace(moved(e), id=ids[k], time=k, after=(ids[k - 1],) if k else ()) for k, e in enumerate(events)]
