"""Semantic validation of episodes (the structure is checked by :mod:`lm_eval_memrisk.episodes.loader`).

:func:`collect_problems` lists every problem of an episode; :func:`validate_episode`
raises the first one.  Each problem is an :class:`~lm_eval_memrisk.episodes.errors.EpisodeFormatError`
naming the file, line, episode id and field (``events[3].checks[0].item``).

Rules (see ``docs/architecture.md``): the episode starts with a ``scope_switch``;
event, memory item, constraint and tool ids are unique; ``after`` edges point to
known, not-later events and form a DAG; updates, revocations and lifts refer to items
or constraints that exist *before* them in replay order ((time, position) order), and
an update keeps the key of the item it supersedes; each event carries exactly the
payload its type needs; decision points have 1-6 checks whose fields match their kind
and whose references (item, tool, constraint) exist; ``reference``/``naive`` actions
are ``{"tool", "arguments"}`` or ``{"answer"}`` with a known tool; the turn count fits
the tier; R6 <-> track ``r6``; R2 (and only R2) has a ``resolution_rule``;
``text_regex`` patterns run on RE2 (:mod:`lm_eval_memrisk.episodes.patterns`); from dataset
version 2 on, a decision whose reference calls a tool checks that call and every
argument that matters (:mod:`lm_eval_memrisk.episodes.action_checks`).  Each rule is one
function (``_EVENT_RULES`` run per event, in file order).

With ``behaviour=True`` (``memrisk validate``) an episode without other problems is
also run by two reference agents and scored (:func:`behaviour_problems`): the oracle
must pass every check, and an agent that does nothing must not pass them all.  The
loader leaves these off (they replay every decision); the fuzz counts them under its
own rejection reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes import risks
from lm_eval_memrisk.episodes.action_checks import missing_action_checks
from lm_eval_memrisk.episodes.errors import EpisodeFormatError
from lm_eval_memrisk.episodes.patterns import pattern_problem
from lm_eval_memrisk.episodes.records import (
    CHECK_KIND_TABLE,
    CHECK_KINDS,
    CHECK_PAYLOAD_FIELDS,
    EVENT_PAYLOAD_FIELDS,
    EVENT_TYPES,
    MEMORY_SELECTORS,
    RESOLUTION_RULES,
    SOURCES,
    TIER_TURNS,
    TIERS,
    Check,
    Episode,
    Event,
    MemoryItem,
)
from lm_eval_memrisk.episodes.trace import ITEM_STATUSES

__all__ = ["MAX_CHECKS", "behaviour_problems", "collect_problems", "validate_episode"]

#: Most checks a decision point may carry.
MAX_CHECKS = 6

_Problem = tuple[str, str]  # (field, message)

#: event type -> (required payload fields, optional payload fields)
EVENT_PAYLOAD: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "memory_write": (("item",), ("text",)),
    "memory_update": (("item", "supersedes"), ("text",)),
    "memory_revoke": (("target", "text"), ()),
    "user_message": (("text",), ()),
    "assistant_message": (("text",), ()),
    "tool_call": (("tool",), ("arguments",)),
    "tool_return": (("tool",), ("result",)),
    "constraint_declare": (("constraint", "text"), ()),
    "constraint_lift": (("target", "text"), ()),
    "scope_switch": (("scopes", "text"), ()),
    "summary": (("item",), ("text",)),
    "decision_point": (("checks", "reference"), ("naive", "terminal_tool")),
}

#: check kind -> (required fields, optional fields), derived from the one table.
CHECK_FIELDS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    spec.kind: (spec.required, spec.optional) for spec in CHECK_KIND_TABLE
}
_MEM_SELECTORS = MEMORY_SELECTORS
_PLACEHOLDER = re.compile(r"\{\{mem:([^{}]+)\}\}")  # as in agents.PLACEHOLDER


def _time(ev: Event) -> int:
    """The event's time, or -1 when it is not a valid integer (reported separately)."""
    t = ev.time
    return t if isinstance(t, int) and not isinstance(t, bool) else -1


def _is_set(value: Any) -> bool:
    return value is not None and value != () and value != {}


