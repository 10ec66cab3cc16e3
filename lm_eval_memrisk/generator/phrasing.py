"""Counterbalanced phrasing (dataset v7): the sentence templates of a pool are dealt
to the values they carry *after* the episodes are planned, so that no phrasing tells
whether its value is the one to use (issue 26, item 2).

Drawing a template at random per sentence leaves each template's right rate to chance
around its pool's: with five "My K is V" templates used 20-50 times each, one or two
fell outside [0.25, 0.75] at every seed.  v7 builds its dataset twice
(:func:`counterbalanced`):

1. the first build records every :func:`~.templating.pick` of a value-carrying
   template (episode, value, template drawn, its pool);
2. :func:`fates` reads, from the built episodes, how often each such sentence's value
   was a candidate at a decision and how often it was the right one (what the audit's
   template table counts);
3. :func:`deal` shares out the templates each pool drew (as often as drawn) among its
   sentences so that every template's right count stays close to its pool's rate;
4. the second build draws exactly as the first (the random stream is unchanged) but
   renders the dealt template.

Only the words of the sentence change, never what happens: a pool's templates say the
same thing (that is why they share a pool), so the episode's events, values and checks
are those of the first build.  Deterministic: same seed, same dataset.

A dataset rebuilt in stages beside fixed sentences (v8) is dealt once more where a
template is still out of the band at the end (:func:`mend`; a no-op on the shipped build).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

#: (episode id, value, template drawn) — one sentence of a build.
Sentence = tuple[str, str, str]


@dataclass
class Phrasing:
    """The state of one build: which episode is being built, what was drawn (the first
    build) and which template to render instead (the second)."""

    dealt: dict[Sentence, str] = field(default_factory=dict)
    drawn: dict[Sentence, tuple[str, ...]] = field(default_factory=dict)
    episode: str = ""


_ACTIVE: ContextVar[Phrasing | None] = ContextVar("memrisk_phrasing", default=None)


def choose(rng: random.Random, pool: Sequence[str], ctx: dict[str, Any]) -> str:
    """The template to render from ``pool``: the random draw (always made, so the random
    stream never depends on the phrasing), or in a counterbalanced build the template
    dealt to this sentence."""
    drawn = rng.choice(list(pool))
    phrasing, value = _ACTIVE.get(), ctx.get("value")
    if phrasing is None or not isinstance(value, str) or len(set(pool)) < 2:
        return drawn
    sentence = (phrasing.episode, value, drawn)
    phrasing.drawn[sentence] = tuple(pool)
    return phrasing.dealt.get(sentence, drawn)


def building(episode_id: str) -> None:
    """Mark the episode the active build is drawing sentences for (no-op outside one)."""
    phrasing = _ACTIVE.get()
    if phrasing is not None:
        phrasing.episode = episode_id


@contextmanager
def _active(phrasing: Phrasing) -> Iterator[Phrasing]:
    token = _ACTIVE.set(phrasing)
    try:
        yield phrasing
    finally:
        _ACTIVE.reset(token)


#: Per sentence: (times its value was a candidate at a decision, times it was the right one).
Fates = dict[Sentence, tuple[int, int]]


def fates(uses: Iterable[tuple[str, str, str, bool]]) -> Fates:
    """Sum ``(episode id, value, template text, right)`` uses (one per candidate note per
    decision per template that carried it) into each sentence's fate."""
    out: dict[Sentence, tuple[int, int]] = {}
    for episode, value, text, right in uses:
        n, k = out.get((episode, value, text), (0, 0))
        out[(episode, value, text)] = (n + 1, k + right)
    return out


#: Most passes of pairwise swaps :func:`deal` makes (it stops when a pass changes nothing).
SWEEPS = 20
#: The template band of issue 26: a template used :data:`BAND_MIN_USES` times or more has
#: a right rate in it (the audit's template table, ``audit.templates``, reads both from
#: here).  A deal beside a fixed context (v8's R3) aims at it: with most sentences fixed,
#: even rates alone left templates just under 0.25.
BAND = (0.25, 0.75)
BAND_MIN_USES = 8
#: How much a right count outside the band weighs against an uneven rate.
BAND_WEIGHT = 100.0


