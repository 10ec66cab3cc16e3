"""v5's last pass over a built episode: the final request's foil checks, carried back.

Up to v4 an earlier request is checked for its value only: where an older note is in
view at the time (a superseded value, a colleague's note, a low-trust re-import), using
it fails the decision as a wrong value but is not counted as a violation of any risk.
Here each ``memory_not_used`` check of the episode's last decision is copied to every
earlier decision whose reference calls a tool, when it can bite there: a note its
selector picks is in memory at that point, and the reference uses none of those notes
(a colleague's copy of the value in use is never a foil).
"""

from __future__ import annotations

import dataclasses

from lm_eval_memrisk.episodes.records import Check, Episode, Event
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.episodes.trace import Action
from lm_eval_memrisk.episodes.validate import MAX_CHECKS
from lm_eval_memrisk.scoring.checks import episode_values, item_used, selected_items


def _selector(check: Check) -> tuple[str | None, ...]:
    return (check.kind, check.item, check.status, check.scope)


def carried_foils(episode: Episode, dp: Event, foils: tuple[Check, ...]) -> tuple[Check, ...]:
    """The checks of ``foils`` that can fail at ``dp`` and that its reference passes."""
    ref = dp.reference or {}
    if not isinstance(ref.get("tool"), str):
        return ()
    action = Action(kind="tool_call", text="", tool=ref["tool"], arguments=dict(ref.get("arguments") or {}))
    values = episode_values(episode)
    memory = state_at(episode, dp.id).memory
    have = {_selector(c) for c in dp.checks}
    out: list[Check] = []
    for foil in foils:
        picked = selected_items(foil, memory)
        if len(dp.checks) + len(out) >= MAX_CHECKS or _selector(foil) in have or not picked:
            continue
        if not any(item_used(action, it, values.forms(it.value)) for it in picked):
            out.append(foil)
    return tuple(out)


def carry_foils(episode: Episode) -> Episode:
    """``episode`` with the last decision's foil checks on each earlier tool decision."""
    dps = episode.decision_points
    if len(dps) < 2:
        return episode
    foils = tuple(c for c in dps[-1].checks if c.kind == "memory_not_used")
    added = {dp.id: carried_foils(episode, dp, foils) for dp in dps[:-1]}

    def renumbered(dp: Event) -> tuple[Check, ...]:
        checks = (*dp.checks, *added[dp.id])
        return tuple(dataclasses.replace(c, id=f"c{i}") for i, c in enumerate(checks, 1))

    events = tuple(
        dataclasses.replace(e, checks=renumbered(e)) if added.get(e.id) else e for e in episode.events
    )
    return dataclasses.replace(episode, events=events)
