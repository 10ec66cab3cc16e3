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
  memory policy; see :mod:`lm_eval_memrisk.visible_oracle`).

When a decision point has no ``naive`` action, or a placeholder has no matching
item, the adversaries fall back to the reference action.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lm_eval_memrisk.errors import MemriskError
from lm_eval_memrisk.records import Episode
from lm_eval_memrisk.state import action_text, in_scope, state_at
from lm_eval_memrisk.trace import ItemState, StateSnapshot

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
    "visible-oracle",
)


def get_agent(name: str) -> Any:
    """The scripted agent called ``name``: a reference agent (see :data:`AGENT_NAMES`),
    a planted-weakness agent ``weak:PROFILE`` (see :mod:`lm_eval_memrisk.weak`) or
    ``replay:FILE``, replies written beforehand (see :mod:`lm_eval_memrisk.replay`)."""
    if name.startswith("weak:"):
        from lm_eval_memrisk.weak import parse_weak

        return parse_weak(name)
    if name == "visible-oracle":
        from lm_eval_memrisk.visible_oracle import VisibleOracle

        return VisibleOracle()
    if name.startswith("replay:"):
        from lm_eval_memrisk.replay import ReplayAgent

        return ReplayAgent(name.removeprefix("replay:"))
    return ReferenceAgent(name)


def agent_name(text: str) -> str:
    """argparse ``type=`` for ``--agent``: a reference agent or ``weak:PROFILE``."""
    import argparse

    try:
        get_agent(text)
    except MemriskError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
