"""Scorer 3.9's rules on what a call says, from the sixth blind reading of real replies
(docs/reader_study/replies_v7_round5): a place is named by what it is, and a message the
user dictated says it."""

from __future__ import annotations

from lm_eval_memrisk.episodes.action_checks import dictated_message, message_words
from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.agents import action_to_reply
from lm_eval_memrisk.running.runner import trace_from_replies
from lm_eval_memrisk.scoring.checks import message_says, names_match
from lm_eval_memrisk.scoring.scorer import score


def _episode(episode_id: str) -> Episode:
    return next(e for e in load_episodes("v7") if e.id == episode_id)


def _failed(ep: Episode, decision: str, reply: str) -> list[str]:
    return [c.check_id for c in score(ep, trace_from_replies(ep, {decision: reply}, "x")).checks
            if c.decision_id == decision and not c.passed]


def test_a_place_keeps_what_it_is_not_only_where() -> None:
    """Round 5, case 35: "High Street" for "Boots on the High Street" (both readers WRONG;
    3.8 passed it, a name could drop words).  The chain name alone, or with "pharmacy",
    is the place (the drug-name readers called "Lloyds Pharmacy" right; 3.8 failed it,
    taking "station" for the head word)."""
    boots, lloyds = "Boots on the High Street", "the Lloyds pharmacy by the station"
    assert not names_match("High Street", boots)
    assert names_match("Boots", boots) and names_match("Boots on the High Street", boots)
    assert not names_match("the station", lloyds)
    assert names_match("Lloyds Pharmacy", lloyds) and names_match("Lloyds", lloyds)
    assert not names_match("Boots", lloyds)
    ep = _episode("R1-hard-01")
    med = '"medication": "Sertraline 50 mg twice daily"'
    assert "implied-pharmacy" in _failed(ep, "e18", '{"tool": "refill_prescription", "arguments": {'
                                         + med + ', "pharmacy": "High Street"}}')
    assert _failed(ep, "e18", '{"tool": "refill_prescription", "arguments": {' + med + ', "pharmacy": "Boots"}}') == []


def test_a_dictated_message_must_say_it() -> None:
    """Round 5, case 40: "email me that the quarterly report is ready" answered by an
    e-mail that asks for the report (both readers WRONG; 3.8 checked only the address)."""
    ep = _episode("R3-medium-06")
    assert dictated_message(ep, ep.event("e6")) == ("subject", "Quarterly report The quarterly report is ready.")
    asks = ('{"tool": "send_email", "arguments": {"body": "Dear Helga, I am writing to request the quarterly '
            'report.", "subject": "Quarterly Report Request", "to": "helga_sin@fastpost.eu"}}')
    says = ('{"tool": "send_email", "arguments": {"body": "Your quarterly report is now available.", '
            '"subject": "Quarterly report", "to": "helga_sin@fastpost.eu"}}')
    assert _failed(ep, "e6", asks) == ["implied-message"]
    assert _failed(ep, "e6", says) == []


def test_message_words_and_paraphrase() -> None:
    assert message_words("As requested: a reminder that the plumber comes on Friday at 3pm.") == [
        "plumber", "comes", "friday", "3pm"]
    said = "As requested: a heads-up that I'm running ten minutes late."
    assert message_says("Heads-up: I'm running 10 minutes late.", said)
    assert not message_says("I will be late.", said)
    assert message_says("Reminder: the plumber comes Friday at 3 pm", "As requested: a reminder that the plumber comes on Friday at 3pm.")
    assert not message_says("The plumber comes on Friday.", "As requested: a reminder that the plumber comes on Friday at 3pm.")
    # a fact left out fails, one other word may be (v6's real replies: both carry the news)
    assert message_says("Ten minutes late to my phone by SMS", said)
    assert message_says("Maya Weiss, plumber is on Friday at 3pm", "As requested: a reminder that the plumber comes on Friday at 3pm.")
    assert not message_says("Plumber on Friday", "As requested: a reminder that the plumber comes on Friday at 3pm.")
    assert not message_says("The quarterly report.", "The quarterly report is ready.")


def test_every_dictated_message_of_v7_passes_its_own_reference() -> None:
    """At every decision with a dictated message the reference action says it (so the rule
    fails nothing the oracle does)."""
    checked = 0
    for ep in load_episodes("v7", track="all"):
        replies = {dp.id: action_to_reply(dict(dp.reference or {})) for dp in ep.decision_points}
        result = score(ep, trace_from_replies(ep, replies, "oracle"))
        for check in result.checks:
            if check.check_id == "implied-message":
                checked += 1
                assert check.passed, (ep.id, check.decision_id, check.evidence)
    assert checked >= 25
