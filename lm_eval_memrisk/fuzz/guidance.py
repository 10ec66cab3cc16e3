"""Search strategies: which checkpoint to mutate next and with which operators.

* ``guided`` — an energy/priority queue over a growing corpus.  gain =
  log(1 + new coverage points) + :data:`SHAPE_BONUS` x new memory-state shapes +
  :data:`DIVERGENCE_WEIGHT` x divergence from the parent's behaviour.  A mutant with
  gain > 0 joins the corpus with energy 1 + gain and gives its parent gain / 2 more.
  A share :data:`EXPLORE` of the picks (seeded coin) is a uniformly random root seed,
  so no root starves; otherwise the entry with the highest ``energy / (1 + picks)`` is
  mutated next.  Operators are drawn (seeded, without replacement) with weight
  ``(1 + gain) / (1 + uses)``, unused ones first; of the first :data:`CANDIDATES` valid
  mutants (validation is cheap, execution is not) the one whose static coverage keys
  (risk, check kind, operator, role) are least covered so far is executed.
* ``coverage`` — the same with no divergence term: input state only.
* ``random`` — a uniformly random corpus entry (the seeds and every executed mutant
  below the depth limit, so random search chains operators too), a random operator
  order, the first valid mutant; no feedback signal.
* ``margin`` — coverage-only's queue with the system's *margin* as the first signal
  (issue #30; needs a margin source, :mod:`.margins`: a planted-weakness agent).
  gain = :data:`MARGIN_WEIGHT` x shrink + log(1 + new coverage points) +
  :data:`SHAPE_BONUS` x new shapes, where shrink is the largest drop of one cause's
  margin from parent to mutant (:func:`.margins.margin_change`; planted margins are on
  [0, 1], so a deep-chain condition met is a drop of 1/4, worth 3 = one new shape),
  counted only while the mutant's margin stays > 0 (it still passes: a mutant at
  margin <= 0 fails, and its failure is already found).  The rest is as guided: a
  mutant with gain > 0 joins with energy 1 + gain, its parent gets gain / 2, the
  :data:`EXPLORE` share of picks goes to a random root, and ties between entries of
  equal ``energy / (1 + picks)`` go to the earlier one (its rank), so a run is
  deterministic for its seed.
* ``margin-only`` — ``margin`` without coverage: gain = :data:`MARGIN_WEIGHT` x shrink,
  the first valid mutant is executed (no static-coverage pick); same root share.

:data:`MARGIN_WEIGHT` and :data:`EXPLORE` are to be tuned on the tuning seeds only
(``scripts/fuzz_planted.py --tuning``: seeds 100-104), never on the report seeds 0-4;
the values here are the untuned starting point.

Guided and coverage-only differ exactly by the divergence term, a behavioural signal
(did the reply's kind, tool, arguments or used items change from the parent's?).  It
never sees a pass/fail label, nor the expected behaviour; coverage
(:mod:`.coverage`) reads the input state only.  On planted-weakness targets the
divergence term does not help (docs/fuzzer.md): an oracle-like reply changes whenever
a mutation moves the expected value, so divergence rewards the operator's own
obligation rather than the system's weakness.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.trace import DecisionRecord
from lm_eval_memrisk.fuzz.expectation import Expectation
from lm_eval_memrisk.fuzz.margins import MarginChange, Margins
from lm_eval_memrisk.fuzz.operators import OPERATORS

STRATEGIES = ("guided", "random", "coverage", "margin", "margin-only")
#: The strategies ``--compare`` runs (any system under test).
COMPARED = ("guided", "random", "coverage")
#: The strategies that need a margin source (a planted-weakness agent for now).
MARGIN_STRATEGIES = ("margin", "margin-only")
UNUSED_WEIGHT = 3.0
#: Valid mutants a guided strategy compares before executing one.
CANDIDATES = 4
#: Share of guided picks that go to a uniformly random root seed (no starvation).
EXPLORE = 0.5
#: Weight of behavioural divergence in the guided gain (see the module docstring).
DIVERGENCE_WEIGHT = 0.25
#: Extra gain of a mutant that reaches a memory-state shape never seen before.
SHAPE_BONUS = 3.0
#: Gain per unit of margin shrink in the ``margin`` strategies (see the module docstring).
MARGIN_WEIGHT = 12.0
StaticKey = tuple[str, str, str, str]


@dataclass(eq=False)
class Entry:
    """A corpus member: a checkpoint (seed or mutant) and its search bookkeeping."""

    episode: Episode
    exp: Expectation
    chain: tuple[Mapping[str, Any], ...] = ()
    energy: float = 1.0
    picks: int = 0
    rank: int = 0
    record: DecisionRecord | None = field(default=None, repr=False)
    """Its decision point's record on the system under test, once executed."""
    margins: Margins | None = field(default=None, repr=False)
    """The system's margins at its decision point, once known (margin source only)."""

    @property
    def depth(self) -> int:
        return len(self.chain)


