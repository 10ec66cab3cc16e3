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
  (issue #30; needs a margin source, :mod:`.margins`: a planted-weakness agent, or a
  llama-cpp model's log-probability margins, :mod:`.model_margins`), on the
  schedule :data:`MARGIN_SCHEDULE` (:class:`MarginSchedule`).  gain = weight x shrink +
  log(1 + new coverage points) + :data:`SHAPE_BONUS` x new shapes, where shrink is the
  largest drop from parent to mutant of one cause's margin, among causes no parent or
  mutant of the run has brought to <= 0 yet (``solved`` = 0: a cause already reached earns
  nothing more; planted margins are on [0, 1], so a deep-chain condition met is a drop of
  1/4, worth 3 = one new shape), counted only while the mutant's margin stays > 0 (it
  still passes: a mutant at margin <= 0 fails, and its failure is already found).  A
  mutant with gain > 0 joins with energy 1 + gain, its parent gets gain / 2.  A share
  ``explore`` = 0.75 of the picks goes to a random root; with ``probe`` the root's margin
  is read first (one parent run, outside the budget like every parent run) and the pick
  is redrawn (at most ``redraws`` times) while the root already fails (``failing`` = 0);
  otherwise the entry with the highest ``energy / (1 + picks)`` (0 for an entry whose
  margin is <= 0) is mutated, ties to the earlier entry (its rank), so a run is
  deterministic for its seed.
* ``margin-only`` — gain = weight x shrink on any cause (:data:`MARGIN_ONLY_SCHEDULE`,
  the untuned starting point: weight 12, root share 0.5, no probe, failing parents kept),
  no coverage terms; the first valid mutant is executed (no static-coverage pick).

:data:`MARGIN_SCHEDULE` was tuned on the tuning seeds only (``scripts/fuzz_planted.py
--tuning``: seeds 100-104), never on the report seeds 0-4; docs/fuzzer.md keeps the
tuning table.

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
from lm_eval_memrisk.fuzz.margins import MarginChange, Margins, MarginSource, cause_drops
from lm_eval_memrisk.fuzz.operators import OPERATORS

STRATEGIES = ("guided", "random", "coverage", "margin", "margin-only")
#: The strategies ``--compare`` runs (any system under test).
COMPARED = ("guided", "random", "coverage")
#: The strategies that need a margin source (a planted-weakness agent or a llama-cpp model).
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

    explore = EXPLORE
    """Share of picks that go to a uniformly random root (the root-breadth share)."""

    def root(self) -> Entry:
        """A uniformly random root seed (the root-breadth share of the picks)."""
        return self.seeds[self.rng.randrange(len(self.seeds))]

    def choose(self) -> tuple[Entry, list[str]]:
        if self.rng.random() < self.explore:
            entry = self.root()
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


@dataclass(frozen=True)
class MarginSchedule:
    """The energy schedule of the ``margin`` strategies (see the module docstring)."""

    weight: float = MARGIN_WEIGHT
    """Gain per unit of margin shrink."""
    explore: float = EXPLORE
    """Share of picks that go to a uniformly random root."""
    failing: float = 1.0
    """Factor on the priority of an entry whose margin is known to be <= 0 (the system
    already fails it, so its mutants can never form a parent-pass/mutant-fail pair);
    a root pick that lands on one is kept with this probability, else redrawn."""
    solved: float = 1.0
    """Factor on the shrink of a cause that has already reached margin <= 0 in this run."""
    record: float = 0.0
    """Extra gain when a mutant brings a cause not yet reached to a margin lower than
    any seen so far in the run (a new record: the deep causes' intermediate steps)."""
    redraws: int = 8
    """Root redraws at most, when a root pick lands on a failing entry."""
    probe: bool = False
    """Read a root's margin before mutating it (a parent run, outside the budget like
    every parent run), so that a root pick can skip a root the system already fails
    (with ``failing`` < 1); otherwise a root's margin is known once it was a parent."""


#: The ``margin`` strategy's schedule, tuned on the tuning seeds 100-104 only
#: (docs/fuzzer.md, "Margin guidance": the tuning table).
MARGIN_SCHEDULE = MarginSchedule(weight=12.0, explore=0.75, failing=0.0, solved=0.0, probe=True)
#: The ``margin-only`` strategy's schedule (the untuned starting point).
MARGIN_ONLY_SCHEDULE = MarginSchedule()


