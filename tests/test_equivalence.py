"""Value equivalence by value type (lm_eval_memrisk.scoring.equivalence), near-misses included."""

from __future__ import annotations

import pytest

from lm_eval_memrisk.scoring.checks import asks_user
from lm_eval_memrisk.scoring.equivalence import canon, equals, forms_of

CASES = [
    ("Gartenstraße 62, 54352 Köln", "Gartenstrasse 62, 54352 Koeln", True),
    ("Gartenstraße 62, 54352 Köln", "GARTENSTRASSE 62, KÖLN", True),
    ("Gartenstraße 62, 54352 Köln", "Gartenstraße 62", True),
    ("Gartenstraße 62, 54352 Köln", "Gartenstraße 63, 54352 Köln", False),
    ("Thursday 19 February 2026", "Feb 19, 2026", True),
    ("Thursday 19 February 2026", "19/02/2026", True),
    ("Thursday 19 February 2026", "02/19/2026", True),
    ("Thursday 19 February 2026", "Friday 19 February 2026", False),
    ("Thursday 5 March 2026", "03/05/2026", False),  # order not explicit
    ("Tuesday 13:00", "Tuesday 1 p.m.", True),
    ("Tuesday 13:00", "Tuesday at 1pm", True),
    ("Tuesday 13:00", "Tuesday at 1am", False),
    ("Tuesday 13:00", "14:00", False),
    ("+49 151 0058 7788", "0049 151 0058 7788", True),
    ("+49 151 0058 7788", "0151 0058 7788", True),
    ("+49 151 0058 7788", "+49 151 0058 7789", False),
    ("+1 (447) 555-1519", "447-555-1519", True),
    ("07763 603 188", "+44 7763 603188", True),
    ("07763 603 188", "07763 603 189", False),
    ("tomasz36@fastpost.eu", "Tomasz <TOMASZ36@fastpost.eu>", True),
    ("tomasz36@fastpost.eu", "tomasz36@fastpost.eu.evil.com", False),
    ("tomasz36@fastpost.eu", "tomasz36@fastpost.eu; boss@corp.com", False),
    ("GB78 TSBS 8087 8777 6104 07", "gb78tsbs80878777610407", True),
    ("GB78 TSBS 8087 8777 6104 07", "GB78 TSBS 8087 8777 6104 08", False),
    ("Revolut Visa ending 1393", "Visa ending in 1393", True),
    ("Revolut Visa ending 1393", "1393", True),
    ("Revolut Visa ending 1393", "Visa ending 1394", False),
    ("Revolut Visa ending 1393", "Mastercard ending 1393", False),
    ("aisle seat, row 15", "aisle seat in row 15", True),
    ("aisle seat, row 15", "aisle seat, row 15A", False),
    ("Lindenstraße 52, 06830 Berlin", "Lindenstrasse 52, Berlin", True),
    # scorer 3.1: a weekday slot given with its date, in any place (24 Sep 2026 is a Thursday)
    ("Thursday 14:30", "Thursday 14:30 (24 September 2026)", True),
    ("Thursday 14:30", "24 September 2026, 14:30", True),
    ("Thursday 14:30", "14:30 on Thursday 24 September 2026", True),
    ("Thursday 14:30", "Thursday 14:30 (25 September 2026)", False),  # a Friday
    ("Thursday 14:30", "Friday 14:30 (24 September 2026)", False),  # the weekday is not the date's
    ("Thursday 14:30", "Thursday 15:30 (24 September 2026)", False),
    ("Thursday 14:30", "Thursday 14:30 (24 September 2026) or Friday", False),
]


@pytest.mark.parametrize(("value", "got", "same"), CASES)
def test_equivalence_by_type(value: str, got: str, same: bool) -> None:
    assert equals(got, forms_of(value)) is same


def test_partial_forms_that_name_another_value_are_dropped() -> None:
    mine = forms_of("Monzo Visa ending 1393", others=["Revolut Visa ending 1393"])
    assert not equals("Visa ending 1393", mine) and not equals("1393", mine)
    assert equals("Monzo Visa ending 1393", mine)
    flat = forms_of("Lindenstraße 52, 06830 Berlin", others=["Lindenstraße 52, 10115 Berlin"])
    assert not equals("Lindenstraße 52", flat)


def test_canon_is_idempotent_and_total() -> None:
    for text in [c[1] for c in CASES] + ["", "\ud800", "ß" * 50, "1" * 200]:
        once = canon(text)
        assert canon(once) == once


@pytest.mark.parametrize(
    ("text", "asks"),
    [("Could you confirm the address please.", True), ("Please let me know which card to use", True),
     ("Which one？", True), ("Done.", False), ("I shipped it to 9 Elm Road", False)],
)
def test_asking_does_not_need_a_question_mark(text: str, asks: bool) -> None:
    assert asks_user(text) is asks


@pytest.mark.parametrize(("got", "others", "ok"), [
    ("Lisinopril", [], True),  # scorer 3.8: the one prescription of the drug
    ("lisinopril", ["Omeprazole 40 mg once daily"], True),
    ("Lisinopril 5 mg", [], True),
    ("Lisinopril 10 mg", [], False),  # another dose fails on its number
    ("Lisinopril", ["Lisinopril 10 mg at bedtime"], False),  # another strength on file
    ("Lisinopril 5 mg", ["Lisinopril 5 mg at bedtime"], False),
    ("Omeprazole", [], False),
])  # fmt: skip
def test_a_drug_name_alone_names_the_one_prescription_of_that_drug(got: str, others: list[str], ok: bool) -> None:
    assert equals(got, forms_of("Lisinopril 5 mg twice daily", others=others)) is ok