class Strategy:
    name = "base"
    candidates = 1
    """How many valid mutants :meth:`pick` chooses from."""

    def __init__(self, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3):
        self.rng = rng
        self.max_depth = max_depth
        self.seeds = list(seeds)

    def choose(self) -> tuple[Entry, list[str]]:
        raise NotImplementedError

    def pick(self, keys: Sequence[frozenset[StaticKey]], covered: set[StaticKey]) -> int:
        """Index of the candidate to execute, given each one's static coverage keys."""
        return 0

    def feedback(
        self, parent: Entry, child: Entry, op: str, new_points: int, divergence: float,
        new_shapes: int = 0, margin: MarginChange | None = None,
    ) -> None:
        """Learn from one executed mutant (coverage gain, divergence and, for the margin
        strategies, its margin against the parent's); ``new_shapes`` of the
        ``new_points`` are new memory-state shapes."""


class RandomMutation(Strategy):
    name = "random"

    def __init__(self, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3):
        super().__init__(seeds, rng, max_depth)
        self.corpus: list[Entry] = list(self.seeds)

    def choose(self) -> tuple[Entry, list[str]]:
        entry = self.corpus[self.rng.randrange(len(self.corpus))]
        ops = list(OPERATORS)
        self.rng.shuffle(ops)
        return entry, ops

    def feedback(
        self, parent: Entry, child: Entry, op: str, new_points: int, divergence: float,
        new_shapes: int = 0, margin: MarginChange | None = None,
    ) -> None:
        if child.depth < self.max_depth:  # no signal read: every executed mutant joins
            self.corpus.append(child)


class Guided(Strategy):
    """Energy/priority queue over the corpus; see the module docstring."""

    name = "guided"
    use_divergence = True
    candidates = CANDIDATES

    def __init__(self, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3):
        super().__init__(seeds, rng, max_depth)
        order = list(range(len(self.seeds)))
        rng.shuffle(order)
        for rank, n in enumerate(order):
            self.seeds[n].rank = rank
        self.corpus: list[Entry] = list(self.seeds)
        self.uses = {op: 0 for op in OPERATORS}
        self.gain = {op: 0.0 for op in OPERATORS}

    def weight(self, op: str) -> float:
        if self.uses[op] == 0:
            return UNUSED_WEIGHT
        return (1.0 + self.gain[op]) / (1.0 + self.uses[op])

    def best(self) -> Entry:
        """The corpus entry with the highest ``energy / (1 + picks)``; the lowest rank
        (the earlier entry) on a tie."""
        return max(self.corpus, key=lambda e: (e.energy / (1 + e.picks), -e.rank))

    def choose(self) -> tuple[Entry, list[str]]:
        if self.rng.random() < EXPLORE:
            entry = self.seeds[self.rng.randrange(len(self.seeds))]
        else:
            entry = self.best()
        entry.picks += 1
        keyed = sorted(
            OPERATORS, key=lambda op: -math.log(1.0 - self.rng.random()) / self.weight(op)
        )
        return entry, keyed

    def pick(self, keys: Sequence[frozenset[StaticKey]], covered: set[StaticKey]) -> int:
        return max(range(len(keys)), key=lambda n: (len(keys[n] - covered), -n))

    def mutant_gain(
        self, new_points: int, divergence: float, new_shapes: int, margin: MarginChange | None
    ) -> float:
        """The gain of one executed mutant (see the module docstring)."""
        return (
            math.log1p(new_points)
            + SHAPE_BONUS * new_shapes
            + (DIVERGENCE_WEIGHT * divergence if self.use_divergence else 0.0)
        )

    def feedback(
        self, parent: Entry, child: Entry, op: str, new_points: int, divergence: float,
        new_shapes: int = 0, margin: MarginChange | None = None,
    ) -> None:
        gain = self.mutant_gain(new_points, divergence, new_shapes, margin)
        self.uses[op] += 1
        self.gain[op] += gain
        parent.energy += 0.5 * gain
        if gain > 0 and child.depth < self.max_depth:
            child.energy = 1.0 + gain
            child.rank = len(self.corpus)
            self.corpus.append(child)


class CoverageOnly(Guided):
    name = "coverage"
    use_divergence = False


def margin_gain(margin: MarginChange | None) -> float:
    """:data:`MARGIN_WEIGHT` x the mutant's margin shrink, 0 once its margin is <= 0."""
    if margin is None or margin.fired:
        return 0.0
    return MARGIN_WEIGHT * margin.shrink


class MarginGuided(CoverageOnly):
    """Margin shrink first, state coverage second (see the module docstring)."""

    name = "margin"

    def mutant_gain(
        self, new_points: int, divergence: float, new_shapes: int, margin: MarginChange | None
    ) -> float:
        return margin_gain(margin) + super().mutant_gain(new_points, divergence, new_shapes, margin)


class MarginOnly(Guided):
    """Margin shrink as the only signal: no coverage, no static-coverage pick."""

    name = "margin-only"
    use_divergence = False
    candidates = 1

    def pick(self, keys: Sequence[frozenset[StaticKey]], covered: set[StaticKey]) -> int:
        return 0

    def mutant_gain(
        self, new_points: int, divergence: float, new_shapes: int, margin: MarginChange | None
    ) -> float:
        return margin_gain(margin)


def make_strategy(
    name: str, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3
) -> Strategy:
    classes: dict[str, type[Strategy]] = {
        "guided": Guided,
        "random": RandomMutation,
        "coverage": CoverageOnly,
        "margin": MarginGuided,
        "margin-only": MarginOnly,
    }
    if name not in classes:
        raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    return classes[name](seeds, rng, max_depth)
