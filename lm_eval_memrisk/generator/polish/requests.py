"""v9's requests: the errand fits what the user calls it (work or private), relative days
with two readings are said as dates, a request says whose matter it is and no more (the
words change in the decision's reference and naive action too)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.action_checks import FREE_TEXT_ARGUMENTS
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.relative_days import session_day
from lm_eval_memrisk.generator.families import FAMILIES
from lm_eval_memrisk.generator.risks.v3 import CONTEXT_ASKS, RULE_CONTEXT_ASKS
from lm_eval_memrisk.generator.risks.v7 import EARLY_CONTEXTS, PRIVATE_ASKS
from lm_eval_memrisk.generator.risks.v8 import PERSONAL_MATTERS, TEAM_MATTERS
from lm_eval_memrisk.generator.templates import wildcard
from lm_eval_memrisk.generator.templating import render

#: A purpose the user's words fix for one family's errand: family -> (work purposes,
#: private purposes, purposes that fit either).  A request called work whose errand is a
#: private one gets a work errand or one that fits either, and the other way round.
Purposes = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
PURPOSES: dict[str, Purposes] = {
    "phone_number": (
        ("a reminder that the client call moved to 2pm", "a note that the team lunch is at 12:30",
         "a reminder to bring my site pass", "a reminder that the expense claims are due on Friday"),
        ("a reminder that the plumber comes on Friday at 3pm", "a note that dinner is at 7:30 at Luca's",
         "a reminder that the dry cleaning is ready", "a note that the museum tickets are for Saturday at 11am",
         "a reminder to bring the spare keys", "a note that the parcel is with the neighbour at number 12",
         "a reminder that the bins go out tonight", "a reminder to call the vet before noon"),
        (),
    ),
    "email_address": (
        ("quarterly report", "project proposal", "supplier contract", "Q3 budget draft",
         "grant application", "onboarding checklist", "conference badge"),
        ("signed lease", "insurance renewal", "warranty certificate", "tax summary", "renovation quote"),
        ("travel itinerary", "photo release form", "event seating plan"),
    ),
    "shipping_address": (
        ("desk lamp", "mechanical keyboard", "standing desk converter", "ergonomic chair cushion",
         "noise-cancelling headphones"),
        ("trail running shoes", "cast-iron skillet", "yoga mat", "espresso grinder", "hiking backpack",
         "wool throw blanket", "children's atlas", "bird feeder", "rain jacket", "board game",
         "electric kettle", "chef's knife", "bike pump", "bluetooth speaker", "linen duvet cover",
         "houseplant starter kit", "watercolour set", "camping stove", "set of wine glasses"),
        (),
    ),
    "payout_account": (
        ("March freelance invoice", "consulting retainer", "quarterly commission", "travel expenses refund"),
        ("rent share", "deposit refund", "insurance payout"),
        ("photography fee", "translation job", "workshop honorarium", "royalty payment"),
    ),
    "payment_card": (
        ("the conference pass", "the printer toner", "the co-working day pass"),
        ("the concert tickets", "the annual museum membership", "the replacement phone screen",
         "the cooking class", "the new running watch", "the flower delivery", "the theatre tickets",
         "the language app subscription", "the spa voucher"),
        ("the train tickets to Edinburgh", "the online course"),
    ),
    "pickup_point": (
        ("the conference centre",),
        ("the hospital", "the stadium", "the ferry terminal", "the city museum", "the central library"),
        ("the airport", "the train station"),
    ),
}  # fmt: skip
#: The message v8 had people text themselves that is for someone else.
NOT_TO_SELF = "a heads-up that I'm running ten minutes late"
#: v9's words for an earlier request on the work note (v7's ``EARLY_CONTEXTS`` said the work
#: note "is fine for this one", odd where it is the only note of its key).
V9_EARLY_CONTEXTS: tuple[str, ...] = ("It's for work at {{ org }}.", "This is for my {{ org }} job.")
#: Words of a request that name the errand work, or private (v3's and v7's context asks).
#: (a team's matter is work too, and a matter not the team's private; v9's own words match).
WORK_SAYS = tuple(wildcard(t) for t in (*CONTEXT_ASKS, *RULE_CONTEXT_ASKS, *V9_EARLY_CONTEXTS, *TEAM_MATTERS,
                                        "This one is for the {{ org }} job.", "It's {{ org }} business.",
                                        "It's for the team.", "This is team business for {{ team }}.", "It's a {{ team }} matter."))
PRIVATE_SAYS = tuple(wildcard(t) for t in (*PRIVATE_ASKS, *PERSONAL_MATTERS, "This is just for me, not work.",
                                           "This one's personal.", "Personal, not a team thing."))  # fmt: skip
#: A relative day with two readings ("the Sunday after next").
AFTER_NEXT = re.compile(r"\bthe (?P<wd>Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) after next\b")
FIRST_WEEKEND = "the first weekend of next month"
#: A weekday (and part of the day) a travel request names: on that weekday it names two days.
SAME_WEEKDAY = re.compile(r"\b(?P<wd>Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)(?: (?P<part>morning|afternoon|evening))?\b")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: The words a request uses to say whose matter it is (v3's ``CONTEXT_ASKS``, v7's
#: ``PRIVATE_ASKS``, v8's ``TEAM_MATTERS`` and ``PERSONAL_MATTERS``), and v9's: the matter
#: only, not also which note to use (readers found "It's a private matter, not for the
#: Orvel job: the API token I keep for personal things" a label, not a user's words).
PLAIN_CONTEXTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (CONTEXT_ASKS, ("This one is for the {{ org }} job.", "It's {{ org }} business.", "This is work for {{ org }}.")),
    (PRIVATE_ASKS, ("This one is personal, nothing to do with {{ org }}.", "It's a private matter, not for the {{ org }} job.",
                    "This is just for me, not work.")),
    (TEAM_MATTERS, ("It's for the team.", "This is team business for {{ team }}.", "It's a {{ team }} matter.")),
    (PERSONAL_MATTERS, ("This one's personal.", "It's just for me, nothing to do with {{ team }}.", "Personal, not a team thing.")),
)  # fmt: skip
V9_CONTEXT_ASKS, V9_PRIVATE_ASKS, V9_TEAM_MATTERS, V9_PERSONAL_MATTERS = (new for _, new in PLAIN_CONTEXTS)
#: Money paid out to the user that no one pays themselves (v8's "rent share"), and what a
#: request says instead wherever it appears.
NOT_A_PAYOUT = ("rent share", "deposit refund")


def _requests(events: Sequence[Event]) -> list[tuple[int, int]]:
    """(request index, decision index) for each decision a user message asks for."""
    return [(i - 1, i) for i, e in enumerate(events)
            if e.type == "decision_point" and i > 0 and events[i - 1].type == "user_message"]  # fmt: skip


def _swap(value: Any, old: str, new: str) -> Any:
    """``value`` (a reference's argument, or a nest of them) with ``old`` said as ``new``
    (also capitalised: an e-mail subject is the document's name)."""
    if isinstance(value, str):
        return value.replace(old, new).replace(old[:1].upper() + old[1:], new[:1].upper() + new[1:])
    if isinstance(value, Mapping):
        return {k: _swap(v, old, new) for k, v in value.items()}
    return value


def _reword(events: list[Event], request: int, decision: int, old: str, new: str) -> None:
    """Say ``old`` as ``new`` in the request and in the decision's reference and naive action."""
    said, dp = events[request], events[decision]
    events[request] = dataclasses.replace(said, text=(said.text or "").replace(old, new))
    # a check of a word of the old errand in a free-text argument ("11am") goes with it
    checks = tuple(c for c in dp.checks if not (c.kind == "tool_arg_equals" and c.argument in FREE_TEXT_ARGUMENTS
                                                and c.expected and c.expected in old and c.expected not in new))  # fmt: skip
    events[decision] = dataclasses.replace(
        dp, reference=_swap(dp.reference, old, new) if dp.reference else dp.reference,
        naive=_swap(dp.naive, old, new) if dp.naive else dp.naive, checks=checks,
    )  # fmt: skip


def _fresh(rng: random.Random, pool: Sequence[str], events: Sequence[Event]) -> str:
    """A purpose from ``pool`` that no message of the episode says yet."""
    said = " ".join(e.text or "" for e in events)
    unused = [p for p in pool if p not in said]
    return rng.choice(unused or list(pool))


def _context(text: str) -> str | None:
    """"work" or "private" where the request names its errand so, else None."""
    if any(p.search(text) for p in WORK_SAYS):
        return "work"
    if any(p.search(text) for p in PRIVATE_SAYS):
        return "private"
    return None


def _purpose(text: str, purposes: Purposes) -> str | None:
    """The longest purpose of the family that ``text`` says."""
    found = [p for pool in purposes for p in pool if p in text]
    return max(found, key=len) if found else None


def early_work_requests(episode: Episode, events: list[Event], rng: random.Random) -> None:
    """An earlier request on the work note says it is for work (v7: "… is fine for this one")."""
    org = str(episode.metadata.get("multi_hop", "")).removeprefix("the job at ")
    if not org:
        return
    said = [render(t, org=org, noun=FAMILIES[episode.family].noun) for t in EARLY_CONTEXTS]
    for request, _ in _requests(events):
        text = events[request].text or ""
        old = next((s for s in said if text.endswith(s)), None)
        if old is not None:
            new = render(rng.choice(V9_EARLY_CONTEXTS), org=org)
            events[request] = dataclasses.replace(events[request], text=text[: -len(old)] + new)


def fit_purposes(episode: Episode, events: list[Event], rng: random.Random) -> None:
    """A request the user calls work gets a work errand, a private one a private errand."""
    purposes = PURPOSES.get(episode.family)
    if purposes is None:
        return
    work, private, either = purposes
    for request, decision in _requests(events):
        text = events[request].text or ""
        context, old = _context(text), _purpose(text, purposes)
        if context is None or old is None:
            continue
        wrong, fits = (private, work) if context == "work" else (work, private)
        if old in wrong:
            _reword(events, request, decision, old, _fresh(rng, fits + either, events))


def fit_self_texts(episode: Episode, events: list[Event], rng: random.Random) -> None:
    """A text to the user's own phone is a reminder for themselves."""
    if episode.family != "phone_number":
        return
    work, private, _ = PURPOSES["phone_number"]
    for request, decision in _requests(events):
        text = events[request].text or ""
        if NOT_TO_SELF in text:
            pool = work if _context(text) == "work" else private
            _reword(events, request, decision, NOT_TO_SELF, _fresh(rng, pool, events))


def _date_argument(dp: Event) -> str | None:
    """The day a decision's reference call names (its ``date`` argument), if any."""
    value = ((dp.reference or {}).get("arguments") or {}).get("date")
    return value if isinstance(value, str) else None


def explicit_days(episode: Episode, events: list[Event]) -> None:
    """"the Sunday after next" said as the day it means on the session's day (the first
    of its two readings: a week after the coming Sunday), "the first weekend of next
    month" as its Saturday (a reader would have asked which day to fly), and "Thursday
    evening" said on a Thursday as the Thursday a week on."""
    now = dataclasses.replace(episode, events=tuple(events))  # (headers as spread out)
    for request, decision in _requests(events):
        text = events[request].text or ""
        today = session_day(now, events[decision])
        if today is None:
            continue
        if m := AFTER_NEXT.search(text):
            ahead = (_WEEKDAYS.index(m["wd"]) - today.weekday()) % 7 or 7
            day = today + dt.timedelta(days=ahead + 7)
            _reword(events, request, decision, m[0], f"{m['wd']} {day.day} {day:%B}")
        elif (m := SAME_WEEKDAY.search(text)) and m["wd"] == f"{today:%A}" and _date_argument(events[decision]) == m[0]:
            # "Thursday evening" said on a Thursday: tonight or in a week?  A week on, said so
            day = today + dt.timedelta(days=7)
            _reword(events, request, decision, m[0], f"{m['wd']} {day.day} {day:%B}{', ' + m['part'] if m['part'] else ''}")
        elif FIRST_WEEKEND in text:  # its Saturday
            first = dt.date(today.year + today.month // 12, today.month % 12 + 1, 1)
            day = first + dt.timedelta(days=(5 - first.weekday()) % 7)
            _reword(events, request, decision, FIRST_WEEKEND, f"Saturday {day.day} {day:%B}")


def plain_contexts(episode: Episode, events: list[Event]) -> None:
    """A request says whose matter it is, not also which note to use (:data:`PLAIN_CONTEXTS`)."""
    names = {
        "org": str(episode.metadata.get("multi_hop", "")).removeprefix("the job at "),
        "team": str(episode.metadata.get("team_request") or episode.metadata.get("personal_request") or ""),
        "noun": FAMILIES[episode.family].noun,
    }
    said = [(render(old, **names), render(new, **names)) for olds, news in PLAIN_CONTEXTS for old, new in zip(olds, news, strict=True)]
    team = {render(t, **names) for t in TEAM_MATTERS}
    key = FAMILIES[episode.family].key
    for request, _ in _requests(events):
        text = events[request].text or ""
        team_note = any(e.item is not None and e.item.key == key and e.item.scope.startswith("workspace:") for e in events[:request])
        for old, new in said:
            if text.endswith(old):
                # a request for "our" card says whose it is already, where the team has one
                # (without one, three blind readers took "our" for the user's own)
                ours = old in team and team_note and re.search(r"\bour\b", text[: -len(old)])
                events[request] = dataclasses.replace(events[request], text=text[: -len(old)] + ("" if ours else new))
                events[request] = dataclasses.replace(events[request], text=(events[request].text or "").rstrip())


def fit_payouts(episode: Episode, events: list[Event]) -> None:
    """Money paid out to the user is money someone owes them (:data:`NOT_A_PAYOUT`)."""
    if episode.family != "payout_account":
        return
    for request, decision in _requests(events):
        if NOT_A_PAYOUT[0] in (events[request].text or ""):
            _reword(events, request, decision, *NOT_A_PAYOUT)