def _present(value: Any) -> bool:
    """Set and, for strings, not blank (what a *required* field needs)."""
    return _is_set(value) and not (isinstance(value, str) and not value.strip())


def _enum_problem(fld: str, value: Any, choices: tuple[str, ...], what: str) -> _Problem | None:
    if value in choices:
        return None
    return fld, f"unknown {what} '{value}' (expected one of {', '.join(choices)})"


def _episode_problems(ep: Episode) -> Iterator[_Problem]:
    if not ep.id or not ep.id.strip():
        yield "id", "must not be empty"
    for fld, value, choices, what in (
        ("risk", ep.risk, risks.risk_ids(), "risk"),
        ("tier", ep.tier, TIERS, "tier"),
        ("track", ep.track, risks.tracks(), "track"),
    ):
        p = _enum_problem(fld, value, choices, what)
        if p:
            yield p
    own = next((s.track for s in risks.specs() if s.risk == ep.risk), None)
    owner = {s.track: s.risk for s in risks.specs() if not s.main}
    if own is not None and own != risks.MAIN_TRACK and ep.track != own:
        yield "track", f"risk {ep.risk} episodes belong to track '{own}', not '{ep.track}'"
    elif ep.track in owner and ep.risk != owner[ep.track]:
        yield "track", f"track '{ep.track}' is only for risk {owner[ep.track]}, not {ep.risk}"
    if ep.risk == "R2" and ep.resolution_rule is None:
        yield (
            "resolution_rule",
            f"R2 episodes need a resolution_rule (one of {', '.join(RESOLUTION_RULES)})",
        )
    elif ep.resolution_rule is not None:
        if ep.risk != "R2":
            yield "resolution_rule", f"only R2 episodes have a resolution_rule, not {ep.risk}"
        else:
            p = _enum_problem(
                "resolution_rule", ep.resolution_rule, RESOLUTION_RULES, "resolution rule"
            )
            if p:
                yield p
    if ep.tier in TIER_TURNS:
        lo, hi = TIER_TURNS[ep.tier]
        n = ep.turn_count
        if not lo <= n <= hi:
            yield (
                "tier",
                f"{ep.tier} episodes need {lo}-{hi} turns (user + assistant messages), found {n}",
            )


def _tool_problems(ep: Episode) -> Iterator[_Problem]:
    seen: dict[str, int] = {}
    for k, tool in enumerate(ep.tools):
        fld = f"tools[{k}]"
        if tool.name in seen:
            yield (
                f"{fld}.name",
                f"duplicate tool name '{tool.name}' (also tools[{seen[tool.name]}])",
            )
        else:
            seen[tool.name] = k
        params = tool.parameters
        if not isinstance(params, Mapping):
            yield f"{fld}.parameters", "must be a JSON Schema object"
        elif params and params.get("type") != "object":
            yield f"{fld}.parameters", 'must be a JSON Schema of type "object"'
        elif "properties" in params and not isinstance(params["properties"], Mapping):
            yield f"{fld}.parameters.properties", "must be an object"


def _tool_params(ep: Episode) -> dict[str, Mapping[str, Any] | None]:
    """tool name -> its declared argument names' schema (None = not declared)."""
    out: dict[str, Mapping[str, Any] | None] = {}
    for tool in ep.tools:
        props = tool.parameters.get("properties") if isinstance(tool.parameters, Mapping) else None
        out.setdefault(tool.name, props if isinstance(props, Mapping) else None)
    return out


def _item_problems(item: MemoryItem, fld: str, event_type: str) -> Iterator[_Problem]:
    for name in ("id", "key", "value", "scope"):
        if not _present(getattr(item, name)):
            yield f"{fld}.{name}", "must not be empty"
    p = _enum_problem(f"{fld}.source", item.source, SOURCES, "source")
    if p:
        yield p
    elif event_type == "summary" and item.source != "summary":
        yield (
            f"{fld}.source",
            f"a summary event's item must have source 'summary', not '{item.source}'",
        )
    if not 0.0 <= item.trust <= 1.0:
        yield f"{fld}.trust", f"must be between 0 and 1, not {item.trust}"
    if item.valid_to is not None and item.valid_to < item.valid_from:
        yield f"{fld}.valid_to", f"is before valid_from ({item.valid_to} < {item.valid_from})"


