"""The correct behaviour expected at a checkpoint's decision point, and the checks and
reference action derived from it.

An :class:`Expectation` is the structured state the mutation operators edit: which
memory key the request is about, whether the agent must *use* one item's value,
*ask* (no valid item is left) or *refrain* (a standing constraint forbids the
action), which items it must avoid, and where the value goes (a tool argument or the
answer text).  :func:`derive` recomputes the decision point's checks and reference
from it, so no operator writes checks by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from lm_eval_memrisk.episodes import patterns
from lm_eval_memrisk.episodes.normalize import normalize
from lm_eval_memrisk.episodes.records import Check, Episode, Event
from lm_eval_memrisk.episodes.state import in_scope, state_at
from lm_eval_memrisk.episodes.trace import ItemState, StateSnapshot
from lm_eval_memrisk.fuzz import pools
from lm_eval_memrisk.running.agents import PLACEHOLDER, action_to_reply
from lm_eval_memrisk.scoring.checks import memory_used
from lm_eval_memrisk.scoring.parse import parse_action

#: Stands for the expected value inside a reference template.
MARK = "\u2063VALUE\u2063"
MODES = ("use", "ask", "refrain")
ROLES = ("current", "superseded", "revoked", "other-scope", "summary", "conflict", "distractor")
#: Checks per decision point: the positive ones, then `memory_not_used` for items to avoid.
MAX_CHECKS = 4


@dataclass(frozen=True)
class Expectation:
    """What the correct agent does at the (single) decision point of a checkpoint."""

    mode: str
    """``use`` the value of ``use_item``; ``ask`` the user; ``refrain`` (constraint)."""
    key: str
    template: Mapping[str, Any]
    """The reference action of ``use`` mode with :data:`MARK` where the value goes."""
    use_item: str | None = None
    """``use``: the item whose value is expected; ``refrain``: the one that would be used."""
    avoid: tuple[str, ...] = ()
    """Items the agent must not use, most salient first."""
    constraint: str | None = None
    label: str | None = None
    """``expected_original`` template (``"address: " + MARK``), if the seed had one."""

    @property
    def is_tool(self) -> bool:
        return "tool" in self.template

    @property
    def tool(self) -> str | None:
        return str(self.template["tool"]) if self.is_tool else None

    def slot(self) -> tuple[str | None, bool]:
        """(argument carrying the value or None for an answer, whether it is the whole value)."""
        if not self.is_tool:
            return None, False
        for name, value in dict(self.template.get("arguments") or {}).items():
            if isinstance(value, str) and MARK in value:
                return name, value == MARK
        return None, False

    def describe(self, episode: Episode) -> dict[str, Any]:
        """JSON form for ``Episode.metadata["expected_behaviour"]``."""
        items = _items(episode)
        out: dict[str, Any] = {"mode": self.mode, "key": self.key, "avoid": list(self.avoid)}
        if self.use_item and self.mode == "use":
            out.update(item=self.use_item, value=items[self.use_item].value)
        elif self.use_item:
            out["withheld_item"] = self.use_item
        if self.constraint:
            out["constraint"] = self.constraint
        if self.is_tool:
            out["tool"] = self.tool
        return out


def _items(episode: Episode) -> dict[str, ItemState]:
    dp = episode.decision_points[-1]
    return {i.id: i for i in state_at(episode, dp.id).memory}


def dp_of(episode: Episode) -> Event:
    """The checkpoint's decision point (the last one)."""
    return episode.decision_points[-1]


def placeholder_key(naive: Mapping[str, Any] | None) -> str | None:
    text = json.dumps(dict(naive or {}), ensure_ascii=False, sort_keys=True)
    m = PLACEHOLDER.search(text)
    return m.group(1).strip() if m else None


def _swap(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, Mapping):
        return {k: _swap(v, old, new) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_swap(v, old, new) for v in value]
    return value


def fill(template: Mapping[str, Any], value: str) -> dict[str, Any]:
    """The template with :data:`MARK` replaced by ``value``."""
    return dict(_swap(dict(template), MARK, value))


