"""The check kinds: a registry from kind id to a small pure function.

Every check function takes the check, the decision record it applies to and the
scoring options, and returns ``(passed, evidence)``; evidence is a short human
string quoting what was seen.  Nothing here evaluates model text as code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lm_eval_memrisk.normalize import contains_value, normalize, values_equal
from lm_eval_memrisk.records import Check, Constraint, Episode
from lm_eval_memrisk.trace import Action, DecisionRecord, ItemState

_MAX_EVIDENCE = 120


@dataclass(frozen=True)
class CheckContext:
    episode: Episode
    expected: str = "revised"
    """``revised`` (bare values) or ``original`` (strict "label: value" values)."""


CheckFn = Callable[[Check, DecisionRecord, CheckContext], tuple[bool, str]]
REGISTRY: dict[str, CheckFn] = {}


def register(kind: str) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        REGISTRY[kind] = fn
        return fn

    return deco


def _quote(text: str) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= _MAX_EVIDENCE else text[: _MAX_EVIDENCE - 3] + "...")


def describe_action(action: Action) -> str:
    if action.kind == "tool_call":
        return f"called {action.tool}({_quote(str(dict(action.arguments)))})"
    if action.kind == "invalid":
        return f"invalid reply ({action.reason})"
    return f"{action.kind} {_quote(action.text)}"


# -- memory usage ---------------------------------------------------------------


def memory_used(action: Action, items: Sequence[ItemState]) -> tuple[str, ...]:
    """Ids of items whose normalised value occurs in the action content."""
    content = action.content
    return tuple(i.id for i in items if contains_value(content, i.value))


# -- constraints ----------------------------------------------------------------


def violates(constraint: Constraint, action: Action) -> str | None:
    """Evidence string if ``action`` violates ``constraint``, else None."""
    if constraint.forbid_tool and action.kind == "tool_call" and action.tool == constraint.forbid_tool:
        if constraint.forbid_argument is None:
            return f"called forbidden tool {action.tool}"
        value = action.arguments.get(constraint.forbid_argument)
        if (
            value is not None
            and constraint.forbid_value is not None
            and contains_value(str(value), constraint.forbid_value)
        ):
            return (
                f"called {action.tool} with {constraint.forbid_argument}={_quote(str(value))}, "
                f"forbidden value {_quote(constraint.forbid_value)}"
            )
    if constraint.forbid_text and contains_value(action.content, constraint.forbid_text):
        return f"reply contains forbidden text {_quote(constraint.forbid_text)}"
    return None


# -- text channel ---------------------------------------------------------------


@register("text_contains")
def _text_contains(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    found = contains_value(rec.action.content, check.value or "")
    return found, f"{_quote(check.value or '')} {'found' if found else 'not found'} in {describe_action(rec.action)}"


@register("text_absent")
def _text_absent(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    found = contains_value(rec.action.content, check.value or "")
    return not found, f"{_quote(check.value or '')} {'found' if found else 'absent'} in {describe_action(rec.action)}"


@register("text_regex")
def _text_regex(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    try:
        match = re.search(check.pattern or "", rec.action.content, flags=re.IGNORECASE)
    except re.error as exc:  # validated at load time; keep the scorer total anyway
        return False, f"bad pattern {check.pattern!r}: {exc}"
    return match is not None, (
        f"pattern {check.pattern!r} {'matched ' + _quote(match.group(0)) if match else 'did not match'}"
    )


# -- tool channel ---------------------------------------------------------------


@register("tool_called")
def _tool_called(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    ok = rec.action.kind == "tool_call" and rec.action.tool == check.tool
    return ok, f"expected a call of {check.tool}; {describe_action(rec.action)}"


@register("tool_not_called")
def _tool_not_called(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    called = rec.action.kind == "tool_call" and (check.tool is None or rec.action.tool == check.tool)
    what = check.tool or "any tool"
    return not called, f"{what} must not be called; {describe_action(rec.action)}"


@register("tool_arg_equals")
def _tool_arg_equals(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    expected = check.expected
    if ctx.expected == "original" and check.expected_original is not None:
        expected = check.expected_original
    a = rec.action
    if a.kind != "tool_call" or a.tool != check.tool:
        return False, f"expected {check.tool}({check.argument}={_quote(expected or '')}); {describe_action(a)}"
    got = a.arguments.get(check.argument or "")
    ok = got is not None and values_equal(got, expected)
    return ok, (
        f"{check.tool}.{check.argument}: got {_quote(str(got))}, expected {_quote(expected or '')}"
        f" (normalised {normalize(str(got)) if got is not None else None!r} vs {normalize(expected or '')!r})"
    )


# -- memory channel -------------------------------------------------------------


def _matching_items(check: Check, rec: DecisionRecord, ctx: CheckContext) -> list[ItemState]:
    used = set(memory_used(rec.action, rec.state.memory))
    out = []
    for item in rec.state.memory:
        if item.id not in used:
            continue
        if check.item is not None and item.id != check.item:
            continue
        if check.status is not None and item.status != check.status:
            continue
        if check.scope is not None and item.scope != check.scope:
            continue
        out.append(item)
    return out


def _selector(check: Check) -> str:
    parts = [f"{k}={v}" for k, v in (("item", check.item), ("status", check.status), ("scope", check.scope)) if v]
    return ", ".join(parts) or "any item"


@register("memory_used")
def _memory_used(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    hits = _matching_items(check, rec, ctx)
    if hits:
        return True, f"used {hits[0].id} ({_quote(hits[0].value)}) matching {_selector(check)}"
    return False, f"no used item matches {_selector(check)}; {describe_action(rec.action)}"


@register("memory_not_used")
def _memory_not_used(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    hits = _matching_items(check, rec, ctx)
    if hits:
        h = hits[0]
        return False, f"used {h.id} ({_quote(h.value)}, {h.status}, {h.scope}) matching {_selector(check)}"
    return True, f"no item matching {_selector(check)} used"


# -- constraint channel ---------------------------------------------------------


def _constraint(check: Check, ctx: CheckContext) -> Constraint | None:
    return ctx.episode.constraints.get(check.constraint or "")


@register("constraint_not_violated")
def _constraint_not_violated(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    c = _constraint(check, ctx)
    if c is None:
        return False, f"unknown constraint {check.constraint!r}"
    why = violates(c, rec.action)
    return why is None, why or f"constraint {c.id} respected; {describe_action(rec.action)}"


@register("constraint_violated")
def _constraint_violated(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    c = _constraint(check, ctx)
    if c is None:
        return False, f"unknown constraint {check.constraint!r}"
    why = violates(c, rec.action)
    return why is not None, why or f"constraint {c.id} not exercised; {describe_action(rec.action)}"


def run_check(check: Check, rec: DecisionRecord, ctx: CheckContext) -> tuple[bool, str]:
    fn = REGISTRY.get(check.kind)
    if fn is None:
        return False, f"unknown check kind {check.kind!r}"
    return fn(check, rec, ctx)


CHANNELS: Mapping[str, str] = {kind: kind.split("_", 1)[0] for kind in REGISTRY}
