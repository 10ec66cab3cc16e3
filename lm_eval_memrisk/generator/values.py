"""Distinctive memory values (addresses, phone numbers, cards, ...) and a per-episode bank
that keeps every value of an episode clear of every other after normalisation.
"""

from __future__ import annotations

import datetime as dt
import random
import string
from collections.abc import Callable

from lm_eval_memrisk.episodes.normalize import normalize
from lm_eval_memrisk.generator import pools
from lm_eval_memrisk.generator.people import Persona, Workspace, slugify

ValueMaker = Callable[[random.Random, Persona, Workspace], str]

_POST_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _num(rng: random.Random, lo: int, hi: int) -> str:
    return str(rng.randint(lo, hi))


def address(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """A UK, German, Dutch or US postal address."""
    style = rng.choice(("uk", "uk", "uk", "de", "nl", "us"))
    street = f"{rng.choice(pools.STREETS)} {rng.choice(pools.STREET_SUFFIXES)}"
    if style == "uk":
        city, area = rng.choice(pools.UK_CITIES)
        outward = f"{area}{rng.randint(1, 19)}"
        letters = _POST_LETTERS
        post = f"{outward} {rng.randint(1, 9)}{rng.choice(letters)}{rng.choice(letters)}"
        flat = rng.choice(("", "", f"Flat {rng.randint(2, 9)}, "))
        return f"{flat}{_num(rng, 2, 180)} {street}, {city} {post}"
    if style == "de":
        street_de = f"{rng.choice(pools.DE_STREETS)} {_num(rng, 2, 90)}"
        return f"{street_de}, {_digits(rng, 5)} {rng.choice(pools.DE_CITIES)}"
    if style == "nl":
        post = f"{rng.randint(1011, 3599)} {rng.choice(_POST_LETTERS)}{rng.choice(_POST_LETTERS)}"
        street_nl = f"{rng.choice(pools.NL_STREETS)} {_num(rng, 2, 300)}"
        return f"{street_nl}, {post} {rng.choice(pools.NL_CITIES)}"
    city, state = rng.choice(pools.US_CITIES)
    return f"{_num(rng, 100, 4999)} {street}, {city}, {state} {_digits(rng, 5)}"


def phone(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """A phone number in one of six national formats."""
    style = rng.randrange(6)
    if style == 0:
        return f"+44 7{_digits(rng, 3)} {_digits(rng, 6)}"
    if style == 1:
        return f"07{_digits(rng, 3)} {_digits(rng, 3)} {_digits(rng, 3)}"
    if style == 2:
        return f"+1 ({rng.randint(201, 989)}) 555-{_digits(rng, 4)}"
    if style == 3:
        return f"+49 151 {_digits(rng, 4)} {_digits(rng, 4)}"
    if style == 4:
        return "+33 6 " + " ".join(_digits(rng, 2) for _ in range(4))
    return f"+31 6 {_digits(rng, 4)} {_digits(rng, 4)}"


def personal_email(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """A private address built from the persona's name."""
    first, last = slugify(who.first).replace("-", ""), slugify(who.last).replace("-", "")
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first[0]}{last}",
            f"{first}{_num(rng, 10, 99)}",
            f"{first}_{last[:3]}",
            f"{last}.{first[0]}",
        )
    )
    return f"{local}@{rng.choice(pools.MAIL_HOSTS)}"


