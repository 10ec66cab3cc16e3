"""Golden tables and properties for lm_eval_memrisk.episodes.normalize."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lm_eval_memrisk.episodes.normalize import contains_value, normalize, values_equal

CASE_UNICODE_WS = [
    ("Hello World", "hello world"),
    ("  HELLO\t\n  world  ", "hello world"),
    ("ＡＢＣ １２３", "abc 123"),  # full-width -> ASCII (NFKC)
    ("ﬁle", "file"),  # ligature
    ("Café", "café"),
    ("Cafe\u0301", "café"),  # combining accent composed
    ("Straße", "straße"),
    ("", ""),
    ("   ", ""),
]

CASE_PUNCT = [
    ("14 Birch Lane, Leeds.", "14 birch lane leeds"),
    ("address: 9 Elm Rd!", "address 9 elm rd"),
    ("a_b@x.com", "a b x com"),
    ("O'Brien", "o brien"),
    ("“quoted” — text…", "quoted text"),
    ("$100 + 5%", "100 5"),
    ("e-mail", "e mail"),
    ("3.5 kg", "3 5 kg"),
]

CASE_DATES = [
    ("2026-03-05", "2026-03-05"),
    ("2026/03/05", "2026-03-05"),
    ("2026/3/5", "2026-03-05"),
    ("2026.03.05", "2026-03-05"),
    ("5 March 2026", "2026-03-05"),
    ("5th March 2026", "2026-03-05"),
    ("5 of March, 2026", "2026-03-05"),
    ("March 5, 2026", "2026-03-05"),
    ("march 5 2026", "2026-03-05"),
    ("Mar 5 2026", "2026-03-05"),
    ("Sept. 21st, 2026", "2026-09-21"),
    ("1 Dec 2025", "2025-12-01"),
    ("5 (March) 2026", "2026-03-05"),
    ("due on 5 March 2026, ok", "due on 2026-03-05 ok"),
    ("5 March", "5 march"),  # no year: not a date
    ("May I help", "may i help"),
    ("2026-02-30", "20260230"),  # impossible date: only the digit-run rule applies
    ("03/05/2026", "03052026"),  # ambiguous day/month order: not converted to ISO
    ("2026-13-01", "20261301"),
]

CASE_TIMES = [
    ("3pm", "15:00"),
    ("3 PM", "15:00"),
    ("3 p.m.", "15:00"),
    ("3:00 PM", "15:00"),
    ("3:30pm", "15:30"),
    ("11am", "11:00"),
    ("12am", "00:00"),
    ("12pm", "12:00"),
    ("15:00", "15:00"),
    ("9:30", "09:30"),
    ("15:00:00", "15:00"),
    ("15:00:30", "15:00:30"),
    ("at 3pm on 5 March 2026", "at 15:00 on 2026-03-05"),
    ("I am 3 amazing", "i am 3 amazing"),
    ("25:00", "25 00"),
]

CASE_PHONES = [
    ("+1 (555) 123-4567", "15551234567"),
    ("555-123-4567", "5551234567"),
    ("555.123.4567.", "5551234567"),
    ("(020) 7946 0958", "02079460958"),
    ("+44 20 7946 0958", "442079460958"),
    ("call 555 1234 now", "call 5551234 now"),
    ("555_1234", "5551234"),
    ("12-34-56", "12 34 56"),  # 6 digits: not a phone
    ("order 123456", "order 123456"),
]

GOLDEN = CASE_UNICODE_WS + CASE_PUNCT + CASE_DATES + CASE_TIMES + CASE_PHONES


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_normalize_golden(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(("text", "expected"), GOLDEN)
def test_normalize_golden_idempotent(text: str, expected: str) -> None:
    assert normalize(expected) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("2026-03-05", "March 5, 2026"),
        ("5th March 2026", "2026/03/05"),
        ("3pm", "15:00"),
        ("+1 (555) 123-4567", "1-555-123-4567"),
        ("9 Elm Rd.", "9 elm rd"),
    ],
)
def test_equivalent_forms(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(
    ("haystack", "needle", "expected"),
    [
        ("Shipping to 14 Birch Lane, Leeds.", "14 birch lane", True),
        ("Shipping to 14 Birch Lane, Leeds.", "Birch Lane, Leeds", True),
        ("Shipping to 114 Birch Lane", "14 Birch Lane", False),  # token boundary
        ("birchlane", "birch", False),
        ("meeting on March 5, 2026 at 3pm", "2026-03-05", True),
        ("meeting on March 5, 2026 at 3pm", "15:00", True),
        ("call +1 (555) 123-4567", "555-123-4567", False),  # digit run differs
        ("call +1 (555) 123-4567", "1 555 123 4567", True),
        ("anything", "", False),
        ("anything", "!!!", False),  # normalises to empty
        ("", "x", False),
    ],
)
def test_contains_value(haystack: str, needle: str, expected: bool) -> None:
    assert contains_value(haystack, needle) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("9 Elm Rd", "9 elm rd.", True),
        ("9 Elm Rd", "address: 9 Elm Rd", False),
        (" 2026-03-05", "5 March 2026", True),
        (3, "3", True),
        (True, "true", True),
        (None, "None", False),
        ("None", None, False),
        (None, None, False),
        ("a", "b", False),
    ],
)
def test_values_equal(a: object, b: object, expected: bool) -> None:
    assert values_equal(a, b) is expected


def test_non_str_input_is_coerced() -> None:
    assert normalize(12345) == "12345"  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_idempotent_on_arbitrary_text(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


_DATEY = st.lists(
    st.sampled_from(
        ["5", "05", "2026", "3", "12", "march", "mar", "may", "pm", "am", "th", ":", "/", "-",
         ".", " ", ",", "(", ")", "+", "_", "555", "1234", "of", "15:00", "a.m."]
    ),
    max_size=14,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_DATEY)
def test_idempotent_on_date_time_phone_fragments(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


_TOKEN_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{2}:[0-9]{2}(?::[0-9]{2})?")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_output_alphabet(text: str) -> None:
    """Letters, digits, marks, ISO dates and times, and "|" (a hard boundary since
    scorer 3.2), one space apart."""
    out = normalize(text)
    if not out:
        return
    for token in out.split(" "):
        assert token, "whitespace must be collapsed"
        assert token == "|" or _TOKEN_RE.fullmatch(token) or all(
            unicodedata.category(ch)[0] in "LNM" for ch in token
        ), token


def test_a_bar_is_a_hard_boundary() -> None:
    """Scorer 3.2: a tool call's arguments are joined with " | "; a number that ends one
    argument never joins the phone number that starts the next."""
    assert normalize("at number 12. | +49 151 7282 1854") == "at number 12 | 4915172821854"
    assert normalize("a || b") == "a | b"
    assert normalize(" | ") == ""
    assert not contains_value("at number 12. | +49 151 7282 1854", "12 4915172821854")
    assert contains_value("at number 12. | +49 151 7282 1854", "+49 151 7282 1854")