def _action_problems(
    action: Any, fld: str, tools: Mapping[str, Any], keys: set[str], naive: bool
) -> Iterator[_Problem]:
    if not isinstance(action, Mapping):
        yield fld, 'must be {"tool": NAME, "arguments": {...}} or {"answer": TEXT}'
        return
    shape = set(action)
    if shape == {"answer"}:
        if not isinstance(action["answer"], str) or not action["answer"].strip():
            yield f"{fld}.answer", "must be a non-empty string"
    elif shape == {"tool", "arguments"}:
        tool = action["tool"]
        if not isinstance(tool, str) or tool not in tools:
            yield f"{fld}.tool", f"unknown tool '{tool}' (episode tools: {_names(tools)})"
        if not isinstance(action["arguments"], Mapping):
            yield f"{fld}.arguments", "must be an object"
    else:
        yield (
            fld,
            (
                'must be {"tool": NAME, "arguments": {...}} or {"answer": TEXT}, '
                f"got keys {sorted(shape)}"
            ),
        )
        return
    for key in _placeholders(action):
        if not naive:
            yield fld, f"{{{{mem:{key}}}}} placeholders are only allowed in 'naive'"
            return
        if key.strip() not in keys:
            yield fld, f"placeholder {{{{mem:{key}}}}} names no memory item key"