def deal(
    drawn: dict[Sentence, tuple[str, ...]],
    fate: Fates,
    fixed: dict[Sentence, str] | None = None,
    start: dict[Sentence, str] | None = None,
    even: bool = True,
) -> dict[Sentence, str]:
    """Each sentence with a fate -> the template of its pool to render.

    The templates a pool's sentences drew stay the ones it uses, as often as drawn (the
    phrasing keeps its random variety); only which sentence gets which is chosen, by
    swapping the templates of two sentences of a pool while that brings the templates'
    right rates closer to their group's rate (templates shared between pools, like the
    family pools' common "My K is V", are one group with one rate).  What is lowered is
    the sum over templates of (right count - rate x uses)^2 / (uses + 1).  ``fixed``
    sentences (those of another build that must stay as they are, see
    :func:`counterbalanced`) keep the template given and count in the rates, but are
    never swapped.  The other sentences start from their draw, or from ``start``'s
    template where it gives one; ``even=False`` weighs the band alone, so that only swaps
    that bring a template toward it are made (both for :func:`mend`)."""
    fixed, start = fixed or {}, start or {}
    group = _groups(drawn.values())
    fated = [s for s in drawn if s in fate]
    total: dict[str, list[int]] = {}
    for sentence in fated:
        n, k = fate[sentence]
        acc = total.setdefault(group[drawn[sentence][0]], [0, 0])
        acc[0], acc[1] = acc[0] + n, acc[1] + k
    rate = {g: k / n for g, (n, k) in total.items()}
    given = {s: fixed.get(s, start.get(s, s[2])) for s in fated}
    uses: dict[str, list[float]] = {}  # template -> [uses, excess right count]
    for s in fated:
        n, k = fate[s]
        use = uses.setdefault(given[s], [0.0, 0.0])
        use[0], use[1] = use[0] + n, use[1] + k - rate[group[given[s]]] * n

    def term(t: str, dn: int = 0, dx: float = 0.0) -> float:
        n, x = uses.get(t, (0, 0.0))
        n, x = n + dn, x + dx
        out = x**2 / (n + 1) if even else 0.0
        if (fixed or not even) and n >= BAND_MIN_USES:  # (not in a free deal: v7 deals as it did)
            right = x + rate[group[t]] * n
            out += BAND_WEIGHT * max(0.0, BAND[0] * n - right, right - BAND[1] * n) ** 2
        return out

    by_pool: dict[tuple[str, ...], list[Sentence]] = {}
    for s in fated:
        if s not in fixed:
            by_pool.setdefault(drawn[s], []).append(s)
    for _ in range(SWEEPS):
        improved = False
        for pool, members in by_pool.items():
            r = rate[group[pool[0]]]
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    ta, tb = given[a], given[b]
                    if ta == tb:
                        continue
                    (na, ka), (nb, kb) = fate[a], fate[b]
                    xa, xb = ka - r * na, kb - r * nb
                    before = term(ta) + term(tb)
                    after = term(ta, nb - na, xb - xa) + term(tb, na - nb, xa - xb)
                    if after < before - 1e-9:
                        uses[ta] = [uses[ta][0] + nb - na, uses[ta][1] + xb - xa]
                        uses[tb] = [uses[tb][0] + na - nb, uses[tb][1] + xa - xb]
                        given[a], given[b] = tb, ta
                        improved = True
        if not improved:
            break
    return {s: t for s, t in given.items() if t != s[2] and s not in fixed}


def _groups(pools: Iterable[tuple[str, ...]]) -> dict[str, str]:
    """Template text -> its group's name (the first text of the group): pools that share
    a template are one group."""
    parent: dict[str, str] = {}

    def root(t: str) -> str:
        while parent.setdefault(t, t) != t:
            t = parent[t]
        return t

    for pool in pools:
        first = root(pool[0])
        for t in pool[1:]:
            other = root(t)
            if other != first:
                parent[other] = first
    return {t: root(t) for t in parent}


@dataclass(frozen=True)
class Dealt:
    """What a counterbalanced build drew and rendered: each sentence's pool, fate and
    the template it got (the context a rebuild of some of its episodes is dealt in)."""

    drawn: dict[Sentence, tuple[str, ...]]
    fate: Fates
    given: dict[Sentence, str]

    def without(self, episode_ids: set[str]) -> Dealt:
        """The same, less the sentences of ``episode_ids``."""
        keep = {s: pool for s, pool in self.drawn.items() if s[0] not in episode_ids}  # in order (a deal sweeps so)
        return Dealt(keep, {s: f for s, f in self.fate.items() if s in keep},
                     {s: t for s, t in self.given.items() if s in keep})  # fmt: skip

    def plus(self, other: Dealt) -> Dealt:
        """Both builds' sentences (``other``'s where both have one)."""
        return Dealt({**self.drawn, **other.drawn}, {**self.fate, **other.fate}, {**self.given, **other.given})


