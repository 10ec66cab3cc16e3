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
from lm_eval_memrisk.fuzz.operators import OPERATORS

STRATEGIES = ("guided", "random", "coverage")
UNUSED_WEIGHT = 3.0
#: Valid mutants a guided strategy compares before executing one.
CANDIDATES = 4
#: Share of guided picks that go to a uniformly random root seed (no starvation).
EXPLORE = 0.5
#: Weight of behavioural divergence in the guided gain (see the module docstring).
DIVERGENCE_WEIGHT = 0.25
#: Extra gain of a mutant that reaches a memory-state shape never seen before.
SHAPE_BONUS = 3.0
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
        new_shapes: int = 0,
    ) -> None:
        """Learn from one executed mutant (coverage gain and divergence only);
        ``new_shapes`` of the ``new_points`` are new memory-state shapes."""


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
        new_shapes: int = 0,
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

    def choose(self) -> tuple[Entry, list[str]]:
        if self.rng.random() < EXPLORE:
            entry = self.seeds[self.rng.randrange(len(self.seeds))]
        else:
            entry = max(self.corpus, key=lambda e: (e.energy / (1 + e.picks), -e.rank))
        entry.picks += 1
        keyed = sorted(
            OPERATORS, key=lambda op: -math.log(1.0 - self.rng.random()) / self.weight(op)
        )
        return entry, keyed

    def pick(self, keys: Sequence[frozenset[StaticKey]], covered: set[StaticKey]) -> int:
        return max(range(len(keys)), key=lambda n: (len(keys[n] - covered), -n))

    def feedback(
        self, parent: Entry, child: Entry, op: str, new_points: int, divergence: float,
        new_shapes: int = 0,
    ) -> None:
        gain = (
            math.log1p(new_points)
            + SHAPE_BONUS * new_shapes
            + (DIVERGENCE_WEIGHT * divergence if self.use_divergence else 0.0)
        )
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


def make_strategy(
    name: str, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3
) -> Strategy:
    classes: dict[str, type[Strategy]] = {
        "guided": Guided,
        "random": RandomMutation,
        "coverage": CoverageOnly,
    }
    if name not in classes:
        raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")
    return classes[name](seeds, rng, max_depth)
