"""Replay an episode's events to the ground-truth state at a decision point.

Pure functions: the same episode always gives the same snapshot.  The snapshot
holds the four kinds of state of paper §4.1 (memory store with statuses, tool-call
log, constraint state, message log) plus the active scopes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.trace import (
    ConstraintState,
    ItemState,
    MessageLogEntry,
    StateSnapshot,
    ToolLogEntry,
)


def ordered_events(episode: Episode) -> list[Event]:
    """Events in replay order: by logical time, then by position in the file."""
    return [e for _, e in sorted(enumerate(episode.events), key=lambda p: (p[1].time, p[0]))]


def events_before(episode: Episode, decision_id: str) -> list[Event]:
    """The events the agent has seen when it reaches ``decision_id`` (exclusive)."""
    out: list[Event] = []
    for event in ordered_events(episode):
        if event.id == decision_id:
            return out
        out.append(event)
    raise KeyError(f"episode {episode.id} has no decision point {decision_id!r}")


def action_text(action: Mapping[str, Any]) -> str:
    """An action dict -> its reply in the reply protocol: a tool call as one JSON object,
    otherwise the answer text."""
    if "tool" in action:
        call = {"tool": action["tool"], "arguments": dict(action.get("arguments") or {})}
        return json.dumps(call, ensure_ascii=False, sort_keys=True)
    return str(action.get("answer", ""))


def message_text(event: Event) -> tuple[str, str] | None:
    """(role, content) of an event that shows up in the conversation, else None.

    A decision point already passed shows as the reply that acts correctly there (its
    reference action, in the reply protocol), the scripted agent's own turn; callers
    that carry an agent's real replies (interactive mode) put those in its place."""
    t = event.type
    if t == "user_message":
        return "user", event.text or ""
    if t == "assistant_message":
        return "assistant", event.text or ""
    if t == "tool_call":
        return "assistant", action_text({"tool": event.tool, "arguments": event.arguments})
    if t == "decision_point":
        return ("assistant", action_text(event.reference)) if event.reference else None
    if t == "tool_return":
        result = json.dumps(dict(event.result or {}), ensure_ascii=False, sort_keys=True)
        return "user", f"[tool result: {event.tool}] {result}"
    if t in ("memory_revoke", "constraint_declare", "constraint_lift", "scope_switch"):
        return ("user", event.text) if event.text else None
    return None


#: Events the script acknowledges with an assistant turn right after ("Got it — saved.").
ACKNOWLEDGED: frozenset[str] = frozenset(
    {"memory_write", "memory_update", "memory_revoke", "constraint_declare", "constraint_lift"}
)


def drops_stand_in(event: Event, after_decision: bool) -> tuple[bool, bool]:
    """Whether a shown ``event`` is the script's stand-in for the agent's reply at the
    decision point just passed (every assistant turn right after it, e.g. "Email sent."),
    and whether the next shown event still follows that decision point.

    The one rule for both modes: the scripted history shows the reference reply in its
    place, interactive mode the agent's own reply."""
    if event.type == "decision_point":
        return False, True
    if after_decision and event.type == "assistant_message":
        return True, True
    return False, False


def is_acknowledgement(previous: Event | None, event: Event) -> bool:
    """Whether ``event`` is the script's acknowledgement of the memory or rule event just
    before it ("Understood — I've written it down.", "Will do — that's deleted.").

    Render 4 does not show these to the agent, in either mode: they say nothing the user's
    words and the notes do not, and a model shown a transcript of them answers the
    request with one instead of acting (Qwen2.5-Coder-0.5B on v4: 15 of 186 replies)."""
    return event.type == "assistant_message" and previous is not None and previous.type in ACKNOWLEDGED


def conversation_events(events: Iterable[Event]) -> Iterator[tuple[Event, str, str]]:
    """(event, role, content) of each event the scripted conversation shows.

    A decision point already passed shows as its reference reply; the script's turns
    right after it (its stand-in for the action) are dropped (``drops_stand_in``).  A model
    shown a request answered by "Email sent." learns to answer the next one that way
    instead of acting."""
    after_decision = False
    for event in events:
        shown = message_text(event)
        if shown is None:
            continue
        dropped, after_decision = drops_stand_in(event, after_decision)
        if not dropped:
            yield event, shown[0], shown[1]


def snapshot(episode: Episode, events: Iterable[Event]) -> StateSnapshot:
    """State after replaying ``events`` (in the given order)."""
    items: dict[str, ItemState] = {}
    tool_log: list[ToolLogEntry] = []
    constraints: dict[str, ConstraintState] = {}
    scopes: tuple[str, ...] = ()
    pending_calls: dict[str, tuple[int, dict[str, Any]]] = {}
    events = list(events)
    for ev in events:
        t = ev.type
        if ev.item is not None:
            it = ev.item
            items[it.id] = ItemState(
                id=it.id, key=it.key, value=it.value, scope=it.scope, source=it.source,
                trust=it.trust, written_at=ev.time, status="active",
            )
            if t == "memory_update" and ev.supersedes in items:
                items[ev.supersedes] = _with_status(items[ev.supersedes], "superseded", ev.time)
        elif t == "memory_revoke" and ev.target in items:
            items[ev.target] = _with_status(items[ev.target], "revoked", ev.time)
        elif t == "constraint_declare" and ev.constraint is not None:
            c = ev.constraint
            constraints[c.id] = ConstraintState(id=c.id, text=c.text, status="active", declared_at=ev.time)
        elif t == "constraint_lift" and ev.target in constraints:
            c0 = constraints[ev.target]
            constraints[c0.id] = ConstraintState(
                id=c0.id, text=c0.text, status="lifted", declared_at=c0.declared_at, lifted_at=ev.time
            )
        elif t == "scope_switch":
            scopes = tuple(ev.scopes)
        elif t == "tool_call" and ev.tool:
            pending_calls[ev.tool] = (ev.time, dict(ev.arguments or {}))
        elif t == "tool_return" and ev.tool:
            time, args = pending_calls.pop(ev.tool, (ev.time, {}))
            tool_log.append(ToolLogEntry(time=time, tool=ev.tool, arguments=args, result=dict(ev.result or {})))

    messages = [
        MessageLogEntry(time=ev.time, role=role, content=content, event_id=ev.id)
        for ev, role, content in conversation_events(events)
    ]
    for tool, (time, args) in sorted(pending_calls.items()):
        tool_log.append(ToolLogEntry(time=time, tool=tool, arguments=args, result={}))
    return StateSnapshot(
        memory=tuple(items.values()),
        tool_log=tuple(tool_log),
        constraints=tuple(constraints.values()),
        messages=tuple(messages),
        active_scopes=scopes,
    )


def state_at(episode: Episode, decision_id: str) -> StateSnapshot:
    """Ground-truth state just before the decision point ``decision_id``."""
    return snapshot(episode, events_before(episode, decision_id))


def in_scope(item_scope: str, active_scopes: Iterable[str]) -> bool:
    return item_scope == "global" or item_scope in tuple(active_scopes)


def _with_status(item: ItemState, status: str, time: int) -> ItemState:
    return ItemState(
        id=item.id, key=item.key, value=item.value, scope=item.scope, source=item.source,
        trust=item.trust, written_at=item.written_at, status=status, status_changed_at=time,
    )