def work_email(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """An address at the workspace's domain."""
    first, last = slugify(who.first).replace("-", ""), slugify(who.last).replace("-", "")
    local = rng.choice((f"{first}.{last}", f"{first[0]}.{last}", f"{first}", f"{last}{first[0]}"))
    return f"{local}@{ws.domain}"


def shared_email(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """A team mailbox of the workspace (billing@...)."""
    return f"{rng.choice(('billing', 'accounts', 'invoices', 'finance', 'ops'))}@{ws.domain}"


def card(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``Visa ending 4417``."""
    return f"{rng.choice(pools.CARD_BRANDS)} ending {rng.randint(1000, 9999)}"


def bank_account(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """An IBAN or a UK sort code and account number."""
    style = rng.randrange(3)
    if style == 0:
        groups = " ".join(_digits(rng, 4) for _ in range(3))
        return f"GB{_digits(rng, 2)} {rng.choice(pools.BANK_CODES)} {groups} {_digits(rng, 2)}"
    if style == 1:
        groups = " ".join(_digits(rng, 4) for _ in range(4))
        return f"DE{_digits(rng, 2)} {groups} {_digits(rng, 2)}"
    sort = "-".join(_digits(rng, 2) for _ in range(3))
    return f"sort code {sort}, account {_digits(rng, 8)}"


def medication(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``Atorvastatin 20 mg once daily``."""
    drug, doses = rng.choice(pools.DRUGS)
    return f"{drug} {rng.choice(doses)} mg {rng.choice(pools.DOSE_TIMES)}"


def medication_change(rng: random.Random, old: str) -> str:
    """A new dose or timing of the same drug (``old`` as made by :func:`medication`)."""
    drug = old.split(" ", 1)[0]
    doses = dict(pools.DRUGS)[drug]
    return f"{drug} {rng.choice(doses)} mg {rng.choice(pools.DOSE_TIMES)}"


def seat(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``aisle seat, row 14``."""
    side = rng.choice(("aisle", "window", "aisle", "window", "exit-row aisle"))
    return f"{side} seat, row {rng.randint(3, 38)}"


def api_token(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``sk_live_`` and friends, 22 random characters."""
    prefix = rng.choice(("sk_live", "ghp", "xoxb", "pk_prod", "tok", "sk_test"))
    body = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(22))
    return f"{prefix}_{body}"


def date_2026(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``Friday 27 March 2026``."""
    day = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(20, 340))
    return f"{day:%A} {day.day} {day:%B} {day.year}"


def date_ahead(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """v6: a date after every session of an episode (sessions end by early 2027):
    ``Monday 5 April 2027`` to ``Friday 3 March 2028``."""
    day = dt.date(2027, 3, 1) + dt.timedelta(days=rng.randint(20, 340))
    return f"{day:%A} {day.day} {day:%B} {day.year}"


def later_date(rng: random.Random, old: str) -> str:
    """v6: a deadline moved (extended) 1-12 weeks after ``old`` (a ``date_ahead`` string)."""
    day = dt.datetime.strptime(old, "%A %d %B %Y").date() + dt.timedelta(days=7 * rng.randint(1, 12))
    return f"{day:%A} {day.day} {day:%B} {day.year}"


def loyalty(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``Marlow Rewards 4471 9930``."""
    return f"{rng.choice(pools.HOTEL_PROGRAMMES)} {_digits(rng, 4)} {_digits(rng, 4)}"


def door_code(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``K4829``."""
    return f"{rng.choice('BCDFHJKMPRTVWXZ')}{rng.randint(1000, 9999)}"


def dish(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """A dish from the menu pool."""
    return rng.choice(pools.DISHES)


def pickup(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``the north entrance, 61 Kingfisher Crescent``."""
    street = f"{rng.choice(pools.STREETS)} {rng.choice(pools.STREET_SUFFIXES)}"
    spot = rng.choice(pools.PICKUP_SPOTS)
    return f"{spot}, {_num(rng, 2, 140)} {street}"


def meeting_slot(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """``Tuesday 10:30``."""
    return f"{rng.choice(pools.WEEKDAYS)} {rng.choice(pools.MEETING_TIMES)}"


def airline(rng: random.Random, who: Persona, ws: Workspace) -> str:
    """An airline name."""
    return rng.choice(pools.AIRLINES)


class ValueCollision(Exception):
    """No distinct value could be drawn (the caller retries the episode)."""


def _clash(a: str, b: str) -> bool:
    """Whether one normalised value is a substring of the other (or their digit runs are)."""
    na, nb = normalize(a), normalize(b)
    if not na or not nb:
        return True
    if na in nb or nb in na:
        return True
    da, db = "".join(c for c in na if c.isdigit()), "".join(c for c in nb if c.isdigit())
    return len(da) >= 6 and len(db) >= 6 and (da in db or db in da)


class ValueBank:
    """All values of one episode; :meth:`draw` only returns values clear of the others."""

    def __init__(self, rng: random.Random, persona: Persona, workspace: Workspace):
        self._rng = rng
        self._persona = persona
        self._workspace = workspace
        self.values: list[str] = []

    def ok(self, value: str) -> bool:
        return not any(_clash(value, v) for v in self.values)

    def add(self, value: str) -> str:
        """Register a value chosen elsewhere (raises ValueCollision if it clashes)."""
        if not self.ok(value):
            raise ValueCollision(value)
        self.values.append(value)
        return value

    def draw(
        self,
        maker: ValueMaker,
        who: Persona | None = None,
        ws: Workspace | None = None,
        tries: int = 60,
    ) -> str:
        """A fresh value from ``maker`` that clashes with no earlier value."""
        for _ in range(tries):
            value = maker(self._rng, who or self._persona, ws or self._workspace)
            if self.ok(value):
                self.values.append(value)
                return value
        raise ValueCollision(getattr(maker, "__name__", "value"))
