"""Relative days (scorer 3.7): which calendar days a request's "the Sunday after next"
means on the day of its session, and whether a reply's date argument says one of them.

A request such as "book a flight Leeds to Dublin, the Sunday after next" fixes a day
relative to the session's ("Session 6 — Monday 26 October 2026 — signed in as ...").
A reply may keep the words ("the Sunday after next", "Sunday after next") or name the
day ("Sunday 8 November 2026", "2026-11-08", "8 Nov"); where English allows two readings
both are accepted ("next Sunday" on a Monday is the coming Sunday or the one after it).
A reply that names another day (today's, a past one) does not say it: two blind readers
judged such a call wrong (docs/reader_study/replies_v7_round2).  Phrases this module
does not know stay unchecked, as before 3.7.
"""

from __future__ import annotations

import datetime as dt
import re

from lm_eval_memrisk.episodes.normalize import MONTHS, WEEKDAYS
from lm_eval_memrisk.episodes.records import Episode, Event

__all__ = ["accepted_days", "header_date", "is_relative_day", "says_day", "session_day"]

#: Full weekday names, Monday first (``WEEKDAYS`` maps every spelling to its index here).
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD = "|".join(_DAY_NAMES)
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
_PART = r"(?: (?:morning|afternoon|evening|night))?"

_THIS = re.compile(rf"(?:this )?(?P<wd>{_WD}){_PART}")
_NEXT = re.compile(rf"next (?P<wd>{_WD}){_PART}")
_AFTER_NEXT = re.compile(rf"(?P<wd>{_WD}) after next{_PART}")
_FIRST_WEEKEND = re.compile(r"(?:first|1st) weekend of next month")
_FIXED = {"today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
          "tomorrow": 1, "tomorrow morning": 1, "tomorrow afternoon": 1, "tomorrow evening": 1,
          "tomorrow night": 1, "the day after tomorrow": 2}  # fmt: skip

#: A session header's day: "Session 6 — Monday 26 October 2026 — signed in as ...".
_HEADER_DAY = re.compile(rf"\b(\d{{1,2}}) ({_MON})[a-z]* (\d{{4}})\b", re.IGNORECASE)
#: Calendar days a reply names: 2026-11-08; 8 November 2026, 8th of Nov, 1–2 August; November 8, 2026.
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_DMY = re.compile(
    rf"(?<![\d/])(\d{{1,2}})(?:st|nd|rd|th)?(?:\s*[-–—]\s*(\d{{1,2}})(?:st|nd|rd|th)?)?\s+(?:of\s+)?({_MON})\b\.?"
    rf"(?:,?\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_MDY = re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE)
_SLASH = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])")
_WORD = re.compile(r"[a-z]+")

_NOT_KEY = frozenset({"the", "of", "on", "this", "morning", "afternoon", "evening", "night"})


def _phrase(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold().removeprefix("the ")))


def _first_after(today: dt.date, weekday: int, same_day: bool) -> dt.date:
    """The first ``weekday`` on or after ``today`` (``same_day``), else after it."""
    ahead = (weekday - today.weekday()) % 7
    return today + dt.timedelta(days=ahead if ahead or same_day else 7)


def accepted_days(phrase: str, today: dt.date) -> frozenset[dt.date] | None:
    """The days ``phrase`` may mean when said on ``today``; None for a phrase this
    module does not know (or one that names a calendar day itself)."""
    text = " ".join(_WORD.findall(phrase.casefold()))
    if text in _FIXED:
        return frozenset({today + dt.timedelta(days=_FIXED[text])})
    text = _phrase(phrase)
    week = dt.timedelta(days=7)
    if m := _AFTER_NEXT.fullmatch(text):
        first = _first_after(today, WEEKDAYS[m["wd"]], same_day=False)
        return frozenset({first + week, first + 2 * week})
    if m := _NEXT.fullmatch(text):
        first = _first_after(today, WEEKDAYS[m["wd"]], same_day=False)
        return frozenset({first, first + week})
    if m := _THIS.fullmatch(text):
        first = _first_after(today, WEEKDAYS[m["wd"]], same_day=True)
        return frozenset({first, first + week} if first == today else {first})
    if _FIRST_WEEKEND.fullmatch(text):
        start = dt.date(today.year + today.month // 12, today.month % 12 + 1, 1)
        saturday = _first_after(start, 5, same_day=True)
        days = {saturday, saturday + dt.timedelta(days=1)}
        return frozenset(days | ({start} if start.weekday() == 6 else set()))
    return None


def is_relative_day(phrase: str) -> bool:
    """Whether ``phrase`` is a relative day this module resolves ("the Sunday after next")."""
    return not any(ch.isdigit() for ch in phrase) and accepted_days(phrase, dt.date(2026, 1, 1)) is not None


def header_date(text: str) -> dt.date | None:
    """The day a session header names ("Session 6 — Monday 26 October 2026 — ..."); None
    where it names none, or one that is no calendar day (the generator reads its headers
    with it too)."""
    if m := _HEADER_DAY.search(text):
        try:
            return dt.date(int(m[3]), MONTHS[m[2].casefold()], int(m[1]))
        except (KeyError, ValueError):
            return None
    return None


def session_day(episode: Episode, dp: Event) -> dt.date | None:
    """The day of the session ``dp`` is in: the date its last session header names."""
    day = None
    for e in episode.events:
        if e.id == dp.id:
            return day
        if e.type == "scope_switch" and _HEADER_DAY.search(e.text or ""):
            day = header_date(e.text or "")
    return day


Day = tuple[int | None, int, int]
"""(year or None, month, day)."""


def _named_days(text: str) -> list[tuple[Day, ...]]:
    """Every calendar day ``text`` names, each as its readings: one, or a slash date's
    day-month and month-day."""
    out: list[tuple[Day, ...]] = [((int(m[1]), int(m[2]), int(m[3])),) for m in _ISO.finditer(text)]
    rest = _ISO.sub(" ", text)
    for m in _DMY.finditer(rest):
        year = int(m[4]) if m[4] else None
        out += [((year, MONTHS[m[3].casefold()], int(d)),) for d in (m[1], m[2]) if d]
    rest = _DMY.sub(" ", rest)
    for m in _MDY.finditer(rest):
        out.append(((int(m[3]) if m[3] else None, MONTHS[m[1].casefold()], int(m[2])),))
    for m in _SLASH.finditer(_MDY.sub(" ", rest)):
        year = int(m[3]) if m[3] else None
        out.append(((year, int(m[2]), int(m[1])), (year, int(m[1]), int(m[2]))))
    return out


def _one_of(named: Day, days: frozenset[dt.date]) -> bool:
    year, month, day = named
    return any(d.month == month and d.day == day and year in (None, d.year) for d in days)


def says_day(got: str, phrase: str, today: dt.date | None) -> bool:
    """Whether a reply's date argument ``got`` says the day ``phrase`` fixes on ``today``:
    every calendar day it names is one the phrase may mean (a slash date: either
    reading), or it names none and keeps the phrase's words (its weekday, "after next",
    "weekend"; the part of the day may go) and names no other weekday."""
    named = _named_days(got)
    if named:
        days = accepted_days(phrase, today) if today is not None else None
        return days is not None and all(any(_one_of(n, days) for n in readings) for readings in named)
    words = {_DAY_NAMES[WEEKDAYS[w]] if w in WEEKDAYS else w for w in _WORD.findall(got.casefold())}  # "Thu" too
    key = set(_phrase(phrase).split()) - _NOT_KEY
    weekdays = {w for w in words if w in _DAY_NAMES}
    return key <= words and weekdays <= key
