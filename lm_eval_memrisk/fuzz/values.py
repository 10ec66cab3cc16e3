"""Fresh memory values that keep clear of every other value of an episode.

A new value is made by perturbing a value of the same kind (digit runs get new
digits, words get pool words), so it keeps the look of the family's values.  A
candidate is accepted only when, after :func:`lm_eval_memrisk.normalize.normalize`,
it neither contains nor is contained in any value already in the episode (on token
boundaries), so memory-use detection can tell the values apart.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable

from lm_eval_memrisk.fuzz import pools
from lm_eval_memrisk.normalize import contains_value, normalize

_DIGITS = re.compile(r"[0-9]+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_TRIES = 24


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
    """A value shaped like ``like``: new digits, or (no digits) one new word."""
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
        if not clashes(candidate, others):
            return candidate
    return None
