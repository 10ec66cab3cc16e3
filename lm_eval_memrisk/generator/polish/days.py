"""Session days: the day a session header names, the header moved to another day, and
the families whose notes are days themselves."""

from __future__ import annotations

import datetime as dt
import re

from lm_eval_memrisk.episodes.relative_days import header_date

#: Families whose note's value is a day (a deadline): their sessions keep their days.
DATE_FAMILIES = frozenset({"deadline"})
#: A session header's day, as the generator writes it (:func:`with_day` rewrites it).
_HEADER_DATE = re.compile(r"— (?P<wd>[A-Z][a-z]+day) (?P<d>\d{1,2}) (?P<m>[A-Z][a-z]+) (?P<y>\d{4}) —")
#: The day a session header names ("Session 3 — Sunday 12 April 2026 — …"), if any: the
#: scorer's reading (the same day on every header of the packaged datasets v1..v9).
header_day = header_date


def with_day(text: str, day: dt.date) -> str:
    """Session header ``text`` naming ``day`` instead (its weekday too)."""
    return _HEADER_DATE.sub(f"— {day:%A} {day.day} {day:%B} {day.year} —", text, count=1)
