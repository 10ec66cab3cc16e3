"""Trace records: what happened at each decision point of a run.

The runner only *writes* traces; the scorer only *reads* them, so any saved trace
can be re-scored without a model.  ``to_dict``/``from_dict`` give the JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

ActionKind = Literal["tool_call", "answer", "clarification", "invalid"]
ItemStatus = Literal["active", "superseded", "revoked"]
ITEM_STATUSES: tuple[str, ...] = ("active", "superseded", "revoked")

#: Bumped whenever trace content or scoring semantics change.
TRACE_FORMAT = 1

#: How a trace was produced: ``scripted`` (one reply per decision point) or
#: ``interactive`` (tool calls answered, steps carried forward).  The one list of modes.
MODES: tuple[str, ...] = ("scripted", "interactive")

#: The presentation of a trace or logged sample that has no ``presentation`` field: such
#: logs predate presentations, which all showed ``chat``.  The one default for a missing field.
MISSING_PRESENTATION = "chat"

#: Most steps a replayed decision may take (bounds the work a forged log can cause):
#: a logged decision with more steps is refused, never silently cut; interactive mode's
#: ``max_steps`` may not exceed it.
MAX_REPLAY_STEPS = 64


@dataclass(frozen=True)
class Action:
    """The parsed reply of the agent at a decision point."""

    kind: str
    """``tool_call``, ``answer``, ``clarification`` or ``invalid``."""
    text: str
    """User-visible text: the answer, or the raw reply of a tool call / invalid reply."""
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None
    """Why a reply is ``invalid`` (e.g. malformed JSON inside <tool_call>), or why a reply
    holding a JSON call is text (``parse.WRAPPED_CALL``: words around the call, scorer 3.6)."""

    @property
    def content(self) -> str:
        """The text the scorer's text and memory channels look at.

        For a tool call: the argument values (flattened, in key order); otherwise the
        reply text.
        """
        if self.kind == "tool_call":
            return " | ".join(_flatten_values(self.arguments))  # "|" stops phone-number joining
        return self.text


def _flatten_values(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        out: list[str] = []
        for key in sorted(value, key=str):
            out.extend(_flatten_values(value[key]))
        return out
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten_values(v)]
    return [] if value is None else [str(value)]


@dataclass(frozen=True)
class ItemState:
    """A memory item as stored at a decision point, with its ground-truth status."""

    id: str
    key: str
    value: str
    scope: str
    source: str
    trust: float
    written_at: int
    status: str
    status_changed_at: int | None = None


@dataclass(frozen=True)
class ToolLogEntry:
    time: int
    tool: str
    arguments: Mapping[str, Any]
    result: Mapping[str, Any]
    by: str = "script"
    """``script`` for scripted events, ``agent`` for calls the agent made."""


@dataclass(frozen=True)
class ConstraintState:
    id: str
    text: str
    status: str
    """``active`` or ``lifted``."""
    declared_at: int
    lifted_at: int | None = None


@dataclass(frozen=True)
class MessageLogEntry:
    time: int
    role: str
    content: str
    event_id: str


@dataclass(frozen=True)
class StateSnapshot:
    """The four kinds of state at a decision point (paper §4.1)."""

    memory: tuple[ItemState, ...]
    tool_log: tuple[ToolLogEntry, ...]
    constraints: tuple[ConstraintState, ...]
    messages: tuple[MessageLogEntry, ...]
    active_scopes: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """One model call inside a decision point (interactive mode may take several)."""

    raw_reply: str
    action: Action
    tool_result: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class DecisionRecord:
    decision_id: str
    messages: tuple[Mapping[str, str], ...]
    """Chat messages shown to the agent (for interactive mode: at the first step)."""
    raw_reply: str
    """The reply the decision point is scored on (interactive: the last step's)."""
    action: Action
    state: StateSnapshot
    memory_used: tuple[str, ...]
    """Ids of memory items whose normalised value appears in the action content."""
    visible_items: tuple[str, ...] = ()
    """Ids of memory items shown to the agent (depends on the memory policy)."""
    steps: tuple[Step, ...] = ()
    """All model calls at this decision point, in order (interactive mode)."""


@dataclass(frozen=True)
class Trace:
    episode_id: str
    episode_version: str
    agent: str
    decisions: tuple[DecisionRecord, ...]
    mode: str = "scripted"
    memory_policy: str = "full"
    format: int = TRACE_FORMAT
    presentation: str = MISSING_PRESENTATION
    """How the episode was shown: ``chat``, ``history`` or ``session`` (render.py).  A trace
    without the field is :data:`MISSING_PRESENTATION` (``chat``); every writer sets it."""
    tools: str = "text"
    """How the tools were given: ``text`` (in the system message) or ``native`` (chat template)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def decision(self, decision_id: str) -> DecisionRecord | None:
        for d in self.decisions:
            if d.decision_id == decision_id:
                return d
        return None

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Trace:
        return Trace(
            episode_id=data["episode_id"],
            episode_version=data["episode_version"],
            agent=data["agent"],
            mode=data.get("mode", "scripted"),
            memory_policy=data.get("memory_policy", "full"),
            format=data.get("format", TRACE_FORMAT),
            presentation=data.get("presentation", MISSING_PRESENTATION),
            tools=data.get("tools", "text"),
            decisions=tuple(_decision_from_dict(d) for d in data["decisions"]),
        )


def _action_from_dict(d: Mapping[str, Any]) -> Action:
    return Action(
        kind=d["kind"],
        text=d.get("text", ""),
        tool=d.get("tool"),
        arguments=dict(d.get("arguments") or {}),
        reason=d.get("reason"),
    )


def _decision_from_dict(d: Mapping[str, Any]) -> DecisionRecord:
    s = d["state"]
    state = StateSnapshot(
        memory=tuple(ItemState(**m) for m in s["memory"]),
        tool_log=tuple(ToolLogEntry(**t) for t in s["tool_log"]),
        constraints=tuple(ConstraintState(**c) for c in s["constraints"]),
        messages=tuple(MessageLogEntry(**m) for m in s["messages"]),
        active_scopes=tuple(s["active_scopes"]),
    )
    return DecisionRecord(
        decision_id=d["decision_id"],
        messages=tuple(dict(m) for m in d["messages"]),
        raw_reply=d["raw_reply"],
        action=_action_from_dict(d["action"]),
        state=state,
        memory_used=tuple(d["memory_used"]),
        visible_items=tuple(d.get("visible_items", ())),
        steps=tuple(
            Step(
                raw_reply=st["raw_reply"],
                action=_action_from_dict(st["action"]),
                tool_result=st.get("tool_result"),
            )
            for st in d.get("steps", ())
        ),
    )
