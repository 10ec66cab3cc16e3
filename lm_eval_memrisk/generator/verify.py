"""Generation-time sanity checks on one compiled episode.

A failed check rejects the attempt (the builder retries with the next attempt
seed); none of this depends on the scorer, only on the canonical normaliser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.normalize import contains_value, normalize
from lm_eval_memrisk.episodes.records import TIER_TURNS, Episode
from lm_eval_memrisk.episodes.trace import Action
from lm_eval_memrisk.generator.plan import DecisionSpec

#: v2: fewest user/assistant messages between the decisive write (the last write of a
#: note the reference action uses) and the final decision, per tier.
MIN_GAP: dict[str, int] = {"easy": 2, "medium": 4, "hard": 6}


class Rejected(Exception):
    """The attempt produced an episode that breaks a generator invariant."""


def action_content(action: Mapping[str, Any]) -> str:
    """What the scorer reads from an action dict (answer text or argument values)."""
    if "tool" in action:
        return Action(
            kind="tool_call", text="", tool=action["tool"], arguments=action["arguments"]
        ).content
    return str(action.get("answer", ""))


def _clash(a: str, b: str) -> bool:
    na, nb = normalize(a), normalize(b)
    return na in nb or nb in na


def write_use_gap(episode: Episode, index: int, used: set[str]) -> int | None:
    """Messages between the last write of an item in ``used`` and event ``index``."""
    writes = [j for j, e in enumerate(episode.events[:index]) if e.item and e.item.id in used]
    if not writes:
        return None
    between = episode.events[writes[-1] : index]
    return sum(1 for e in between if e.type in ("user_message", "assistant_message"))


def verify(
    episode: Episode,
    decisions: Sequence[DecisionSpec],
    same_values_ok: bool = False,
    min_gap: int = 0,
    joined_arguments: bool = False,
) -> None:
    """Raise :class:`Rejected` unless values are distinct (or, with ``same_values_ok``,
    equal: a value stored again) and references use only the items they are meant to use.

    ``joined_arguments`` reads a reference's arguments as scorer 3.1 did, "|" and all
    joined into one text (datasets v1-v6 were built that way: 3.1 missed a phone number
    after an argument ending in digits and so rejected one attempt at v6's R6-medium-05;
    with it they rebuild byte for byte)."""
    items = list(episode.memory_items.values())
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            same = same_values_ok and normalize(a.value) == normalize(b.value)
            if not same and _clash(a.value, b.value):
                raise Rejected(f"{episode.id}: values {a.value!r} and {b.value!r} overlap")
    lo, hi = TIER_TURNS[episode.tier]
    if not lo <= episode.turn_count <= hi:
        raise Rejected(f"{episode.id}: {episode.turn_count} turns")
    dps = episode.decision_points
    if len(dps) != len(decisions):
        raise Rejected(f"{episode.id}: decision points out of step")
    for dp, spec in zip(dps, decisions):
        seen = [e.item for e in episode.events[: episode.events.index(dp)] if e.item is not None]
        content = action_content(dp.reference or {})
        if joined_arguments:
            content = content.replace("|", " ")
        used = {it.id for it in seen if contains_value(content, it.value)}
        if used != {ref.id for ref in spec.uses}:
            raise Rejected(f"{episode.id}/{dp.id}: reference mentions items {sorted(used)}")
        gap = write_use_gap(episode, episode.events.index(dp), used)
        if gap is not None and gap < min_gap and dp is dps[-1]:
            raise Rejected(f"{episode.id}/{dp.id}: decisive write only {gap} messages back")
