"""Episode plans: sessions of event blocks with symbolic references, compiled to records.

Risk builders describe an episode as sessions (one persona in one workspace) made of
*blocks* (events that belong together, e.g. a user statement, the memory write it
causes and the assistant's acknowledgement).  Items and constraints are referenced
by Python objects (:class:`ItemRef`, :class:`ConstraintRef`) until :func:`compile_plan`
lays the events out in order and assigns the ids (``e1``, ``m1``, ``k1``) and times.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lm_eval_memrisk.episodes.records import Check, Constraint, Event, MemoryItem
from lm_eval_memrisk.generator.people import Persona, Workspace


@dataclass(eq=False)
class ItemRef:
    """A memory item before ids are assigned."""

    key: str
    value: str
    scope: str
    source: str = "user"
    trust: float = 0.9
    id: str = ""


@dataclass(eq=False)
class ConstraintRef:
    """A constraint before ids are assigned (fields as in :class:`records.Constraint`)."""

    text: str
    scope: str = "global"
    forbid_tool: str | None = None
    forbid_argument: str | None = None
    forbid_value: str | None = None
    forbid_text: str | None = None
    id: str = ""


@dataclass
class CheckSpec:
    """A check whose item / constraint fields are still references."""

    kind: str
    description: str
    value: str | None = None
    pattern: str | None = None
    tool: str | None = None
    argument: str | None = None
    expected: str | None = None
    item: ItemRef | None = None
    status: str | None = None
    scope: str | None = None
    constraint: ConstraintRef | None = None
    risk: str | None = None
    """The risk a violation is attributed to; None = the episode's risk."""


@dataclass
class DecisionSpec:
    checks: list[CheckSpec]
    reference: dict[str, Any]
    naive: dict[str, Any] | None = None
    terminal_tool: str | None = None
    uses: tuple[ItemRef, ...] = ()
    """Items the reference action legitimately mentions (verified after compiling)."""


@dataclass
class Ev:
    """One event of a plan."""

    type: str
    text: str | None = None
    item: ItemRef | None = None
    supersedes: ItemRef | None = None
    target: ItemRef | ConstraintRef | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    constraint: ConstraintRef | None = None
    decision: DecisionSpec | None = None


Block = list[Ev]


@dataclass
class Session:
    """One sign-in: a persona in a workspace, and its blocks in order."""

    persona: Persona
    workspace: Workspace
    blocks: list[Block] = field(default_factory=list)
    sealed: bool = False
    """No filler may follow the last block (it ends with the final decision point)."""
    guest: bool = False
    """A visitor's session added as a distractor (no other filler goes into it)."""

    @property
    def scopes(self) -> tuple[str, ...]:
        return (self.persona.scope, self.workspace.scope)

    def continued(self, blocks: list[Block]) -> Session:
        """A later session of the same persona and workspace holding ``blocks`` (a split
        of this one): the seal moves to it, as this session no longer ends the episode."""
        later = Session(self.persona, self.workspace, blocks=blocks, sealed=self.sealed)
        self.sealed = False
        return later

    def gaps(self) -> range:
        """Indices where a filler block may be inserted (before ``blocks[i]``)."""
        return range(len(self.blocks) if self.sealed else len(self.blocks) + 1)


def turns(blocks: list[Block]) -> int:
    """User and assistant messages in ``blocks``."""
    return sum(1 for b in blocks for e in b if e.type in ("user_message", "assistant_message"))


def plan_turns(sessions: list[Session]) -> int:
    """User and assistant messages in ``sessions``."""
    return sum(turns(s.blocks) for s in sessions)


def _header(n: int, day: dt.date, s: Session) -> str:
    return (
        f"Session {n} — {day:%A} {day.day} {day:%B} {day.year} — signed in as "
        f"{s.persona.full} (workspace {s.workspace.name})"
    )


def _check(spec: CheckSpec, cid: str) -> Check:
    return Check(
        id=cid,
        kind=spec.kind,
        description=spec.description,
        value=spec.value,
        pattern=spec.pattern,
        tool=spec.tool,
        argument=spec.argument,
        expected=spec.expected,
        item=spec.item.id if spec.item else None,
        status=spec.status,
        scope=spec.scope,
        constraint=spec.constraint.id if spec.constraint else None,
        risk=spec.risk,
    )


def _memory_item(ref: ItemRef, time: int) -> MemoryItem:
    return MemoryItem(
        id=ref.id,
        key=ref.key,
        value=ref.value,
        scope=ref.scope,
        source=ref.source,
        trust=ref.trust,
        valid_from=time,
    )


def _constraint(ref: ConstraintRef) -> Constraint:
    return Constraint(
        id=ref.id,
        text=ref.text,
        scope=ref.scope,
        forbid_tool=ref.forbid_tool,
        forbid_argument=ref.forbid_argument,
        forbid_value=ref.forbid_value,
        forbid_text=ref.forbid_text,
    )


def compile_plan(sessions: list[Session], rng: random.Random) -> tuple[Event, ...]:
    """Lay the sessions out as a chain of events with ids, times and session headers.

    Each event's time is its position; ``after`` names the previous event.
    """
    flat: list[Ev] = []
    day = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 300))
    headers: dict[int, tuple[str, tuple[str, ...]]] = {}
    for n, s in enumerate(sessions, start=1):
        if n > 1:
            day += dt.timedelta(days=rng.randint(1, 9))
        headers[len(flat)] = (_header(n, day, s), s.scopes)
        flat.append(Ev(type="scope_switch"))
        for block in s.blocks:
            flat.extend(block)

    n_items = n_constraints = 0
    for ev in flat:  # ids in order of first appearance
        if ev.item is not None and not ev.item.id:
            n_items += 1
            ev.item.id = f"m{n_items}"
        if ev.constraint is not None and not ev.constraint.id:
            n_constraints += 1
            ev.constraint.id = f"k{n_constraints}"

    events: list[Event] = []
    for t, ev in enumerate(flat):
        eid = f"e{t + 1}"
        after = (events[-1].id,) if events else ()
        if t in headers:
            text, scopes = headers[t]
            events.append(
                Event(id=eid, type="scope_switch", time=t, after=after, text=text, scopes=scopes)
            )
            continue
        dec = ev.decision
        events.append(
            Event(
                id=eid,
                type=ev.type,
                time=t,
                after=after,
                text=ev.text,
                item=_memory_item(ev.item, t) if ev.item else None,
                supersedes=ev.supersedes.id if ev.supersedes else None,
                target=ev.target.id if ev.target else None,
                tool=ev.tool,
                arguments=dict(ev.arguments) if ev.arguments is not None else None,
                result=dict(ev.result) if ev.result is not None else None,
                constraint=_constraint(ev.constraint) if ev.constraint else None,
                checks=tuple(_check(c, f"c{i}") for i, c in enumerate(dec.checks, 1))
                if dec
                else (),
                reference=dict(dec.reference) if dec else None,
                naive=dict(dec.naive) if dec and dec.naive else None,
                terminal_tool=dec.terminal_tool if dec else None,
            )
        )
    return tuple(events)
