"""Typed, immutable records for episodes.

An *episode* is a DAG of timestamped *events* (memory writes, messages, tool calls,
constraints, scope switches, decision points).  Every record here is a frozen
dataclass; JSON (de)serialisation lives in :mod:`lm_eval_memrisk.episodes.loader`, so these
classes stay plain data.

Field semantics that the scorer relies on are documented on each field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from lm_eval_memrisk.episodes import risks as _risks

Tier = Literal["easy", "medium", "hard"]
Source = Literal["user", "tool", "system", "summary"]
ResolutionRule = Literal["latest_timestamp", "trusted_source", "explicit_correction", "scope"]
EventType = Literal[
    "memory_write",
    "memory_update",
    "memory_revoke",
    "user_message",
    "assistant_message",
    "tool_call",
    "tool_return",
    "constraint_declare",
    "constraint_lift",
    "scope_switch",
    "summary",
    "decision_point",
]
#: The risks and tracks of the registry (:mod:`lm_eval_memrisk.episodes.risks`), as
#: shipped (snapshots taken at import; code that must see :func:`risks.temporary` risks
#: calls the registry's functions).
RISKS: tuple[str, ...] = _risks.risk_ids()
MAIN_RISKS: tuple[str, ...] = _risks.main_risks()
TIERS: tuple[str, ...] = get_args(Tier)
TRACKS: tuple[str, ...] = _risks.tracks()
SOURCES: tuple[str, ...] = get_args(Source)
RESOLUTION_RULES: tuple[str, ...] = get_args(ResolutionRule)
EVENT_TYPES: tuple[str, ...] = get_args(EventType)

RISK_NAMES: Mapping[str, str] = _risks.risk_names()

#: Allowed trajectory length (number of user + assistant messages) per tier.
TIER_TURNS: Mapping[str, tuple[int, int]] = {
    "easy": (5, 8),
    "medium": (10, 14),
    "hard": (15, 25),
}

#: Event types that carry a :class:`MemoryItem` in ``Event.item``.
ITEM_EVENTS = frozenset({"memory_write", "memory_update", "summary"})
#: Event types counted as conversation turns.
TURN_EVENTS = frozenset({"user_message", "assistant_message"})


@dataclass(frozen=True)
class CheckKindSpec:
    """The one definition of a check kind.

    The loader's enum, the validator's field rules, the scorer's negative kinds, the
    :class:`Check` field table and the JSON Schema enum all derive from
    :data:`CHECK_KIND_TABLE` (a test keeps the schema file equal to it); the check
    functions of :mod:`lm_eval_memrisk.scoring.checks` are registered against it.
    """

    kind: str
    required: tuple[str, ...]
    """Check fields the kind needs (memory kinds need at least one of ``optional``)."""
    optional: tuple[str, ...]
    negative: bool
    """Forbids something: must hold at every step of a decision, under every variant."""
    summary: str


CHECK_KIND_TABLE: tuple[CheckKindSpec, ...] = (
    CheckKindSpec("text_contains", ("value",), ("accept",), False,
                  "the reply names ``value`` (or an ``accept`` form, or an equivalent form)"),
    CheckKindSpec("text_absent", ("value",), ("accept",), True,
                  "the reply does not use ``value`` (nor an ``accept`` form)"),
    CheckKindSpec("text_regex", ("pattern",), (), False,
                  "RE2 ``pattern`` matches the reply (case-insensitive)"),
    CheckKindSpec("tool_called", ("tool",), (), False, "the action calls ``tool``"),
    CheckKindSpec("tool_not_called", (), ("tool",), True,
                  "the action does not call ``tool`` (``None`` = no tool call at all)"),
    CheckKindSpec("tool_arg_equals", ("tool", "argument", "expected"), ("expected_original", "accept"),
                  False, "``tool`` called with ``argument`` equivalent to ``expected``"),
    CheckKindSpec("tool_arg_matches", ("tool", "argument", "expected"), (), False,
                  "``tool`` called with ``argument`` matching ``expected`` by type: a number equal in value, "
                  "a name sharing a content word (scorer 3.0; implied for request-fixed arguments)"),
    CheckKindSpec("text_no_false_claim", (), (), False,
                  "the reply does not claim an action was completed without making a call (scorer 3.0; "
                  "implied at every decision)"),
    CheckKindSpec("memory_used", (), ("item", "status", "scope"), False,
                  "an item matching the selector is used"),
    CheckKindSpec("memory_not_used", (), ("item", "status", "scope"), True,
                  "no item matching the selector is used"),
    CheckKindSpec("constraint_not_violated", ("constraint",), (), True,
                  "the action respects ``constraint``"),
    CheckKindSpec("constraint_violated", ("constraint",), (), False,
                  "the action violates ``constraint`` (probe checks)"),
)  # fmt: skip
CHECK_SPECS: Mapping[str, CheckKindSpec] = {s.kind: s for s in CHECK_KIND_TABLE}
CHECK_KINDS: tuple[str, ...] = tuple(CHECK_SPECS)
#: Kinds that forbid something (see :attr:`CheckKindSpec.negative`).
NEGATIVE_CHECK_KINDS: frozenset[str] = frozenset(s.kind for s in CHECK_KIND_TABLE if s.negative)
#: Memory kinds: need at least one of their optional selector fields.
MEMORY_SELECTORS: tuple[str, ...] = ("item", "status", "scope")


@dataclass(frozen=True)
class MemoryItem:
    """One entry of the agent's long-term memory store."""

    id: str
    """Unique within the episode, e.g. ``"m1"``."""
    key: str
    """What the item is about, e.g. ``"shipping address"``."""
    value: str
    """The remembered value, e.g. ``"14 Birch Lane, Leeds"``."""
    scope: str
    """Who may see it: ``"user:alice"``, ``"workspace:acme"`` or ``"global"``."""
    source: str
    """Where it came from: one of :data:`SOURCES`."""
    trust: float
    """Reliability of the source in [0, 1]; shown to the agent as low/medium/high."""
    valid_from: int
    """Logical time at which the value became true (usually the write time)."""
    valid_to: int | None = None
    """Logical time after which the value is known to be false, if any."""