def counterbalanced(
    build: Callable[[], list[Any]],
    uses: Callable[[list[Any]], Iterable[tuple[str, str, str, bool]]],
    context: Dealt | None = None,
) -> tuple[list[Any], Dealt]:
    """Build twice (see the module docstring): ``build`` makes the dataset, ``uses``
    reads its template uses ``(episode id, value, template text, right)``.  With a
    ``context`` (the other episodes of a dataset whose rest is rebuilt: v8's R3), the
    templates are dealt so that the rates over both come out even, the context's own
    sentences unchanged.  Returns the episodes and what was dealt."""
    with _active(Phrasing()) as first:
        episodes = build()
    drawn, fate = dict(first.drawn), fates(uses(episodes))
    fixed: dict[Sentence, str] = {}
    if context is not None:
        drawn.update(context.drawn)
        fate.update(context.fate)
        fixed = context.given
    dealt = deal(drawn, fate, fixed)
    with _active(Phrasing(dealt=dealt)):
        episodes = build()
    given = {s: dealt.get(s, s[2]) for s in first.drawn if s in fate}
    return episodes, Dealt(dict(first.drawn), {s: f for s, f in fate.items() if s in first.drawn}, given)


def outside_band(uses: Iterable[tuple[str, tuple[int, int]]]) -> set[str]:
    """The templates of ``(template, (uses, right count))`` pairs, summed, used
    :data:`BAND_MIN_USES` times or more with a right rate outside :data:`BAND`."""
    total: dict[str, list[int]] = {}
    for t, (n, k) in uses:
        acc = total.setdefault(t, [0, 0])
        acc[0], acc[1] = acc[0] + n, acc[1] + k
    return {t for t, (n, k) in total.items() if n >= BAND_MIN_USES and not BAND[0] <= k / n <= BAND[1]}


def mend(dealt: Dealt, seen: Fates, free: Collection[str]) -> dict[Sentence, str]:
    """The sentences of a rebuilt dataset (``dealt``: every episode's) to render anew, and
    their templates, where a template stays out of the band after the last stage's deal
    (empty, the usual case, where none does).

    Two things leave one out: a deal's fates are its first build's, so a sentence whose
    dealt words the audit cannot tag (v7 lowercases an update's first word after "For
    the X job:") still counts for its template there; and a template said only in fixed
    sentences (v7's "From this week on, use V as my K", which v8's R2 no longer says)
    cannot be moved by the stage's deal at all.  So the fates are read from the built
    dataset (``seen``: :func:`fates` of its template uses, keyed by the template
    rendered), and the sentences of the out-of-band templates' groups are dealt again,
    from where they are and weighing the band alone (so only swaps toward it are made):
    first those of the ``free`` episodes (the last stage's) only, then, if a template is
    still out, also the fixed sentences of the pools that hold one."""
    fate = {s: seen[(s[0], s[1], t)] for s, t in dealt.given.items() if (s[0], s[1], t) in seen}
    out = outside_band((s[2], f) for s, f in seen.items())
    if not out:
        return {}
    group = _groups(dealt.drawn.values())
    groups, pools = {group.get(t, t) for t in out}, {p for p in dealt.drawn.values() if out & set(p)}
    given = dealt.given
    for widen in (False, True):
        loose = {s for s in fate if group[dealt.drawn[s][0]] in groups
                 and (s[0] in free or widen and dealt.drawn[s] in pools)}  # fmt: skip
        again = deal(dealt.drawn, fate, {s: t for s, t in dealt.given.items() if s not in loose}, dealt.given, even=False)
        given = {s: again.get(s, s[2]) if s in loose else t for s, t in dealt.given.items()}
        if not outside_band((given[s], f) for s, f in fate.items()):
            break
    return {s: t for s, t in given.items() if t != dealt.given[s]}


def rendered(build: Callable[[], list[Any]], given: dict[Sentence, str]) -> list[Any]:
    """``build`` rendering each sentence of ``given`` in its template (the rest as drawn)."""
    with _active(Phrasing(dealt={s: t for s, t in given.items() if t != s[2]})):
        return build()
