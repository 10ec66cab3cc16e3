"""Value normalisation for argument equality and memory-usage detection.

:func:`normalize` maps a string to a canonical token sequence.  One *pass* does, in
order:

1. Unicode NFKC, lowercase, NFKC again (lowercasing can denormalise a few chars).
2. **Dates** (a year is required) -> ISO ``YYYY-MM-DD``:
   ``2026-03-05``, ``2026/03/05``, ``2026.03.05`` (numeric dates only in year-month-day
   order: ``03/05/2026`` is ambiguous and left alone), ``5 March 2026``,
   ``5th March 2026``, ``5 of March, 2026``, ``March 5, 2026``, ``Mar 5 2026``,
   ``Sept. 5th 2026``.  Impossible dates (``2026-02-30``) are not converted.
3. **Times** -> 24-hour ``HH:MM``: ``3pm``, ``3 p.m.``, ``3:00 PM``, ``12am`` (00:00),
   ``15:00``, ``9:30`` (09:30); ``15:00:00`` -> ``15:00`` (non-zero seconds are kept:
   ``15:00:30``).
4. **Phone numbers**: a run of ASCII digits joined by up to 3 separators from
   ``space - . ( )``, optionally starting with ``+`` or ``(``, with at least 7 digits
   -> digits only (``+1 (555) 123-4567`` -> ``15551234567``).  Like the rule says,
   any such run counts, so ``1234 5678`` -> ``12345678``; an ambiguous
   ``03/05/2026`` is not a date but, once its slashes are blanked, such a run
   (``03052026``).
5. Every other character that is not a letter, digit or combining mark (Unicode
   categories L*, N*, M*) -> space; whitespace is collapsed and the ends stripped.
   The hyphens of ISO dates and the colons of times survive.

``|`` is a hard boundary (scorer 3.2): the text is split at every ``|``, each part is
normalised alone and the non-empty parts are joined with `` | ``.  A tool call's
arguments are joined with `` | `` (:attr:`~lm_eval_memrisk.episodes.trace.Action.content`),
so a number that ends one argument ("at number 12.") never merges with a phone number
that starts the next.

Word dates and 12-hour times may be separated by up to 4 non-alphanumeric chars
(``5 (March) 2026``).  Because step 5 can create new matches
(``555_1234`` -> ``555 1234``), :func:`normalize` repeats the pass until the text
stops changing, so ``normalize(normalize(x)) == normalize(x)``.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from typing import Any

__all__ = ["MONTHS", "WEEKDAYS", "contains_value", "normalize", "values_equal"]

#: Private-use char that stands in for a date/time token during a pass.
_PH = "\ue000"
#: Upper bound on passes; after the first, each changing pass merges tokens.
_MAX_PASSES = 16

#: Month names and their abbreviations -> month number (also read by :mod:`.relative_days`).
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
    "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
    "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9, "october": 10,
    "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
#: Weekday names and their abbreviations -> weekday number, Monday 0 (read by
#: :mod:`.relative_days` and :mod:`lm_eval_memrisk.scoring.equivalence`).
WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
_NA = r"(?<![^\W_])"  # not preceded by a letter/digit
_NZ = r"(?![^\W_])"  # not followed by a letter/digit
_SEP = r"[\W_]{1,4}"  # separator between date parts
_ORD = r"(?:st|nd|rd|th)?"

_TOKEN_RE = re.compile(
    rf"""
    {_NA}(?P<dmy_d>[0-9]{{1,2}}){_ORD}(?:{_SEP}of)?{_SEP}(?P<dmy_m>{_MON}){_SEP}
        (?P<dmy_y>[0-9]{{4}}){_NZ}
  | {_NA}(?P<mdy_m>{_MON}){_SEP}(?P<mdy_d>[0-9]{{1,2}}){_ORD}{_SEP}(?P<mdy_y>[0-9]{{4}}){_NZ}
  | {_NA}(?P<ymd_y>[0-9]{{4}})(?P<sep>[-/.])(?P<ymd_m>0?[1-9]|1[0-2])(?P=sep)
        (?P<ymd_d>0?[1-9]|[12][0-9]|3[01]){_NZ}
  | {_NA}(?P<h12>1[0-2]|0?[1-9])(?::(?P<m12>[0-5][0-9]))?[\W_]{{0,4}}?(?P<ap>[ap])\.?m{_NZ}\.?
  | (?<![^\W_:])(?P<h24>[01]?[0-9]|2[0-3]):(?P<m24>[0-5][0-9])(?::(?P<s24>[0-5][0-9]))?
        (?![0-9:])
    """,
    re.VERBOSE,
)
_PHONE_RE = re.compile(r"(?<![^\W_])\+?\(?[0-9](?:[ \-.()]{0,3}[0-9])+")
_JUNK_RE = re.compile(rf"[^\w{_PH}]|_")
_DIGITS_RE = re.compile(r"[^0-9]")
_ANY_DIGIT = re.compile(r"[0-9]")


def _date(y: str, m: int, d: str) -> str | None:
    try:
        return _dt.date(int(y), m, int(d)).isoformat()
    except ValueError:
        return None


def _token(m: re.Match[str]) -> str | None:
    """The canonical date/time for a match of :data:`_TOKEN_RE`, or None if invalid."""
    g = m.groupdict()
    if g["dmy_d"] is not None:
        return _date(g["dmy_y"], MONTHS[g["dmy_m"]], g["dmy_d"])
    if g["mdy_d"] is not None:
        return _date(g["mdy_y"], MONTHS[g["mdy_m"]], g["mdy_d"])
    if g["ymd_y"] is not None:
        return _date(g["ymd_y"], int(g["ymd_m"]), g["ymd_d"])
    if g["h12"] is not None:
        hour = int(g["h12"]) % 12 + (12 if g["ap"] == "p" else 0)
        return f"{hour:02d}:{g['m12'] or '00'}"
    secs = g["s24"]
    tail = f":{secs}" if secs not in (None, "00") else ""
    return f"{int(g['h24']):02d}:{g['m24']}{tail}"


def _junk_to_space(m: re.Match[str]) -> str:
    ch = m.group()
    return ch if unicodedata.category(ch).startswith("M") else " "


def _phone(m: re.Match[str]) -> str:
    digits = _DIGITS_RE.sub("", m.group())
    return digits if len(digits) >= 7 else m.group()


def _one_pass(text: str) -> str:
    s = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).lower())
    s = s.replace(_PH, " ")
    tokens: list[str] = []

    def stash(m: re.Match[str]) -> str:
        tok = _token(m)
        if tok is None:
            return m.group()
        tokens.append(tok)
        return f" {_PH} "

    if _ANY_DIGIT.search(s):  # dates, times and phone numbers all need a digit
        s = _TOKEN_RE.sub(stash, s)
        s = _PHONE_RE.sub(_phone, s)
    # ASCII text has no combining marks: skip the per-character callback
    s = " ".join((_JUNK_RE.sub(" ", s) if s.isascii() else _JUNK_RE.sub(_junk_to_space, s)).split())
    if tokens:
        parts = s.split(_PH)
        s = parts[0] + "".join(t + p for t, p in zip(tokens, parts[1:]))
    return s


def normalize(text: str) -> str:
    """Canonical form of ``text`` (see the module docstring); idempotent."""
    s = text if isinstance(text, str) else str(text)
    if "|" in s:  # a hard boundary: each part alone (scorer 3.2)
        return " | ".join(p for p in (normalize(part) for part in s.split("|")) if p)
    for _ in range(_MAX_PASSES):
        nxt = _one_pass(s)
        if nxt == s:
            break
        s = nxt
    return s


def contains_value(haystack: str, needle: str) -> bool:
    """Whether normalised ``needle`` is non-empty and occurs in normalised
    ``haystack`` on token boundaries."""
    n = normalize(needle)
    return bool(n) and f" {n} " in f" {normalize(haystack)} "


def values_equal(a: Any, b: Any) -> bool:
    """Argument equality: ``normalize(str(a)) == normalize(str(b))``; None -> False."""
    if a is None or b is None:
        return False
    return normalize(str(a)) == normalize(str(b))