@dataclass(frozen=True)
class Constraint:
    """A rule declared during the episode ("never email the client directly").

    An action *violates* the constraint when any of the ``forbid_*`` patterns match
    (see :func:`lm_eval_memrisk.scoring.checks.violates`):

    * ``forbid_tool`` set and the action calls that tool, and, when ``forbid_argument``
      is also set, the normalised ``forbid_value`` occurs in that argument;
    * ``forbid_text`` set and its normalised form occurs in the action's text.
    """

    id: str
    text: str
    scope: str = "global"
    forbid_tool: str | None = None
    forbid_argument: str | None = None
    forbid_value: str | None = None
    forbid_text: str | None = None


@dataclass(frozen=True)
class Tool:
    """A tool the agent may call; ``parameters`` is a JSON-Schema object."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    terminal: bool = True
    """Whether calling it completes the task of a decision point (interactive mode)."""


@dataclass(frozen=True)
class Check:
    """One deterministic, trace-grounded check attached to a decision point.

    Which fields are used depends on ``kind``: see :data:`CHECK_KIND_TABLE` (the one
    definition; ``docs/architecture.md`` and the README list it too).
    """

    id: str
    kind: str
    description: str = ""
    value: str | None = None
    pattern: str | None = None
    tool: str | None = None
    argument: str | None = None
    expected: str | None = None
    """Revised expected value (paper §4.3): the bare value, e.g. ``"9 Elm Rd"``."""
    expected_original: str | None = None
    """Original strict form, e.g. ``"address: 9 Elm Rd"``; ``None`` = same as expected."""
    item: str | None = None
    status: str | None = None
    scope: str | None = None
    constraint: str | None = None
    accept: tuple[str, ...] = ()
    """Further accepted forms of ``value``/``expected`` generated with the episode
    (BFCL's "possible answers"); the value-type matchers of
    :mod:`lm_eval_memrisk.scoring.equivalence` apply to each.  Empty = only ``value``/``expected``."""
    risk: str | None = None
    """The risk a violation of this check is attributed to (a foil of another risk in a
    combined episode, dataset v3); ``None`` = the episode's own risk."""

    @property
    def channel(self) -> str:
        """Evidence channel: ``text``, ``tool``, ``memory`` or ``constraint``."""
        return self.kind.split("_", 1)[0]


@dataclass(frozen=True)
class Event:
    """One node of the episode DAG.

    Which payload fields are set depends on ``type``:

    * ``memory_write`` / ``summary``: ``item`` (``summary`` items have source "summary";
      ``text`` may hold the raw material the summary compressed);
    * ``memory_update``: ``item`` (the new value) and ``supersedes`` (old item id);
    * ``memory_revoke``: ``target`` (item id) and ``text`` (the notice the agent sees);
    * ``user_message`` / ``assistant_message``: ``text``;
    * ``tool_call``: ``tool`` and ``arguments``; ``tool_return``: ``tool`` and ``result``;
    * ``constraint_declare``: ``constraint`` and ``text``; ``constraint_lift``: ``target``
      (constraint id) and ``text``;
    * ``scope_switch``: ``scopes`` (the scopes now active) and ``text`` (session header);
    * ``decision_point``: ``checks`` (1-3), ``reference`` and optionally ``naive``
      and ``terminal_tool``.

    ``reference`` is the ground-truth correct action at a decision point, as
    ``{"tool": NAME, "arguments": {...}}`` or ``{"answer": TEXT}``; the oracle agent
    replays it.  ``naive`` is the same kind of dict for the action a helpful but
    memory-careless agent would take; its strings may hold ``{{mem:KEY}}``
    placeholders that each reference adversary fills with its own (wrong) choice of
    memory item for that key (see :mod:`lm_eval_memrisk.running.agents`).
    """

    id: str
    type: str
    time: int
    after: tuple[str, ...] = ()
    text: str | None = None
    item: MemoryItem | None = None
    supersedes: str | None = None
    target: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    constraint: Constraint | None = None
    scopes: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    reference: Mapping[str, Any] | None = None
    naive: Mapping[str, Any] | None = None
    terminal_tool: str | None = None

    @property
    def answers_user(self) -> bool:
        """A decision point whose reference action replies to the user (no tool call)."""
        return self.reference is not None and "tool" not in self.reference


#: Event fields whose use depends on the event type (which ones each type needs:
#: :data:`lm_eval_memrisk.episodes.validate.EVENT_PAYLOAD`).
EVENT_PAYLOAD_FIELDS: tuple[str, ...] = (
    "text",
    "item",
    "supersedes",
    "target",
    "tool",
    "arguments",
    "result",
    "constraint",
    "scopes",
    "checks",
    "reference",
    "naive",
    "terminal_tool",
)
#: Check fields whose use depends on the check kind (which ones each kind needs:
#: :data:`CHECK_KIND_TABLE`).
CHECK_PAYLOAD_FIELDS: tuple[str, ...] = (
    "value",
    "pattern",
    "tool",
    "argument",
    "expected",
    "expected_original",
    "item",
    "status",
    "scope",
    "constraint",
    "accept",
)


@dataclass(frozen=True)
class Episode:
    """A scripted episode: metadata, tools and the event DAG."""

    id: str
    version: str
    risk: str
    tier: str
    track: str
    family: str
    """Scenario family, e.g. ``"shipping_address"``."""
    description: str
    tools: tuple[Tool, ...]
    events: tuple[Event, ...]
    resolution_rule: str | None = None
    """For R2: how the conflict must be resolved (one of :data:`RESOLUTION_RULES`)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    # -- derived views (cheap; computed on demand) ---------------------------------
    @property
    def decision_points(self) -> tuple[Event, ...]:
        return tuple(e for e in self.events if e.type == "decision_point")

    @property
    def memory_items(self) -> dict[str, MemoryItem]:
        return {e.item.id: e.item for e in self.events if e.item is not None}

    @property
    def constraints(self) -> dict[str, Constraint]:
        return {e.constraint.id: e.constraint for e in self.events if e.constraint is not None}

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    @property
    def turn_count(self) -> int:
        """Number of user and assistant messages (the tier's trajectory length)."""
        return sum(1 for e in self.events if e.type in TURN_EVENTS)

    def event(self, event_id: str) -> Event:
        for e in self.events:
            if e.id == event_id:
                return e
        raise KeyError(event_id)
