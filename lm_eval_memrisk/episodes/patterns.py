"""``text_regex`` patterns run in linear time (RE2), whatever an episode file holds.

Episode files are untrusted input, so their patterns run on RE2 (the maintained
``google-re2`` bindings), whose matching time is linear in the reply length: no
pattern can hang a run.  RE2 has no look-around or back-references; one shape of
look-ahead is rewritten because the shipped episodes use it:

``(?s)^(?=.*A)(?=.*B)REST`` -> *A occurs* and *B occurs* and ``^REST`` matches,

each part compiled by RE2 on its own (a conjunction of linear searches).  Every other
pattern must compile under RE2 as is; :func:`pattern_problem` names what does not, and
``memrisk validate`` reports it at load time.  Matching is case-insensitive.

A conjunct that is exactly ``\\?`` ("the reply asks a question") is marked
:attr:`Conjunct.asks`; the ``text_regex`` check judges it by what the reply does (see
:func:`lm_eval_memrisk.scoring.checks.asks_user`), not by a question mark.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import re2

__all__ = ["Conjunct", "PatternError", "SafePattern", "asks_about", "compile_pattern", "pattern_problem"]

_ASKS = "\\?"


def asks_about(words: Sequence[str]) -> str:
    """The pattern of "the reply asks the user (R5: or declines) and names one of
    ``words``" (prefix match, case-insensitive), as the generator and the fuzzer write it."""
    alt = "|".join(re.escape(w.lower()) for w in words)
    return rf"(?s)^(?=.*\?)(?=.*\b(?:{alt}))"


class PatternError(ValueError):
    """A pattern that cannot run in linear time (or is not a regular expression)."""


@dataclass(frozen=True)
class Conjunct:
    source: str
    regex: object  # a compiled re2 pattern
    asks: bool = False

    def search(self, text: str) -> str | None:
        m = self.regex.search(text)  # type: ignore[attr-defined]
        return None if m is None else str(m.group(0))


@dataclass(frozen=True)
class SafePattern:
    """A compiled pattern: every conjunct must match."""

    source: str
    conjuncts: tuple[Conjunct, ...]


def _group_end(p: str, start: int) -> int:
    """Index just past the group opening at ``p[start] == '('`` (escapes, classes)."""
    depth, i, in_class = 0, start, False
    while i < len(p):
        ch = p[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if p[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise PatternError("unbalanced parenthesis")


def _re2(source: str, dotall: bool) -> object:
    opts = re2.Options()
    opts.case_sensitive = False
    opts.log_errors = False
    opts.dot_nl = dotall
    try:
        return re2.compile(source, opts)
    except Exception as exc:  # noqa: BLE001 - re2 raises its own error type
        msg = exc.args[0] if exc.args else exc
        msg = msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)
        raise PatternError(f"not supported by RE2 (linear-time matching): {msg}") from None


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> SafePattern:
    """Compile ``pattern`` (see the module docstring); raises :class:`PatternError`."""
    p, dotall = pattern, False
    if p.startswith("(?s)"):
        p, dotall = p[4:], True
    if not p.startswith("^(?="):
        return SafePattern(pattern, (Conjunct(pattern, _re2(p, dotall)),))
    i, conjuncts = 1, []
    while p.startswith("(?=", i):
        end = _group_end(p, i)
        body = p[i + 3 : end - 1]
        if body.startswith(".*"):
            inner = body[2:]
            conjuncts.append(Conjunct(inner, _re2(inner, dotall), asks=inner == _ASKS))
        else:
            conjuncts.append(Conjunct(body, _re2("^" + body, dotall)))
        i = end
    rest = p[i:]
    if rest:
        conjuncts.append(Conjunct(rest, _re2("^" + rest, dotall)))
    return SafePattern(pattern, tuple(conjuncts))


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is rejected, or None when it compiles."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"invalid regular expression: {exc}"
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None
