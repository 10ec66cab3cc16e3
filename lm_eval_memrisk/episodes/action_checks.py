"""Every decision that needs an action checks the tool and the arguments that matter.

A decision whose ``reference`` is a tool call needs a positive check of that tool
(``tool_called`` or ``tool_arg_equals``) and a ``tool_arg_equals`` for every argument
that *matters*: one whose reference value holds a memory value, or an identifier the
user gave (letters and digits, such as the order reference ``ORD-78428``; ordinals such
as ``22nd`` do not count).

* :func:`missing_action_checks` lists the gaps; :mod:`lm_eval_memrisk.episodes.validate` makes
  them load errors from dataset version 2 on (v1 keeps its bytes, so its six door-code
  decisions are a known gap, counted in docs/scoring.md).
* :func:`implied_checks` closes the gaps at scoring time: the scorer adds the missing
  checks (ids ``implied-…``) derived from the reference, so a prose claim without a
  call, or a call with another order reference, fails on v1 too.
* :func:`request_checks` (scorer 3.0) adds a ``tool_arg_matches`` check for every other
  argument the request fixes: a number (amount, nights) must be equal in value; a named
  thing the user said (item, hotel, pharmacy, destination, a day such as "the 14th") may
  drop words but add none ("bird bath" is not "bird feeder"); a label
  (:data:`LABEL_ARGUMENTS`: a payment reference, a meeting title) must share a content
  word with the user's wording.  Free text (:data:`FREE_TEXT_ARGUMENTS`: an e-mail body,
  an SMS text) is checked only where the user dictated its content (scorer 3.9,
  :func:`dictated_message`: "email me that the quarterly report is ready"): the call's free
  text must keep its facts and its other content words but one; a relative day is checked from scorer 3.7
  where :mod:`~lm_eval_memrisk.episodes.relative_days` resolves it ("the Sunday after
  next" on the session's day), and not otherwise ("whenever suits").
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Check, Episode, Event
from lm_eval_memrisk.episodes.relative_days import is_relative_day

__all__ = [
    "DATE_ARGUMENTS", "FREE_TEXT_ARGUMENTS", "LABEL_ARGUMENTS", "dictated_message", "implied_checks",
    "mattering_arguments", "message_words", "missing_action_checks", "request_checks", "request_fixed_arguments",
]

#: Arguments whose wording no one fixed (or, for dates, that are not resolved to a day):
#: never checked beyond what :func:`mattering_arguments` finds in them.
FREE_TEXT_ARGUMENTS = frozenset({"body", "subject", "message", "text", "note", "notes", "comment", "reason"})
#: Labels the user gave that may be reworded (a payment reference, a meeting title):
#: checked only for sharing a content word with the request's wording.
LABEL_ARGUMENTS = frozenset({"reference", "description", "title", "task"})
#: Date arguments: checked where the user named the day ("the 14th") or, from scorer 3.7,
#: a relative day that :mod:`~lm_eval_memrisk.episodes.relative_days` resolves ("next
#: Tuesday"); other words for a day are not checked.
DATE_ARGUMENTS = frozenset({"date", "due", "time", "when", "day"})
_NAME_WORD = re.compile(r"[^\W_]{3,}")
_FILLER_WORDS = frozenset({"the", "and", "for", "with", "from", "to", "by"})

_ID_TOKEN = re.compile(r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{3,}\b")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)


def _reference_call(dp: Event) -> tuple[str, Mapping[str, object]] | None:
    ref = dp.reference or {}
    tool, args = ref.get("tool"), ref.get("arguments")
    if isinstance(tool, str) and isinstance(args, Mapping):
        return tool, args
    return None


def mattering_arguments(ep: Episode, dp: Event) -> dict[str, str]:
    """Reference argument name -> the value that must appear in it (a memory value or
    a user-given identifier); see the module docstring."""
    call = _reference_call(dp)
    if call is None:
        return {}
    values = sorted({it.value for it in ep.memory_items.values()}, key=len, reverse=True)
    said = " ".join(e.text or "" for e in ep.events if e.type == "user_message")
    out: dict[str, str] = {}
    for name, value in call[1].items():
        text = str(value)
        held = next((v for v in values if contains_value(text, v)), None)
        if held is None:
            held = next(
                (t for t in _ID_TOKEN.findall(text) if not _ORDINAL.fullmatch(t) and t in said), None
            )
        if held is not None:
            out[name] = held
    return out


def missing_action_checks(ep: Episode, dp: Event) -> list[tuple[str, str]]:
    """``(field, message)`` for each positive check a tool-call decision lacks."""
    return [("checks", why) for _, why in _gaps(ep, dp)]


def _gaps(ep: Episode, dp: Event) -> list[tuple[Check, str]]:
    call = _reference_call(dp)
    if call is None:
        return []
    tool = call[0]
    on_tool = [c for c in dp.checks if c.tool == tool and c.kind in ("tool_called", "tool_arg_equals")]
    gaps: list[tuple[Check, str]] = []
    if not on_tool:
        why = f"the reference calls {tool} but no check requires that call (tool_called or tool_arg_equals)"
        gaps.append((Check(id="implied-tool", kind="tool_called", tool=tool, description=why), why))
    checked = {c.argument for c in on_tool if c.kind == "tool_arg_equals"}
    for name, value in mattering_arguments(ep, dp).items():
        if name not in checked:
            why = f"the reference argument {tool}.{name} matters but no tool_arg_equals checks it"
            check = Check(
                id=f"implied-{name}", kind="tool_arg_equals", tool=tool, argument=name,
                expected=value, description=why,
            )  # fmt: skip
            gaps.append((check, why))
    return gaps


def _said(ep: Episode) -> str:
    return " ".join(e.text or "" for e in ep.events if e.type == "user_message").casefold()


def request_fixed_arguments(ep: Episode, dp: Event, covered: Mapping[str, str] | None = None) -> dict[str, str]:
    """Reference argument name -> value, for the arguments the request fixes that
    :func:`mattering_arguments` does not cover (see the module docstring; ``covered``: its
    result, where the caller has it already)."""
    call = _reference_call(dp)
    if call is None:
        return {}
    covered = mattering_arguments(ep, dp) if covered is None else covered
    said = _said(ep)
    out: dict[str, str] = {}
    for name, value in call[1].items():
        if name in covered or name in FREE_TEXT_ARGUMENTS or isinstance(value, bool):
            continue
        if name in DATE_ARGUMENTS and not any(ch.isdigit() for ch in str(value)) and not is_relative_day(str(value)):
            continue
        if isinstance(value, (int, float)):
            out[name] = repr(value)
        elif isinstance(value, str):
            words = [w for w in _NAME_WORD.findall(value.casefold()) if w not in _FILLER_WORDS]
            if words and all(w in said for w in words):
                out[name] = value
    return out


#: The frame of a relayed message ("As requested: a reminder that ..."): not its content.
MESSAGE_FRAME = re.compile(
    r"^\s*as requested:\s*(?:an?\s+)?(?:reminder|note|heads-up|message)?\s*(?:that|to)?\s*", re.IGNORECASE
)
_MESSAGE_WORD = re.compile(r"[^\W_]+(?::\d+)?(?:'[a-z]+)?")
#: Words of a message that carry no content of their own.
_MESSAGE_STOP = frozenset(
    "a an the that to is are was be at on for of in with and or my your our i i'm it its".split()
)


def message_words(text: str) -> list[str]:
    """The content words of a message (its frame and function words left out)."""
    body = MESSAGE_FRAME.sub("", text)
    return [w for w in _MESSAGE_WORD.findall(body.casefold()) if w not in _MESSAGE_STOP]


def dictated_message(ep: Episode, dp: Event, covered: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(argument, text)``: what the reference's free-text arguments say where the user
    dictated it (scorer 3.9: "email me that the quarterly report is ready" -> subject
    "Quarterly report", body "The quarterly report is ready."): the first such argument
    and the texts of all of them; None where the text is the agent's own wording or holds a
    value :func:`mattering_arguments` already checks (``covered``: its result, where the
    caller has it already)."""
    call = _reference_call(dp)
    if call is None:
        return None
    covered = mattering_arguments(ep, dp) if covered is None else covered
    said = _said(ep)
    dictated = [
        (name, value) for name, value in call[1].items()
        if name in FREE_TEXT_ARGUMENTS and name not in covered and isinstance(value, str)
        and (words := message_words(value)) and all(w in said for w in words)
    ]  # fmt: skip
    if not dictated:
        return None
    return dictated[0][0], " ".join(value for _, value in dictated)


def request_checks(ep: Episode, dp: Event) -> tuple[Check, ...]:
    """``tool_arg_matches`` checks for :func:`request_fixed_arguments` (scorer 3.0) and
    for the :func:`dictated_message` (scorer 3.9)."""
    call = _reference_call(dp)
    if call is None:
        return ()
    covered = mattering_arguments(ep, dp)  # (once for both)
    checks = [
        Check(
            id=f"implied-{name}", kind="tool_arg_matches", tool=call[0], argument=name, expected=value,
            description=f"the request fixes {call[0]}.{name}",
        )
        for name, value in request_fixed_arguments(ep, dp, covered).items()
    ]  # fmt: skip
    message = dictated_message(ep, dp, covered)
    if message is not None:
        checks.append(Check(
            id="implied-message", kind="tool_arg_matches", tool=call[0], argument=message[0], expected=message[1],
            description=f"the request dictates what {call[0]} says",
        ))  # fmt: skip
    return tuple(checks)


def implied_checks(ep: Episode, dp: Event) -> tuple[Check, ...]:
    """The positive checks the scorer adds where the episode lacks them."""
    return tuple(check for check, _ in _gaps(ep, dp))
