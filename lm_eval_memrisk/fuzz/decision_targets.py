"""What a model's margin is measured on at one decision point (no model here).

A :class:`DecisionTarget` is read off a decision point's reference action and the
memory state at that point:

* ``value``: the reference uses a memory value (the *used* note: a note whose value
  the reference contains, a live in-scope one first, then the newest).  The wrong
  candidates are the other values the episode holds for that decision: every other note
  of the same key, and every note a ``memory_not_used`` check of the decision names by
  id, with its role (``revoked``, ``superseded``, ``other-scope``, ``summary``,
  ``conflict``), plus the ``forbid_value`` of an active constraint on the reference's
  tool and argument (``forbidden``).  Candidates equal to the reference value (after
  normalisation) are dropped; the first role in that order wins a shared value.  For a
  tool call, ``prefix`` is the call written in the reply protocol up to the argument's
  opening quote (``{"tool": "ship_order", "arguments": {"address": "``), the reference
  is the argument as the reference writes it, and a wrong candidate is that argument
  with the used value replaced by the wrong one (JSON-escaped); ``suffix`` is the
  closing quote.  For an answer, ``prefix`` is the reference answer up to the value
  (the space before the value starts every candidate, as a tokenizer writes it) and
  ``suffix`` the character after the value.  A decision with no wrong candidate has no target.
* ``withhold``: the reference replies without a tool call and uses no memory value
  (ask the user, decline); ``reference`` holds the opening words of its answer, one
  more withholding opener.  The margins are the reply-start margins of
  :mod:`lm_eval_memrisk.fuzz.reply_start` (text against a call, a withholding
  opener against a claiming one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes.normalize import contains_value, normalize
from lm_eval_memrisk.episodes.records import Check, Episode, Event
from lm_eval_memrisk.episodes.state import action_text, in_scope, state_at
from lm_eval_memrisk.episodes.trace import ItemState, StateSnapshot
from lm_eval_memrisk.scoring.parse import parse_action

VALUE, WITHHOLD = "value", "withhold"
#: Wrong-candidate roles, most telling first (a value held by several notes takes the first).
ROLE_ORDER = ("revoked", "superseded", "other-scope", "summary", "conflict", "forbidden")
#: The cause names of a withhold decision's margins: a tool call where none is wanted,
#: and a reply that opens by reporting an action instead of asking or declining.
TOOL_CALL, CLAIM = "tool-call", "claim"
_MARK = "\u2063MARGIN\u2063"


@dataclass(frozen=True)
class Candidate:
    """One wrong value and why it is wrong."""

    role: str
    text: str
    """The candidate as the model would write it after the prefix."""


@dataclass(frozen=True)
class DecisionTarget:
    """What the margin at one decision point compares (see the module docstring)."""

    decision_id: str
    kind: str
    prefix: str = ""
    reference: str = ""
    suffix: str = ""
    wrong: tuple[Candidate, ...] = ()


def item_role(item: ItemState, state: StateSnapshot) -> str:
    """The role of a note that is not the used one (one of :data:`ROLE_ORDER`)."""
    if item.status in ("revoked", "superseded"):
        return item.status
    if not in_scope(item.scope, state.active_scopes):
        return "other-scope"
    if item.source == "summary":
        return "summary"
    return "conflict"


def _named(check: Check, item: ItemState) -> bool:
    """A ``memory_not_used`` check names this note (by id: a status or scope selector
    also covers other keys' notes, which are no candidate for this value)."""
    return check.kind == "memory_not_used" and check.item == item.id


def used_item(reference: Mapping[str, Any], state: StateSnapshot) -> ItemState | None:
    """The note whose value the reference uses (a live in-scope one first, then the newest)."""
    content = parse_action(action_text(reference)).content
    used = [i for i in state.memory if contains_value(content, i.value)]

    def rank(i: ItemState) -> tuple[bool, int, str]:
        live = i.status == "active" and in_scope(i.scope, state.active_scopes)
        return live, i.written_at, i.id

    return max(used, key=rank, default=None)


def wrong_values(
    episode: Episode, dp: Event, state: StateSnapshot, use: ItemState, tool: str | None, arg: str | None
) -> list[tuple[str, str]]:
    """(role, value) of every wrong candidate, roles in :data:`ROLE_ORDER`, values once."""
    found: list[tuple[str, str]] = []
    for item in state.memory:
        if item.id != use.id and (item.key == use.key or any(_named(c, item) for c in dp.checks)):
            found.append((item_role(item, state), item.value))
    active = {c.id for c in state.constraints if c.status == "active"}
    for cid, constraint in sorted(episode.constraints.items()):
        if (
            cid in active
            and tool is not None
            and constraint.forbid_tool == tool
            and constraint.forbid_argument == arg
            and constraint.forbid_value
        ):
            found.append(("forbidden", constraint.forbid_value))
    found.sort(key=lambda rv: ROLE_ORDER.index(rv[0]))
    out: list[tuple[str, str]] = []
    seen = {normalize(use.value)}
    for role, value in found:
        if normalize(value) not in seen:
            seen.add(normalize(value))
            out.append((role, value))
    return out


def _json_inner(text: str) -> str:
    """``text`` as it appears between the quotes of a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _tool_target(
    episode: Episode, dp: Event, state: StateSnapshot, use: ItemState, ref: Mapping[str, Any]
) -> DecisionTarget | None:
    tool = str(ref["tool"])
    args = dict(ref.get("arguments") or {})
    strings = [(k, v) for k, v in args.items() if isinstance(v, str)]
    exact = next(((k, v) for k, v in strings if use.value in v), None)
    loose = next(((k, v) for k, v in strings if contains_value(v, use.value)), None)
    chosen = exact or loose
    if chosen is None:
        return None
    arg, written = chosen
    wrong = wrong_values(episode, dp, state, use, tool, arg)
    if not wrong:
        return None
    before = {}
    for k, v in args.items():
        if k == arg:
            break
        before[k] = v
    call = json.dumps({"tool": tool, "arguments": {**before, arg: _MARK}}, ensure_ascii=False)
    prefix = call[: call.index(_MARK)]

    def written_with(value: str) -> str:
        return _json_inner(written.replace(use.value, value) if exact else value)

    reference = written_with(use.value)
    cands = [Candidate(role, written_with(v)) for role, v in wrong]
    return DecisionTarget(dp.id, VALUE, prefix, reference, '"',
                          tuple(c for c in cands if c.text != reference))


def _answer_target(
    episode: Episode, dp: Event, state: StateSnapshot, use: ItemState, answer: str
) -> DecisionTarget | None:
    at = answer.find(use.value)
    wrong = wrong_values(episode, dp, state, use, None, None)
    if at < 0 or not wrong:
        return None
    end = at + len(use.value)
    prefix = answer[:at].rstrip()
    lead = answer[len(prefix) : at]  # the space before the value goes with the value
    return DecisionTarget(dp.id, VALUE, prefix, lead + use.value, answer[end : end + 1],
                          tuple(Candidate(role, lead + v) for role, v in wrong))


def opening(answer: str, words: int = 3) -> str:
    """The first ``words`` words of a reference answer, without trailing punctuation (a
    withhold target's own opener: "I no longer have", "Which shipping address")."""
    return " ".join(answer.split()[:words]).rstrip(".,;:!?—-\u2014 ")


def decision_target(episode: Episode, dp: Event) -> DecisionTarget | None:
    """The target of one decision point (None: nothing to compare there)."""
    ref = dict(dp.reference or {})
    if not ref:
        return None
    state = state_at(episode, dp.id)
    use = used_item(ref, state)
    if "tool" in ref:
        return _tool_target(episode, dp, state, use, ref) if use is not None else None
    if use is None:
        return DecisionTarget(dp.id, WITHHOLD, reference=opening(str(ref.get("answer", ""))))
    return _answer_target(episode, dp, state, use, str(ref.get("answer", "")))


def decision_targets(episode: Episode) -> list[DecisionTarget]:
    """The targets of every decision point of ``episode`` that has one, in order."""
    out: Sequence[DecisionTarget | None] = [decision_target(episode, dp) for dp in episode.decision_points]
    return [t for t in out if t is not None]
