"""Reference agents (no model): they validate the benchmark itself.

* ``oracle`` replays each decision point's ground-truth ``reference`` action.
* ``stale`` fills the ``naive`` action's ``{{mem:KEY}}`` placeholders with the
  oldest-written item of that key (any scope, any status).
* ``leaky`` fills them with the newest item of that key that is neither superseded
  nor revoked, from any scope.
* ``constraint-blind`` fills them with the newest active in-scope item and ignores
  constraints (the naive action is what a rule-ignoring agent does).
* ``amnesiac`` ignores memory and asks; ``refuser`` always refuses; ``do-nothing``
  acknowledges and does nothing (the floor: it never acts, so it never violates).
* ``visible-oracle`` is the oracle limited to the notes it is shown (it validates a
  memory policy; see :mod:`lm_eval_memrisk.running.visible_oracle`).
* ``ablated-R1`` ... ``ablated-R5`` are the oracle with one risk's mechanism removed
  (:data:`ABLATIONS`, :func:`ablated_action`): they isolate each risk
  (``memrisk audit --ablations``).

When a decision point has no ``naive`` action, or a placeholder has no matching
item, the adversaries fall back to the reference action.

Any scripted agent (these, ``weak:PROFILE``, ``replay:FILE``) is built by name with
:func:`lm_eval_memrisk.running.agent_registry.get_agent`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.risks import ablations
from lm_eval_memrisk.episodes.state import action_text, events_before, in_scope, state_at
from lm_eval_memrisk.episodes.trace import ItemState, StateSnapshot
from lm_eval_memrisk.scoring.checks import violates
from lm_eval_memrisk.scoring.parse import parse_action

AMNESIAC_REPLY = "I don't have that information — could you tell me?"
REFUSER_REPLY = "I'm sorry, but I can't help with that."
DO_NOTHING_REPLY = "Okay, noted."
PLACEHOLDER = re.compile(r"\{\{mem:([^{}]+)\}\}")

Chooser = Callable[[Sequence[ItemState], StateSnapshot], ItemState | None]


def _oldest(items: Sequence[ItemState], state: StateSnapshot) -> ItemState | None:
    return min(items, key=lambda i: (i.written_at, i.id), default=None)


def _newest_unrevoked_any_scope(items: Sequence[ItemState], state: StateSnapshot) -> ItemState | None:
    live = [i for i in items if i.status == "active"]
    return max(live, key=lambda i: (i.written_at, i.id), default=None)


def _newest_active_in_scope(items: Sequence[ItemState], state: StateSnapshot) -> ItemState | None:
    live = [i for i in items if i.status == "active" and in_scope(i.scope, state.active_scopes)]
    return max(live, key=lambda i: (i.written_at, i.id), default=None)


CHOOSERS: dict[str, Chooser] = {
    "stale": _oldest,
    "leaky": _newest_unrevoked_any_scope,
    "constraint-blind": _newest_active_in_scope,
}


#: A reference action dict -> the reply text an agent would send.
action_to_reply = action_text


class _Unfillable(Exception):
    pass


def fill(template: Any, state: StateSnapshot, choose: Chooser) -> Any:
    """Replace ``{{mem:KEY}}`` placeholders using ``choose``; raises _Unfillable."""
    if isinstance(template, str):
        def sub(m: re.Match[str]) -> str:
            key = m.group(1).strip()
            item = choose([i for i in state.memory if i.key == key], state)
            if item is None:
                raise _Unfillable(key)
            return item.value

        return PLACEHOLDER.sub(sub, template)
    if isinstance(template, Mapping):
        return {k: fill(v, state, choose) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return [fill(v, state, choose) for v in template]
    return template


# -- ablated oracles ----------------------------------------------------------------

#: Risk -> the one mechanism its ablated oracle (``ablated-RISK``) ignores: the registry's
#: ``ablation`` (:mod:`lm_eval_memrisk.episodes.risks`); :data:`ABLATORS` implements each.
ABLATIONS: dict[str, str] = ablations()

Ablator = Callable[[Episode, Event, StateSnapshot, list[ItemState], ItemState | None], ItemState | None]


def _recency(item: ItemState) -> tuple[int, str]:
    return item.written_at, item.id


def _live(item: ItemState, state: StateSnapshot) -> bool:
    return item.status == "active" and in_scope(item.scope, state.active_scopes)


def _used_item(items: Sequence[ItemState], reference: Mapping[str, Any], state: StateSnapshot) -> ItemState | None:
    """The note of a key that the reference action uses (a live one first, then the newest)."""
    content = _content(reference)
    used = [i for i in items if contains_value(content, i.value)]
    return max(used, key=lambda i: (_live(i, state), _recency(i)), default=None)


def _content(action: Mapping[str, Any]) -> str:
    return parse_action(action_text(action)).content


def _newer(candidates: Sequence[ItemState], used: ItemState | None) -> ItemState | None:
    """The newest of ``candidates`` when the oracle uses no note or an older one: notes
    that a removed mechanism lets back in compete with the oracle's note by recency."""
    best = max(candidates, key=_recency, default=None)
    if best is None or (used is not None and _recency(best) <= _recency(used)):
        return None
    return best