def margin_gain(margin: MarginChange | None, weight: float = MARGIN_WEIGHT) -> float:
    """``weight`` x the mutant's margin shrink, 0 once its margin is <= 0."""
    if margin is None or margin.fired:
        return 0.0
    return weight * margin.shrink


class _MarginMixin(Guided):
    """The margin schedule shared by ``margin`` and ``margin-only``."""

    schedule = MARGIN_SCHEDULE

    def __init__(self, seeds: Sequence[Entry], rng: random.Random, max_depth: int = 3,
                 schedule: MarginSchedule | None = None):
        super().__init__(seeds, rng, max_depth)
        if schedule is not None:
            self.schedule = schedule
        self.explore = self.schedule.explore
        self.reached: set[str] = set()
        """Causes some executed mutant (or parent) of this run brought to margin <= 0."""
        self.lowest: dict[str, float] = {}
        """The lowest margin seen per cause in this run (parents and mutants)."""
        self._margin_part = 0.0
        self.source: MarginSource | None = None
        """The system's margin source (set by the campaign; used by ``probe``)."""
        self.probes = 0
        """Roots whose margin was read before they were picked (``probe``)."""

    def _failing(self, entry: Entry) -> bool:
        if entry.margins is None and self.schedule.probe and self.source is not None:
            entry.margins = self.source(entry.episode)
            self.probes += 1
        return entry.margins is not None and entry.margins.fired

    def priority(self, entry: Entry) -> float:
        p = entry.energy / (1 + entry.picks)
        fails = entry.margins is not None and entry.margins.fired
        return p * self.schedule.failing if fails else p

    def best(self) -> Entry:
        return max(self.corpus, key=lambda e: (self.priority(e), -e.rank))

    def root(self) -> Entry:
        entry = super().root()
        if self.schedule.failing >= 1.0:
            return entry
        for _ in range(self.schedule.redraws):
            if not self._failing(entry) or self.rng.random() < self.schedule.failing:
                break
            entry = super().root()
        return entry

    def schedule_gain(self, parent: Entry, child: Entry, margin: MarginChange | None) -> float:
        """The margin part of a mutant's gain (and the run's bookkeeping of causes)."""
        sch = self.schedule
        if margin is None or child.margins is None:
            return margin_gain(margin, sch.weight)  # only the change is known
        before = dict(parent.margins.parts) if parent.margins is not None else {}
        for cause, m in before.items():
            self._note(cause, m)
        gain = 0.0
        if not margin.fired:
            drops = [
                drop * (sch.solved if c in self.reached else 1.0)
                for c, drop in cause_drops(parent.margins, child.margins)
            ]
            gain = sch.weight * max([0.0, *drops])
            if sch.record:
                gain += sch.record * sum(
                    1 for c, m in child.margins.parts
                    if c not in self.reached and m < self.lowest.get(c, 1.0)
                )
        for cause, m in child.margins.parts:
            self._note(cause, m)
        return gain

    def _note(self, cause: str, m: float) -> None:
        if m <= 0.0:
            self.reached.add(cause)
        self.lowest[cause] = min(m, self.lowest.get(cause, 1.0))

    def feedback(
        self, parent: Entry, child: Entry, op: str, new_points: int, divergence: float,
        new_shapes: int = 0, margin: MarginChange | None = None,
    ) -> None:
        self._margin_part = self.schedule_gain(parent, child, margin)
        super().feedback(parent, child, op, new_points, divergence, new_shapes, margin)


class MarginGuided(_MarginMixin, CoverageOnly):
    """Margin shrink first, state coverage second (see the module docstring)."""

    name = "margin"
    use_divergence = False

    def mutant_gain(
        self, new_points: int, divergence: float, new_shapes: int, margin: MarginChange | None
    ) -> float:
        return self._margin_part + math.log1p(new_points) + SHAPE_BONUS * new_shapes


class MarginOnly(_MarginMixin):
    """Margin shrink as the only signal: no coverage, no static-coverage pick."""

    name = "margin-only"
    use_divergence = False
    candidates = 1
    schedule = MARGIN_ONLY_SCHEDULE

    def pick(self, keys: Sequence[frozenset[StaticKey]], covered: set[StaticKey]) -> int:
        return 0

    def mutant_gain(
        self, new_points: int, divergence: float, new_shapes: int, margin: MarginChange | None
    ) -> float:
        return self._margin_part


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