def _template(dp: Event, key: str, use: ItemState | None) -> dict[str, Any] | None:
    ref = dict(dp.reference or {})
    if use is not None:
        raw = json.dumps(ref, ensure_ascii=False)
        if use.value in raw:
            return dict(_swap(ref, use.value, MARK))
    if dp.naive:
        swapped = json.dumps(dict(dp.naive), ensure_ascii=False)
        swapped = PLACEHOLDER.sub(
            lambda m: MARK if m.group(1).strip() == key else m.group(0), swapped
        )
        if PLACEHOLDER.search(swapped) is None and MARK in swapped:
            return dict(json.loads(swapped))
    return None


def infer(episode: Episode) -> Expectation | None:
    """The expectation of a seed checkpoint, read off its decision point (None: unknown)."""
    dp = dp_of(episode)
    state = state_at(episode, dp.id)
    action = parse_action(action_to_reply(dict(dp.reference or {})))
    used = set(memory_used(action, state.memory))
    key = placeholder_key(dp.naive)
    if key is None:
        keys = sorted({i.key for i in state.memory if i.id in used})
        if len(keys) != 1:
            return None
        key = keys[0]
    k_used = [i for i in state.memory if i.key == key and i.id in used]
    # several notes can hold the used value (a colleague's copy of a shared value): the
    # one the reference uses is the one in scope, then the newest
    use = max(
        k_used, key=lambda i: (in_scope(i.scope, state.active_scopes), i.written_at, i.id)
    ) if k_used else None  # fmt: skip
    template = _template(dp, key, use)
    if template is None:
        return None
    constraint = next(
        (c.constraint for c in dp.checks if c.kind == "constraint_not_violated"), None
    )
    mode = "refrain" if constraint and use is None else "use" if use is not None else "ask"
    if mode == "refrain":  # the item a constraint-blind agent would use
        live = [
            i
            for i in state.memory
            if i.key == key and i.status == "active" and in_scope(i.scope, state.active_scopes)
        ]
        use = max(live, key=lambda i: (i.written_at, i.id), default=None)
    label = None
    for c in dp.checks:
        if (
            c.kind == "tool_arg_equals"
            and use is not None
            and c.expected_original
            and use.value in c.expected_original
        ):
            label = c.expected_original.replace(use.value, MARK)
    avoid = tuple(i.id for i in _ranked(state, key, use.id if use else None))
    return Expectation(
        mode=mode,
        key=key,
        template=template,
        use_item=use.id if use else None,
        avoid=avoid,
        constraint=constraint,
        label=label,
    )


def role_of(item: ItemState, state: StateSnapshot, exp: Expectation) -> str:
    """The item's role at the decision point (one of :data:`ROLES`)."""
    if item.key != exp.key:
        return "distractor"
    if item.id == exp.use_item:
        return "current"
    if item.status in ("revoked", "superseded"):
        return item.status
    if item.source == "summary":
        return "summary"
    if not in_scope(item.scope, state.active_scopes):
        return "other-scope"
    return "conflict"


def roles(episode: Episode, exp: Expectation) -> dict[str, str]:
    """item id -> role, for every item in the store at the decision point."""
    state = state_at(episode, dp_of(episode).id)
    return {i.id: role_of(i, state, exp) for i in state.memory}


_ROLE_RANK = {
    r: n
    for n, r in enumerate(
        ("revoked", "superseded", "other-scope", "summary", "conflict", "current")
    )
}


def _ranked(state: StateSnapshot, key: str, use: str | None) -> list[ItemState]:
    probe = Expectation(mode="use", key=key, template={}, use_item=use)
    same = [i for i in state.memory if i.key == key and i.id != use]
    return sorted(same, key=lambda i: (_ROLE_RANK[role_of(i, state, probe)], -i.written_at, i.id))


def reorder_avoid(episode: Episode, exp: Expectation, first: tuple[str, ...] = ()) -> Expectation:
    """``exp`` with ``avoid`` = every same-key item except the used one, ``first`` leading."""
    state = state_at(episode, dp_of(episode).id)
    ranked = [i.id for i in _ranked(state, exp.key, exp.use_item)]
    lead = [i for i in first if i in ranked]
    return replace(exp, avoid=tuple(lead + [i for i in ranked if i not in lead]))