def _ignore_updates(
    episode: Episode, dp: Event, state: StateSnapshot, items: list[ItemState], used: ItemState | None
) -> ItemState | None:
    """R1: an update never happened, so the note it superseded (the first of its chain)
    still holds; a deleted original stays deleted (R4 is not ablated here).  Where the
    oracle uses no note (it asks, e.g. to confirm a change only a record claims), the
    newest live update is undone the same way and its original used."""
    supersedes = {
        e.item.id: e.supersedes for e in events_before(episode, dp.id)
        if e.type == "memory_update" and e.item is not None and e.supersedes
    }  # fmt: skip
    if used is None:
        used = max((i for i in items if i.id in supersedes and _live(i, state)), key=_recency, default=None)
        if used is None:
            return None
    root = used.id
    while root in supersedes:
        root = supersedes[root]
    by_id = {i.id: i for i in state.memory}
    original = by_id.get(root)
    if original is None or original.id == used.id or original.status == "revoked":
        return None
    return original


def _recency_alone(
    episode: Episode, dp: Event, state: StateSnapshot, items: list[ItemState], used: ItemState | None
) -> ItemState | None:
    """R2: of the live notes of the key (active, in scope) the newest wins, whatever its
    trust, source or a correction says."""
    if used is None:
        return None
    return max((i for i in items if _live(i, state)), key=_recency, default=None)


def _ignore_scope(
    episode: Episode, dp: Event, state: StateSnapshot, items: list[ItemState], used: ItemState | None
) -> ItemState | None:
    """R3: active notes of other users and workspaces count as the user's own."""
    return _newer([i for i in items if i.status == "active" and not _live(i, state)], used)


def _ignore_deletions(
    episode: Episode, dp: Event, state: StateSnapshot, items: list[ItemState], used: ItemState | None
) -> ItemState | None:
    """R4: a revoked note is back in force, unless an update had superseded it first."""
    superseded = {
        e.supersedes for e in events_before(episode, dp.id) if e.type == "memory_update" and e.supersedes
    }
    back = [
        i for i in items
        if i.status == "revoked" and i.id not in superseded and in_scope(i.scope, state.active_scopes)
    ]  # fmt: skip
    return _newer(back, used)


def _in_force(episode: Episode, state: StateSnapshot) -> list[Any]:
    return [episode.constraints[c.id] for c in state.constraints if c.status == "active"]


def _breaks_a_rule(episode: Episode, state: StateSnapshot, action: Mapping[str, Any]) -> bool:
    parsed = parse_action(action_text(action))
    return any(violates(c, parsed) for c in _in_force(episode, state))


def _ignore_constraints(
    episode: Episode, dp: Event, state: StateSnapshot, items: list[ItemState], used: ItemState | None
) -> ItemState | None:
    """R5: the live notes a standing rule rules out (the naive action filled with them
    breaks a rule in force) are allowed again."""
    ruled_out = [
        i for i in items
        if _live(i, state) and _breaks_a_rule(episode, state, _fill_with(dp.naive or {}, state, i, used))
    ]  # fmt: skip
    return _newer(ruled_out, used)


ABLATORS: dict[str, Ablator] = {
    "R1": _ignore_updates,
    "R2": _recency_alone,
    "R3": _ignore_scope,
    "R4": _ignore_deletions,
    "R5": _ignore_constraints,
}
if set(ABLATORS) != set(ABLATIONS):  # pragma: no cover (a registry edit without its ablator)
    raise MemriskError(f"ablated oracles {sorted(ABLATORS)} != the registry's ablations {sorted(ABLATIONS)}")


