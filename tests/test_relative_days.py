"""Relative days (scorer 3.7): what "the Sunday after next" means on a session's day, and
whether a reply's date argument says it (lm_eval_memrisk.episodes.relative_days)."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.relative_days import (
    accepted_days,
    is_relative_day,
    says_day,
    session_day,
)
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.scorer import score

MONDAY = dt.date(2026, 10, 26)


def _d(*days: int, month: int = 11) -> frozenset[dt.date]:
    return frozenset(dt.date(2026, month, d) for d in days)


@pytest.mark.parametrize(("phrase", "today", "days"), [
    ("the Sunday after next", MONDAY, _d(8, 15)),  # the coming Sunday is 1 November
    ("Sunday after next", MONDAY, _d(8, 15)),
    ("next Sunday", MONDAY, _d(1, 8)),
    ("Sunday", MONDAY, _d(1)),
    ("Thursday evening", MONDAY, _d(29, month=10)),
    ("Monday morning", MONDAY, frozenset({MONDAY, dt.date(2026, 11, 2)})),  # today, or a week on
    ("this Friday", MONDAY, _d(30, month=10)),
    ("tomorrow", MONDAY, _d(27, month=10)),
    ("tonight", MONDAY, frozenset({MONDAY})),
    ("the day after tomorrow", MONDAY, _d(28, month=10)),
    ("the first weekend of next month", dt.date(2026, 7, 10), _d(1, 2, month=8)),
    ("the first weekend of next month", dt.date(2026, 10, 26), _d(1, 7, 8)),  # 1 Nov is a Sunday
    ("the first weekend of next month", dt.date(2026, 12, 3), frozenset({dt.date(2027, 1, 2), dt.date(2027, 1, 3)})),
])  # fmt: skip
def test_a_phrase_means_its_readings_on_the_session_day(phrase: str, today: dt.date, days: frozenset[dt.date]) -> None:
    assert accepted_days(phrase, today) == days


@pytest.mark.parametrize("phrase", ["whenever suits", "the 14th", "soon", "Sunday 8 November", ""])
def test_other_words_are_not_resolved(phrase: str) -> None:
    assert not is_relative_day(phrase)


@pytest.mark.parametrize(("got", "ok"), [
    ("the Sunday after next", True),
    ("Sunday after next", True),
    ("Sunday 8 November 2026", True),
    ("2026-11-08", True),
    ("8th of Nov", True),
    ("November 15, 2026", True),
    ("08/11/2026", True),  # day-month
    ("26 October 2026", False),  # the session's own day (a real reply, docs/reader_study/replies_v7_round2)
    ("2026-11-01", False),  # the coming Sunday, not the one after next
    ("8 November 2027", False),
    ("next Sunday", False),
    ("Sunday", False),
    ("Saturday after next", False),
    ("Sunday after next, or 1 November", False),  # every day it names must fit
    ("", False),
])  # fmt: skip
def test_a_reply_says_the_day_or_does_not(got: str, ok: bool) -> None:
    assert says_day(got, "the Sunday after next", MONDAY) is ok


def test_the_part_of_the_day_may_go_and_a_range_names_its_days() -> None:
    assert says_day("Thursday", "Thursday evening", MONDAY)
    assert says_day("Thu evening", "Thursday evening", MONDAY)
    assert not says_day("Fri evening", "Thursday evening", MONDAY)
    assert not says_day("Friday evening", "Thursday evening", MONDAY)
    first_weekend = "the first weekend of next month"
    assert says_day("first weekend of next month (1–2 August 2026)", first_weekend, dt.date(2026, 7, 10))
    assert not says_day("25-26 July 2026", first_weekend, dt.date(2026, 7, 10))
    assert not says_day("2026-11-08", "the Sunday after next", None)  # no session day: a date cannot be checked


def test_the_session_day_is_the_last_header_before_the_decision() -> None:
    ep = next(e for e in load_episodes("v7") if e.id == "R2-medium-03")
    assert session_day(ep, ep.decision_points[-1]) == MONDAY
    assert session_day(ep, ep.events[0]) is None


def _verdict(reply_args: dict[str, str]) -> tuple[bool, list[str]]:
    ep = next(e for e in load_episodes("v7") if e.id == "R2-medium-03")
    dp = ep.decision_points[-1]
    reply = json.dumps({"tool": "book_flight", "arguments": reply_args})
    result = score(ep, trace_from_replies(ep, {dp.id: reply}, "test"))
    failing = [f"{c.check_id}: {c.evidence}" for c in result.checks if c.decision_id == dp.id and not c.passed]
    return not failing, failing


@pytest.mark.parametrize(("date", "ok"), [
    ("the Sunday after next", True), ("Sunday 8 November 2026", True), ("26 October 2026", False), (None, False),
])  # fmt: skip
def test_the_scorer_checks_a_flight_on_the_relative_day(date: str | None, ok: bool) -> None:
    args = {"route": "Leeds to Dublin", "seat": "exit-row aisle seat, row 12"}
    passed, failing = _verdict(args if date is None else {**args, "date": date})
    assert passed is ok, failing
    if not ok and date:
        assert failing == [f"implied-date: book_flight.date: got '{date}', the request says 'the Sunday after next' "
                           "on Monday 26 October 2026"]
