"""Event-level edits of an episode: insert events, replace a message, fit the tier.

Edits keep the DAG rules of :mod:`lm_eval_memrisk.episodes.validate`: events are stored in
replay order, inserted events get consecutive logical times right before their
anchor, and the anchor and everything after it move later by the number of inserted
events (items' ``valid_from``/``valid_to`` move with them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from lm_eval_memrisk.episodes.records import TIER_TURNS, TIERS, Episode, Event, MemoryItem
from lm_eval_memrisk.episodes.state import ordered_events

Draft = dict[str, Any]
"""An event to insert, as ``Event`` keyword arguments without ``id``, ``time``, ``after``."""


def fresh_id(taken: Iterable[str], prefix: str) -> str:
    """``prefix`` + the smallest number above every ``prefix``-number id in ``taken``."""
    taken = set(taken)
    pat = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    n = max((int(m.group(1)) for t in taken if (m := pat.match(t))), default=0) + 1
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def fresh_item_id(episode: Episode, extra: Iterable[str] = ()) -> str:
    return fresh_id([*episode.memory_items, *extra], "m")


def fresh_constraint_id(episode: Episode) -> str:
    return fresh_id(episode.constraints, "k")


def last_user_message(episode: Episode, decision_id: str) -> Event | None:
    """The last ``user_message`` before ``decision_id`` in replay order (the request)."""
    found = None
    for ev in ordered_events(episode):
        if ev.id == decision_id:
            return found
        if ev.type == "user_message":
            found = ev
    return found


def _shift_item(item: MemoryItem | None, at: int, by: int) -> MemoryItem | None:
    if item is None:
        return None
    return replace(
        item,
        valid_from=item.valid_from + by if item.valid_from >= at else item.valid_from,
        valid_to=item.valid_to + by
        if item.valid_to is not None and item.valid_to >= at
        else item.valid_to,
    )


def _shift_valid_to(item: MemoryItem, at: int, by: int) -> MemoryItem:
    if item.valid_to is not None and item.valid_to >= at:
        return replace(item, valid_to=item.valid_to + by)
    return item


def insert_before(episode: Episode, anchor_id: str, drafts: Sequence[Draft]) -> Episode:
    """``episode`` with ``drafts`` inserted right before event ``anchor_id`` (replay order)."""
    if not drafts:
        return episode
    events = ordered_events(episode)
    pos = next(i for i, e in enumerate(events) if e.id == anchor_id)
    at, by = events[pos].time, len(drafts)
    taken = {e.id for e in events}
    new: list[Event] = []
    prev = events[pos - 1].id if pos > 0 else None
    for k, draft in enumerate(drafts):
        eid = fresh_id(taken, "fz")
        taken.add(eid)
        item = draft.get("item")
        if isinstance(item, MemoryItem):
            draft = dict(draft, item=replace(item, valid_from=at + k))
        new.append(Event(id=eid, time=at + k, after=(prev,) if prev else (), **draft))
        prev = eid
    head = [replace(e, item=_shift_valid_to(e.item, at, by)) if e.item else e for e in events[:pos]]
    tail = [replace(e, time=e.time + by, item=_shift_item(e.item, at, by)) for e in events[pos:]]
    return replace(episode, events=tuple(head + new + tail))


def replace_text(episode: Episode, event_id: str, text: str) -> Episode:
    """``episode`` with the text of event ``event_id`` replaced."""
    return replace(
        episode,
        events=tuple(replace(e, text=text) if e.id == event_id else e for e in episode.events),
    )


def tier_for(turns: int) -> str | None:
    for tier in TIERS:
        lo, hi = TIER_TURNS[tier]
        if lo <= turns <= hi:
            return tier
    return None


def fit_tier(episode: Episode, anchor_id: str, filler: Sequence[tuple[str, str]]) -> Episode:
    """Keep the tier when the turn count fits it, else move to the tier that fits.

    A count between two tiers (e.g. 9) or below the easiest gets filler turn pairs
    (inserted before ``anchor_id``) until it fits; a count above the hardest tier is
    left as it is for the validator to reject.
    """
    fillers = iter(filler)
    while True:
        n = episode.turn_count
        lo, hi = TIER_TURNS.get(episode.tier, (0, -1))
        if lo <= n <= hi:
            return episode
        tier = tier_for(n)
        if tier is not None:
            return replace(episode, tier=tier)
        pair = next(fillers, None)
        if pair is None or n > TIER_TURNS[TIERS[-1]][1]:
            return episode
        episode = insert_before(
            episode,
            anchor_id,
            [
                {"type": "user_message", "text": pair[0]},
                {"type": "assistant_message", "text": pair[1]},
            ],
        )