def _fill_with(naive: Mapping[str, Any], state: StateSnapshot, item: ItemState, used: ItemState | None) -> Any:
    """The naive action with ``item`` in its key's slots (other keys: the live newest)."""

    def choose(items: Sequence[ItemState], st: StateSnapshot) -> ItemState | None:
        if items and items[0].key == item.key:
            return item
        return _newest_active_in_scope(items, st)

    try:
        return fill(dict(naive), state, choose)
    except _Unfillable:
        return dict(naive)


def _replace(template: Any, old: str, new: str) -> Any:
    if isinstance(template, str):
        return template.replace(old, new)
    if isinstance(template, Mapping):
        return {k: _replace(v, old, new) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return [_replace(v, old, new) for v in template]
    return template


def ablated_action(episode: Episode, decision_id: str, risk: str) -> dict[str, Any]:
    """The action of the oracle that ignores ``risk``'s mechanism (:data:`ABLATIONS`).

    Built from the ground truth the oracle uses, the state at the decision: for each
    memory slot of the ``naive`` template, the note the reference action uses is
    swapped for the one the ablated mechanism picks, in the reference action (other
    arguments unchanged).  Where the oracle uses no note of the key (it asks or
    declines), the ablated agent acts on the naive template with that note, unless
    that breaks a standing rule (only R5 ignores rules).  R5's agent always acts on
    the naive template (what a rule-ignoring agent does).  Without a naive template,
    or where the mechanism changes nothing, it is the reference action.
    """
    if risk not in ABLATORS:
        raise MemriskError(f"no ablation for {risk!r}; choose from {', '.join(ABLATORS)}")
    dp = episode.event(decision_id)
    reference: dict[str, Any] = dict(dp.reference or {"answer": ""})
    if not dp.naive:
        return reference
    state = state_at(episode, decision_id)
    action: dict[str, Any] = reference
    for key in dict.fromkeys(k.strip() for k in PLACEHOLDER.findall(action_text(dp.naive))):
        items = [i for i in state.memory if i.key == key]
        used = _used_item(items, reference, state)
        pick = ABLATORS[risk](episode, dp, state, items, used)
        if pick is None or (used is not None and pick.id == used.id):
            continue
        if risk == "R5":
            return dict(_fill_with(dp.naive, state, pick, used))
        if used is not None:
            action = _replace(action, used.value, pick.value)
            continue
        acted = _fill_with(dp.naive, state, pick, used)
        if not _breaks_a_rule(episode, state, acted):
            action = dict(acted)
    return action


class ReferenceAgent:
    """A scripted agent that reads the episode's ground truth."""

    wants_episode = True

    def __init__(self, name: str):
        if name not in AGENT_NAMES:
            raise MemriskError(f"unknown agent {name!r}; choose from {', '.join(AGENT_NAMES)}")
        self.name = name

    def __call__(
        self, messages: Sequence[Mapping[str, str]], *, episode: Episode | None = None,
        decision_id: str | None = None,
    ) -> str:
        if self.name == "amnesiac":
            return AMNESIAC_REPLY
        if self.name == "refuser":
            return REFUSER_REPLY
        if self.name == "do-nothing":
            return DO_NOTHING_REPLY
        if episode is None or decision_id is None:
            raise MemriskError(f"reference agent {self.name!r} needs the episode and decision id")
        if self.name.startswith("ablated-"):
            return action_to_reply(ablated_action(episode, decision_id, self.name.removeprefix("ablated-")))
        dp = episode.event(decision_id)
        reference = dict(dp.reference or {"answer": ""})
        if self.name == "oracle" or not dp.naive:
            return action_to_reply(reference)
        state = state_at(episode, decision_id)
        try:
            return action_to_reply(fill(dict(dp.naive), state, CHOOSERS[self.name]))
        except _Unfillable:
            return action_to_reply(reference)


AGENT_NAMES: tuple[str, ...] = (
    "oracle", "stale", "leaky", "amnesiac", "refuser", "constraint-blind", "do-nothing",
    "visible-oracle", *(f"ablated-{r}" for r in ABLATIONS),
)