def _placeholders(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from _PLACEHOLDER.findall(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _placeholders(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _placeholders(v)


def _names(names: Mapping[str, Any] | set[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def _check_problems(
    check: Check,
    fld: str,
    tools: Mapping[str, Mapping[str, Any] | None],
    items: Mapping[str, Any],
    constraints: Mapping[str, Any],
) -> Iterator[_Problem]:
    if not _present(check.id):
        yield f"{fld}.id", "must not be empty"
    if check.kind not in CHECK_FIELDS:
        yield (
            f"{fld}.kind",
            f"unknown check kind '{check.kind}' (expected one of {', '.join(CHECK_KINDS)})",
        )
        return
    required, optional = CHECK_FIELDS[check.kind]
    for name in required:
        value = getattr(check, name)
        # tool_arg_equals may legitimately expect an empty argument value
        if not (_present(value) or (name == "expected" and value == "")):
            yield f"{fld}.{name}", f"missing: check kind '{check.kind}' needs '{name}'"
    for name in CHECK_PAYLOAD_FIELDS:
        if name not in required and name not in optional and _is_set(getattr(check, name)):
            yield f"{fld}.{name}", f"not used by check kind '{check.kind}'"
    if check.kind in ("memory_used", "memory_not_used") and not any(
        _present(getattr(check, s)) for s in _MEM_SELECTORS
    ):
        yield fld, f"check kind '{check.kind}' needs at least one of item, status, scope"
    if check.pattern is not None and check.kind == "text_regex":
        why = pattern_problem(check.pattern)
        if why is not None:
            yield f"{fld}.pattern", f"{why} in pattern {check.pattern!r}"
    if check.tool is not None and check.tool not in tools:
        yield f"{fld}.tool", f"unknown tool '{check.tool}' (episode tools: {_names(tools)})"
    elif check.kind == "tool_arg_equals" and check.tool is not None and check.argument:
        props = tools[check.tool]
        if props is not None and check.argument not in props:
            yield (
                f"{fld}.argument",
                (
                    f"tool '{check.tool}' has no argument '{check.argument}' "
                    f"(arguments: {_names(props)})"
                ),
            )
    if check.item is not None and check.item not in items:
        yield f"{fld}.item", f"unknown memory item '{check.item}'"
    if check.status is not None and check.status not in ITEM_STATUSES:
        yield (
            f"{fld}.status",
            (
                f"unknown memory status '{check.status}' "
                f"(expected one of {', '.join(ITEM_STATUSES)})"
            ),
        )
    if check.constraint is not None and check.constraint not in constraints:
        yield f"{fld}.constraint", f"unknown constraint '{check.constraint}'"


@dataclass(frozen=True)
class _Index:
    """Where each id is first defined, and the replay order, computed once per episode."""

    tools: Mapping[str, Mapping[str, Any] | None]
    rank: Mapping[int, int]
    """event position -> position in replay ((time, position)) order."""
    event_at: Mapping[str, int]
    item_at: Mapping[str, int]
    item_by_id: Mapping[str, MemoryItem]
    constraint_at: Mapping[str, int]

    @property
    def item_keys(self) -> set[str]:
        return {it.key for it in self.item_by_id.values()}

    @classmethod
    def of(cls, ep: Episode) -> _Index:
        events = ep.events
        order = sorted(range(len(events)), key=lambda i: (_time(events[i]), i))
        event_at: dict[str, int] = {}
        item_at: dict[str, int] = {}
        item_by_id: dict[str, MemoryItem] = {}
        constraint_at: dict[str, int] = {}
        for i, ev in enumerate(events):  # first occurrence wins
            event_at.setdefault(ev.id, i)
            if ev.item is not None and ev.item.id not in item_at:
                item_at[ev.item.id], item_by_id[ev.item.id] = i, ev.item
            if ev.constraint is not None:
                constraint_at.setdefault(ev.constraint.id, i)
        return cls(
            tools=_tool_params(ep), rank={i: r for r, i in enumerate(order)}, event_at=event_at,
            item_at=item_at, item_by_id=item_by_id, constraint_at=constraint_at,
        )  # fmt: skip


def _problems(ep: Episode) -> Iterator[_Problem]:
    """Every rule, in a stable order: episode, tools, then each event in file order."""
    yield from _episode_problems(ep)
    yield from _tool_problems(ep)
    events = ep.events
    if not events:
        yield "events", "episode has no events"
        return
    ix = _Index.of(ep)
    yield from _opening_problems(events, ix)
    yield from _duplicate_id_problems(events)
    for i, ev in enumerate(events):
        fld = f"events[{i}]"
        header = list(_event_header_problems(ev, fld))
        yield from header
        if any(f in (f"{fld}.type", f"{fld}.time") for f, _ in header):
            continue
        for rule in _EVENT_RULES:
            yield from rule(ep, i, fld, ix)
    if not ep.decision_points:
        yield "events", "episode has no decision_point event"
    yield from _cycle_problems(events, ix.event_at)


def _opening_problems(events: tuple[Event, ...], ix: _Index) -> Iterator[_Problem]:
    """The episode starts with a scope_switch that comes first in replay order."""
    first = events[0]
    if first.type != "scope_switch":
        yield (
            "events[0].type",
            f"an episode must start with a scope_switch event, not '{first.type}'",
        )
        return
    earliest = min(ix.rank, key=lambda i: ix.rank[i])
    if earliest != 0:
        e = events[earliest]
        yield (
            "events[0].time",
            (
                f"the opening scope_switch must come first, but event '{e.id}' has an "
                f"earlier time ({e.time} < {first.time})"
            ),
        )


def _duplicate_id_problems(events: tuple[Event, ...]) -> Iterator[_Problem]:
    """Event, memory item and constraint ids are unique (first occurrence wins)."""
    event_at: dict[str, int] = {}
    item_at: dict[str, int] = {}
    constraint_at: dict[str, int] = {}
    for i, ev in enumerate(events):
        if ev.id in event_at:
            yield (
                f"events[{i}].id",
                f"duplicate event id '{ev.id}' (also events[{event_at[ev.id]}])",
            )
        else:
            event_at[ev.id] = i
        if ev.item is not None:
            if ev.item.id in item_at:
                j = item_at[ev.item.id]
                yield (
                    f"events[{i}].item.id",
                    (
                        f"duplicate memory item id '{ev.item.id}' "
                        f"(first written by event '{events[j].id}')"
                    ),
                )
            else:
                item_at[ev.item.id] = i
        if ev.constraint is not None:
            if ev.constraint.id in constraint_at:
                j = constraint_at[ev.constraint.id]
                yield (
                    f"events[{i}].constraint.id",
                    (
                        f"duplicate constraint id '{ev.constraint.id}' "
                        f"(first declared by event '{events[j].id}')"
                    ),
                )
            else:
                constraint_at[ev.constraint.id] = i


def _event_header_problems(ev: Event, fld: str) -> Iterator[_Problem]:
    """A non-empty id, a known type and a valid time (the last two stop the event's rules)."""
    if not _present(ev.id):
        yield f"{fld}.id", "must not be empty"
    if ev.type not in EVENT_PAYLOAD:
        yield (
            f"{fld}.type",
            f"unknown event type '{ev.type}' (expected one of {', '.join(EVENT_TYPES)})",
        )
        return
    if isinstance(ev.time, bool) or not isinstance(ev.time, int) or ev.time < 0:
        yield f"{fld}.time", f"must be an integer >= 0, not {ev.time!r}"


def _after_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """``after`` edges point to known, other, not-later events."""
    ev, events = ep.events[i], ep.events
    for k, ref in enumerate(ev.after):
        afld = f"{fld}.after[{k}]"
        if ref not in ix.event_at:
            yield afld, f"unknown event '{ref}'"
        elif ref == ev.id:
            yield afld, "an event cannot come after itself"
        elif _time(events[ix.event_at[ref]]) > ev.time:
            yield (
                afld,
                f"event '{ref}' has a later time ({events[ix.event_at[ref]].time} > {ev.time})",
            )


def _payload_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """Each event carries exactly the payload its type needs."""
    ev = ep.events[i]
    required, optional = EVENT_PAYLOAD[ev.type]
    for name in required:
        if name == "checks":
            continue  # reported by _decision_problems with a specific message
        if not _present(getattr(ev, name)):
            yield f"{fld}.{name}", f"missing: a {ev.type} event needs '{name}'"
    for name in EVENT_PAYLOAD_FIELDS:
        if name not in required and name not in optional and _is_set(getattr(ev, name)):
            yield f"{fld}.{name}", f"not used by event type '{ev.type}'"


def _item_and_scope_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """Memory items are well formed; scopes are not empty."""
    ev = ep.events[i]
    if ev.item is not None and ev.type in ("memory_write", "memory_update", "summary"):
        yield from _item_problems(ev.item, f"{fld}.item", ev.type)
    for k, scope in enumerate(ev.scopes):
        if not _present(scope):
            yield f"{fld}.scopes[{k}]", "must not be empty"


def _reference_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """Updates, revocations and lifts refer to things that exist earlier in replay
    order; an update keeps the key of the item it supersedes."""
    ev, events = ep.events[i], ep.events
    if ev.type == "memory_update" and ev.supersedes is not None:
        yield from _earlier_item(
            ev, i, f"{fld}.supersedes", ev.supersedes, ix.item_at, events, ix.rank
        )
        old = ix.item_by_id.get(ev.supersedes)
        if old is not None and ev.item is not None and old.key != ev.item.key:
            yield (
                f"{fld}.item.key",
                (
                    f"an update must keep the key of the item it supersedes "
                    f"('{old.key}' in '{old.id}'), not '{ev.item.key}'"
                ),
            )
    if ev.type == "memory_revoke" and ev.target is not None:
        yield from _earlier_item(ev, i, f"{fld}.target", ev.target, ix.item_at, events, ix.rank)
    if ev.type == "constraint_lift" and ev.target is not None:
        tfld = f"{fld}.target"
        if ev.target not in ix.constraint_at:
            yield tfld, f"unknown constraint '{ev.target}'"
        elif ix.rank[ix.constraint_at[ev.target]] > ix.rank[i]:
            j = ix.constraint_at[ev.target]
            yield (
                tfld,
                (
                    f"constraint '{ev.target}' is not declared yet at time {ev.time} "
                    f"(declared at time {events[j].time} by event '{events[j].id}')"
                ),
            )


def _declared_constraint_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    ev = ep.events[i]
    if ev.constraint is not None and ev.type == "constraint_declare":
        yield from _constraint_problems(ev, fld, ix.tools)


def _tool_event_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    ev = ep.events[i]
    if ev.tool is not None and ev.type in ("tool_call", "tool_return") and ev.tool not in ix.tools:
        yield f"{fld}.tool", f"unknown tool '{ev.tool}' (episode tools: {_names(ix.tools)})"


def _decision_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """1-3 checks with unique ids that fit their kind; well-formed reference/naive."""
    ev = ep.events[i]
    if ev.type != "decision_point":
        return
    n = len(ev.checks)
    if n == 0:
        yield f"{fld}.checks", "a decision point needs at least one check"
    elif n > MAX_CHECKS:
        yield (
            f"{fld}.checks",
            f"a decision point has at most {MAX_CHECKS} checks, found {n}",
        )
    seen_checks: dict[str, int] = {}
    for k, check in enumerate(ev.checks):
        cfld = f"{fld}.checks[{k}]"
        if check.id in seen_checks:
            yield (
                f"{cfld}.id",
                f"duplicate check id '{check.id}' (also checks[{seen_checks[check.id]}])",
            )
        else:
            seen_checks[check.id] = k
        yield from _check_problems(check, cfld, ix.tools, ix.item_by_id, ix.constraint_at)
    if ev.reference is not None:
        yield from _action_problems(ev.reference, f"{fld}.reference", ix.tools, ix.item_keys, False)
    if ev.naive is not None:
        yield from _action_problems(ev.naive, f"{fld}.naive", ix.tools, ix.item_keys, True)
    if ev.terminal_tool is not None and ev.terminal_tool not in ix.tools:
        yield (
            f"{fld}.terminal_tool",
            f"unknown tool '{ev.terminal_tool}' (episode tools: {_names(ix.tools)})",
        )


def _action_check_problems(ep: Episode, i: int, fld: str, ix: _Index) -> Iterator[_Problem]:
    """From dataset v2 on, a decision whose reference is a tool call checks the tool
    and every argument that matters (:func:`missing_action_checks`)."""
    ev = ep.events[i]
    if ev.type != "decision_point" or dataset_major(ep) < 2:
        return
    for sub, message in missing_action_checks(ep, ev):
        yield f"{fld}.{sub}", message


_EVENT_RULES = (
    _after_problems,
    _payload_problems,
    _item_and_scope_problems,
    _reference_problems,
    _declared_constraint_problems,
    _tool_event_problems,
    _decision_problems,
    _action_check_problems,
)


def dataset_major(ep: Episode) -> int:
    """The major number of the episode's ``version`` ("1.0" -> 1); 0 if unreadable."""
    head = str(ep.version).split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _earlier_item(
    ev: Event,
    i: int,
    fld: str,
    item_id: str,
    item_at: Mapping[str, int],
    events: tuple[Event, ...],
    rank: Mapping[int, int],
) -> Iterator[_Problem]:
    if item_id not in item_at:
        yield fld, f"unknown memory item '{item_id}' (never written)"
        return
    j = item_at[item_id]
    if j == i:
        yield fld, f"an update cannot supersede its own item '{item_id}'"
    elif rank[j] > rank[i]:
        yield (
            fld,
            (
                f"memory item '{item_id}' is not written yet at time {ev.time} "
                f"(written at time {events[j].time} by event '{events[j].id}')"
            ),
        )


def _constraint_problems(ev: Event, fld: str, tools: Mapping[str, Any]) -> Iterator[_Problem]:
    c = ev.constraint
    assert c is not None
    cfld = f"{fld}.constraint"
    if not _present(c.id):
        yield f"{cfld}.id", "must not be empty"
    if not _present(c.scope):
        yield f"{cfld}.scope", "must not be empty"
    if c.forbid_tool is None and c.forbid_text is None:
        yield (
            cfld,
            "a constraint needs forbid_tool or forbid_text (otherwise it can never be violated)",
        )
    if c.forbid_tool is not None and c.forbid_tool not in tools:
        yield (
            f"{cfld}.forbid_tool",
            f"unknown tool '{c.forbid_tool}' (episode tools: {_names(tools)})",
        )
    if c.forbid_argument is not None and c.forbid_tool is None:
        yield f"{cfld}.forbid_argument", "needs forbid_tool"
    if (c.forbid_argument is None) != (c.forbid_value is None):
        name = "forbid_value" if c.forbid_argument is not None else "forbid_argument"
        yield f"{cfld}.{name}", "forbid_argument and forbid_value go together"


def _cycle_problems(events: tuple[Event, ...], event_at: Mapping[str, int]) -> Iterator[_Problem]:
    """Report one cycle of the ``after`` graph, if any (iterative DFS)."""
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    for start in range(len(events)):
        if state.get(start):
            continue
        stack: list[tuple[int, Iterator[str]]] = [(start, iter(events[start].after))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            j = event_at.get(nxt)
            if j is None or j == node:
                continue  # dangling / self edges are reported elsewhere
            if state.get(j) == 1:
                chain = " after ".join(events[k].id for k in path[path.index(j) :] + [j])
                yield f"events[{node}].after", f"cycle in the after graph: {chain}"
                return
            if not state.get(j):
                state[j] = 1
                stack.append((j, iter(events[j].after)))
                path.append(j)


def behaviour_problems(ep: Episode) -> Iterator[_Problem]:
    """Issue 26, item 10: the oracle (each decision's reference action) passes every
    check, and an agent that does nothing (:data:`~lm_eval_memrisk.running.agents.DO_NOTHING_REPLY`
    at every decision) does not pass them all.  Run only on an episode with no other
    problem."""
    from lm_eval_memrisk.running.agent_registry import get_agent
    from lm_eval_memrisk.running.agents import DO_NOTHING_REPLY
    from lm_eval_memrisk.running.runner import run_episode
    from lm_eval_memrisk.scoring.scorer import score

    at = {ev.id: i for i, ev in reversed(list(enumerate(ep.events)))}  # first occurrence
    try:
        oracle = score(ep, run_episode(ep, get_agent("oracle")))
        nothing = score(ep, run_episode(ep, get_agent("do-nothing")))
    except Exception as exc:  # noqa: BLE001 - a validator reports, it never crashes
        yield "events", f"the reference agents cannot be run on this episode: {exc}"
        return
    for r in oracle.checks:
        if r.passed:
            continue
        i = at[r.decision_id]
        own = [j for j, c in enumerate(ep.events[i].checks) if c.id == r.check_id]
        fld = f"events[{i}].checks" + (f"[{own[0]}]" if own else "")
        what = "check" if own else "implied check"
        yield fld, f"the oracle (the reference action) fails {what} {r.check_id} ({r.kind}): {r.evidence}"
    if nothing.success:
        last = ep.decision_points[-1]
        ids = ", ".join(dp.id for dp in ep.decision_points)
        yield (
            f"events[{at[last.id]}].checks",
            f"an agent that does nothing (it replies {DO_NOTHING_REPLY!r}) passes every check of "
            f"every decision point ({ids}): no decision requires acting",
        )


def collect_problems(
    ep: Episode, *, path: str = "<memory>", line: int | None = None, behaviour: bool = False
) -> list[EpisodeFormatError]:
    """Every semantic problem of ``ep`` (empty list = valid), in a stable order; with
    ``behaviour``, then the :func:`behaviour_problems` of an episode that has no other."""
    eid = ep.id if isinstance(ep.id, str) and ep.id.strip() else None
    problems = list(_problems(ep))
    if behaviour and not problems:
        problems = list(behaviour_problems(ep))
    return [EpisodeFormatError(str(path), line, eid, fld, msg) for fld, msg in problems]


def validate_episode(ep: Episode, *, path: str = "<memory>", line: int | None = None) -> None:
    """Raise :class:`EpisodeFormatError` for the first semantic problem of ``ep``."""
    for fld, msg in _problems(ep):
        eid = ep.id if isinstance(ep.id, str) and ep.id.strip() else None
        raise EpisodeFormatError(str(path), line, eid, fld, msg)
