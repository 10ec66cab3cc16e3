"""Fresh memory values that keep clear of every other value of an episode.

A new value is made by perturbing a value of the same kind (digit runs get new
digits, words get pool words), so it keeps the look of the family's values.  Dates
("Monday 18 May 2026") get a new real day of the same month with its true weekday,
and clock times ("14:30") a new valid time, so no fresh value is impossible
(:func:`plausible` rejects any that would be).  A
candidate is accepted only when, after :func:`lm_eval_memrisk.episodes.normalize.normalize`,
it neither contains nor is contained in any value already in the episode (on token
boundaries), so memory-use detection can tell the values apart.
"""

from __future__ import annotations

import calendar
import datetime
import random
import re
from collections.abc import Iterable

from lm_eval_memrisk.episodes.normalize import contains_value, normalize
from lm_eval_memrisk.fuzz import pools

_DIGITS = re.compile(r"[0-9]+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_TRIES = 24
_MONTHS = {name: n for n, name in enumerate(calendar.month_name) if name}
_WEEKDAYS = "|".join(calendar.day_name)
_DATE = re.compile(rf"\b(?:({_WEEKDAYS}),? )?(\d{{1,2}}) ({'|'.join(_MONTHS)}) (\d{{4}})\b")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")


def plausible(value: str) -> bool:
    """Whether every date and clock time in ``value`` exists (weekday included)."""
    for m in _DATE.finditer(value):
        try:
            day = datetime.date(int(m.group(4)), _MONTHS[m.group(3)], int(m.group(2)))
        except ValueError:
            return False
        if m.group(1) and calendar.day_name[day.weekday()] != m.group(1):
            return False
    return all(int(h) < 24 and int(mi) < 60 for h, mi in _TIME.findall(value))


def _new_date(rng: random.Random, m: re.Match[str]) -> str:
    year, month = int(m.group(4)), _MONTHS[m.group(3)]
    day = datetime.date(year, month, rng.randint(1, 28))
    text = f"{day.day} {m.group(3)} {year}"
    return f"{calendar.day_name[day.weekday()]} {text}" if m.group(1) else text


def _new_time(rng: random.Random, m: re.Match[str]) -> str:
    hour, minute = rng.randint(7, 19), rng.choice((0, 15, 30, 45))
    return f"{hour:0{len(m.group(1))}d}:{minute:02d}"


def clashes(value: str, others: Iterable[str]) -> bool:
    """Whether ``value`` equals, contains or is contained in any of ``others``."""
    n = normalize(value)
    if not n:
        return True
    for other in others:
        if contains_value(value, other) or contains_value(other, value):
            return True
    return False


def _new_digits(rng: random.Random, run: str) -> str:
    if len(run) == 4 and run[:2] in ("19", "20"):
        return run  # keep years
    first = "0" if run[0] == "0" else str(rng.randint(1, 9))
    return first + "".join(str(rng.randint(0, 9)) for _ in run[1:])


def _new_word(rng: random.Random, word: str) -> str:
    pool = pools.WORDS_CAP if word[0].isupper() else pools.WORDS_LOW
    return rng.choice(pool)


def perturb(rng: random.Random, like: str) -> str:
    """A value shaped like ``like``: a new date or time, new digits, or one new word."""
    if _DATE.search(like) or _TIME.search(like):
        out = _DATE.sub(lambda m: _new_date(rng, m), like)
        return _TIME.sub(lambda m: _new_time(rng, m), out)
    if _DIGITS.search(like):
        return _DIGITS.sub(lambda m: _new_digits(rng, m.group()), like)
    words = list(_WORD.finditer(like))
    if not words:
        return f"{like} {rng.choice(pools.WORDS_LOW)}"
    m = words[rng.randrange(len(words))]
    return like[: m.start()] + _new_word(rng, m.group()) + like[m.end() :]


def fresh_value(rng: random.Random, like: str, taken: Iterable[str]) -> str | None:
    """A new value shaped like ``like`` that clashes with none of ``taken`` (None: gave up)."""
    others = sorted(set(taken) | {like})
    for attempt in range(_TRIES):
        candidate = perturb(rng, like)
        if attempt >= _TRIES // 2:  # a second word change widens the search
            candidate = perturb(rng, candidate)
        if plausible(candidate) and not clashes(candidate, others):
            return candidate
    return None