def _selector(item: ItemState, role: str) -> dict[str, str]:
    if role == "superseded":
        return {"status": "superseded"}
    if role == "other-scope":
        return {"scope": item.scope}
    return {"item": item.id}


def verb_phrase(tool: str | None) -> str:
    """A tool name as an imperative: ``ship_order`` -> "ship the order"."""
    words = (tool or "help").replace("-", "_").split("_")
    words = [w for w in words if w] or ["help"]
    return words[0] if len(words) == 1 else f"{words[0]} the {' '.join(words[1:])}"


def _wording(episode: Episode, exp: Expectation) -> dict[str, str]:
    return {"key": exp.key, "tail": exp.key.split()[-1], "verb": verb_phrase(exp.tool)}


def _asks_about(key: str) -> list[Check]:
    """The positive check of an ask or refrain decision, as the benchmark's own episodes
    write it: the reply asks the user (or, in R5, declines) in its own words and names
    the thing.  Without it a reply that does nothing (a copied acknowledgement) passed
    every revoked, moved-out-of-scope and newly forbidden mutant."""
    words = sorted({w for w in re.findall(r"[a-z0-9]+", key.lower()) if len(w) >= 3})
    return [Check(id="", kind="text_regex", pattern=patterns.asks_about(words))] if words else []


def _same_valued(items: Mapping[str, ItemState], use: str | None) -> list[ItemState]:
    """The other notes whose value is the used note's (after normalisation)."""
    if use is None or use not in items:
        return []
    value = normalize(items[use].value)
    return [i for i in items.values() if i.id != use and normalize(i.value) == value]


def derive(episode: Episode, exp: Expectation) -> tuple[tuple[Check, ...], dict[str, Any]]:
    """(checks, reference) of the decision point, recomputed from ``exp`` and the state."""
    state = state_at(episode, dp_of(episode).id)
    items = {i.id: i for i in state.memory}
    checks: list[Check] = []
    words = _wording(episode, exp)
    arg, whole = exp.slot()
    if exp.mode == "use":
        assert exp.use_item is not None
        value = items[exp.use_item].value
        reference = fill(exp.template, value)
        if exp.is_tool and arg is not None and whole:
            original = exp.label.replace(MARK, value) if exp.label else None
            checks.append(
                Check(
                    id="",
                    kind="tool_arg_equals",
                    tool=exp.tool,
                    argument=arg,
                    expected=value,
                    expected_original=original,
                )
            )
        else:
            if exp.is_tool:
                checks.append(Check(id="", kind="tool_called", tool=exp.tool))
            checks.append(Check(id="", kind="text_contains", value=value))
    elif exp.mode == "ask":
        reference = {"answer": pools.ASK_REPLIES[0].format(**words)}
        if exp.is_tool:
            checks.append(Check(id="", kind="tool_not_called", tool=exp.tool))
        checks += _asks_about(exp.key)
    else:
        reference = {
            "answer": (pools.REFRAIN_TOOL if exp.is_tool else pools.REFRAIN_TEXT)[0].format(**words)
        }
        checks.append(Check(id="", kind="constraint_not_violated", constraint=exp.constraint))
        if exp.is_tool:
            checks.append(Check(id="", kind="tool_not_called", tool=exp.tool))
        checks += _asks_about(exp.key)
    probe = replace(exp, avoid=())
    seen: list[dict[str, str]] = []
    # notes holding the used value (a colleague's copy of a shared value, a value stated
    # again) cannot be avoided by an action that uses it: no check on them, and none
    # whose scope or status selector would also match them
    same = _same_valued(items, exp.use_item) if exp.mode == "use" else []
    same_ids = {i.id for i in same}
    for item_id in exp.avoid:
        if len(checks) >= MAX_CHECKS or item_id not in items or item_id in same_ids:
            continue
        item = items[item_id]
        sel = _selector(item, role_of(item, state, probe))
        if any(i.scope == sel.get("scope") or i.status == sel.get("status") for i in same):
            sel = {"item": item.id}
        if sel not in seen:
            seen.append(sel)
            checks.append(Check(id="", kind="memory_not_used", item=sel.get("item"),
                                status=sel.get("status"), scope=sel.get("scope")))
    numbered = tuple(replace(c, id=f"c{n}") for n, c in enumerate(checks, start=1))
    return numbered, reference
