"""v2's last pass over a built episode: positive action checks and ``accept`` forms.

* Every decision whose reference calls a tool gets a ``tool_arg_equals`` check for each
  argument that matters (:func:`lm_eval_memrisk.episodes.action_checks.mattering_arguments`: a
  memory value or a user-given identifier such as an order reference); a
  ``text_contains`` check made redundant by one (the door code in a courier note) is
  dropped, so a prose claim without the call fails.
* Every value check carries ``accept``: equivalent forms of its value generated here
  (BFCL's "possible answers"), on top of the scorer's value-type matchers.
"""

from __future__ import annotations

import dataclasses
import re

from lm_eval_memrisk.episodes.action_checks import mattering_arguments
from lm_eval_memrisk.episodes.records import Check, Episode, Event

_CARD = re.compile(r"^(?P<brand>.+?) ending (?P<last>\d{4})$")
_SLOT = re.compile(r"^(?P<day>[A-Z][a-z]+day) (?P<h>\d{1,2}):(?P<m>\d{2})$")
_SEAT = re.compile(r"^(?P<side>[\w-]+(?: [\w-]+)?) seat, row (?P<row>\d+)$")
_SORT = re.compile(r"^sort code (?P<sort>[\d-]+), account (?P<acct>\d+)$")
_LOYALTY = re.compile(r"^(?P<prog>.+?) (?P<a>\d{4}) (?P<b>\d{4})$")
_PICKUP = re.compile(r"^the (?P<spot>[^,]+), (?P<addr>.+)$")


def _clock(h: int, m: int) -> str:
    suffix = "am" if h < 12 else "pm"
    h12 = h % 12 or 12
    return f"{h12}{suffix}" if m == 0 else f"{h12}:{m:02d}{suffix}"


def accept_forms(value: str) -> tuple[str, ...]:
    """Equivalent ways of writing ``value`` (never the value itself)."""
    out: list[str] = []
    if m := _CARD.match(value):
        brand = m["brand"].split()
        out += [f"{m['brand']} ending in {m['last']}", f"{brand[-1]} ending {m['last']}"]
    elif m := _SLOT.match(value):
        h, mi = int(m["h"]), int(m["m"])
        out += [f"{m['day']} at {m['h']}:{m['m']}", f"{m['day']} {_clock(h, mi)}",
                f"{m['day']} at {_clock(h, mi)}"]  # fmt: skip
    elif m := _SEAT.match(value):
        out += [f"{m['side']} seat in row {m['row']}", f"row {m['row']}, {m['side']} seat"]
    elif m := _SORT.match(value):
        out += [f"{m['sort']} {m['acct']}", f"sort code {m['sort']} account {m['acct']}"]
    elif m := _LOYALTY.match(value):
        out += [f"{m['prog']} {m['a']}{m['b']}", f"{m['prog']} number {m['a']} {m['b']}"]
    elif m := _PICKUP.match(value):
        out += [f"{m['spot']}, {m['addr']}", f"{m['addr']} ({m['spot']})"]
    return tuple(dict.fromkeys(f for f in out if f != value))


def _with_accept(check: Check) -> Check:
    value = check.expected if check.kind == "tool_arg_equals" else check.value
    if check.kind not in ("tool_arg_equals", "text_contains") or not value:
        return check
    return dataclasses.replace(check, accept=accept_forms(value))


def _action_checks(episode: Episode, dp: Event) -> tuple[Check, ...]:
    ref = dp.reference or {}
    tool = ref.get("tool")
    checks = list(dp.checks)
    if not isinstance(tool, str):
        return tuple(checks)
    checked = {c.argument for c in checks if c.kind == "tool_arg_equals" and c.tool == tool}
    added: list[Check] = []
    for name, value in mattering_arguments(episode, dp).items():
        if name in checked:
            continue
        checks = [c for c in checks if not (c.kind == "text_contains" and c.value == value)]
        added.append(
            Check(
                id="",
                kind="tool_arg_equals",
                tool=tool,
                argument=name,
                expected=value,
                description=f"calls {tool} with {name} = {value}",
            )
        )
    if not added and not any(c.tool == tool and c.kind != "tool_not_called" for c in checks):
        added.append(Check(id="", kind="tool_called", tool=tool, description=f"calls {tool}"))
    merged = added[:1] + checks + added[1:] if added else checks
    return tuple(dataclasses.replace(c, id=f"c{i}") for i, c in enumerate(merged, 1))


def finish(episode: Episode) -> Episode:
    """The episode with positive action checks and accept forms on every decision."""
    events = tuple(
        dataclasses.replace(e, checks=tuple(_with_accept(c) for c in _action_checks(episode, e)))
        if e.type == "decision_point"
        else e
        for e in episode.events
    )
    return dataclasses.replace(episode, events=events)
