"""One fuzzing run: a strategy, a seed and a budget of mutant executions.

Loop: the strategy picks a corpus entry and an operator order; operators are tried
in that order, an already-seen mutant id is skipped, every mutant made is validated
(rejects are counted by reason, never executed) and the strategy picks one of the
first ``strategy.candidates`` valid ones (by static coverage); chosen mutants are run in
batches on the system under test together with any parent not run yet; each run
mutant feeds coverage and divergence back to the strategy, and is judged for the
report.  The budget counts executed mutants only.

A *unique failure* is a distinct root cause, counted only where the parent passes and
the mutant fails.  With a planted-weakness agent as the system under test
(``planted``), the root cause is the planted weakness acting at the mutant's decision
point, so unique failures = distinct planted weaknesses triggered; a failing mutant
where no weakness acts is a *false positive* (the agent replied as the oracle, so the
mutant's ground truth is wrong).  Without one, the root cause is (targeted risk, role
of the memory item the failing check implicates).

With a margin source (:mod:`.margins`: a planted-weakness agent's, or a llama-cpp
model's from :mod:`.model_margins`), every executed mutant's margin is compared with
its parent's; the change goes to the strategy (the ``margin`` strategies reward a
shrinking margin) and into the record (:attr:`Executed.margin`: margin before and
after; for a model also in nats and what the mutant's margins cost).  A model's
margins are not free: :attr:`RunResult.margin_cost` adds up every margin the run
computed (parents, probes and mutants).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.fuzz.coverage import (
    SHAPE,
    Point,
    divergence,
    measured,
    points,
    static_keys,
    universe_size,
)
from lm_eval_memrisk.fuzz.execute import Executor, judge, last_record
from lm_eval_memrisk.fuzz.guidance import (
    MARGIN_STRATEGIES,
    Entry,
    StaticKey,
    Strategy,
    make_strategy,
)
from lm_eval_memrisk.fuzz.margins import (
    MarginChange,
    MarginCost,
    MarginSource,
    MeteredSource,
    margin_change,
)
from lm_eval_memrisk.fuzz.mutate import Mutant, mutate
from lm_eval_memrisk.fuzz.seeds import Seed
from lm_eval_memrisk.fuzz.validate_mutant import check_mutant
from lm_eval_memrisk.running.weak import WeakAgent

#: Give up after this many attempts per unit of budget (all mutants invalid/duplicate).
ATTEMPTS_PER_EXECUTION = 40
FailureKey = tuple[str, ...]


@dataclass(frozen=True)
class Executed:
    """One executed mutant, as the report sees it."""

    index: int
    episode: Episode
    parent_id: str
    operators: tuple[str, ...]
    passed: bool
    parent_passed: bool
    failing: tuple[tuple[str, str], ...]
    new_points: int
    divergence: float
    reply: str = ""
    """The system under test's reply at the decision point (first 300 characters)."""
    planted: str | None = None
    """The planted weakness acting at the decision point (planted-weakness SUT only)."""
    planted_sut: bool = False
    margin: MarginChange | None = None
    """The mutant's margin against its parent's (margin source only)."""

    @property
    def op(self) -> str:
        return self.operators[-1]

    @property
    def keys(self) -> list[FailureKey]:
        """Root-cause keys of a (parent passes, mutant fails) pair (see the module docstring)."""
        if not self.pair:
            return []
        if self.planted_sut:
            return [(self.planted,)] if self.planted else []
        return sorted({(self.episode.risk, role) for _, role in self.failing})

    @property
    def false_positive(self) -> bool:
        """A failing mutant of a planted-weakness SUT that no weakness explains."""
        return self.planted_sut and not self.passed and self.planted is None

    @property
    def pair(self) -> bool:
        return self.parent_passed and not self.passed


@dataclass
class RunResult:
    strategy: str
    seed: int
    budget: int
    universe: int
    executed: list[Executed] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)
    inapplicable: int = 0
    duplicates: int = 0
    attempts: int = 0
    coverage: set[Point] = field(default_factory=set)
    curve: list[dict[str, float]] = field(default_factory=list)
    unique: dict[FailureKey, str] = field(default_factory=dict)
    """Unique failure key -> id of the first mutant that showed it."""
    first_detection: dict[str, int] = field(default_factory=dict)
    """Unique failure (joined key) -> budget (execution index) at which it was first shown."""
    planted_total: int | None = None
    """Number of planted weaknesses of the SUT (None: not a planted-weakness agent)."""
    model_calls: int = 0
    """Decision points this run sent to the system under test (cache misses)."""
    margin_probes: int = 0
    """Roots whose margin the strategy read before picking them (``margin``'s probe)."""
    margin_cost: MarginCost | None = None
    """What every margin this run computed cost (None: free margins, or none)."""
    seconds: float = 0.0
    """Wall time (not written to the outputs, which stay byte-identical for a seed)."""

    @property
    def failures(self) -> list[Executed]:
        """Failing mutants, (parent passes, mutant fails) pairs first."""
        bad = [e for e in self.executed if not e.passed]
        return [e for e in bad if e.pair] + [e for e in bad if not e.pair]

    def summary(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "budget": self.budget,
            "executed": len(self.executed),
            "failures": sum(not e.passed for e in self.executed),
            "pairs": sum(e.pair for e in self.executed),
            "unique_failures": len(self.unique),
            "coverage_points": measured(self.coverage),
            "coverage_universe": self.universe,
            "coverage": measured(self.coverage) / self.universe if self.universe else 0.0,
            "first_detection": dict(sorted(self.first_detection.items())),
            "roots_used": len({str(e.episode.metadata.get("root", "")) for e in self.executed}),
            "rejected": dict(sorted(self.rejected.items())),
            "inapplicable": self.inapplicable,
            "duplicates": self.duplicates,
            "attempts": self.attempts,
            "model_calls": self.model_calls,
            **self.planted_summary(),
            **self.margin_summary(),
        }

    def margin_summary(self) -> dict[str, Any]:
        """Executed mutants whose margin shrank (and still pass by it), when recorded."""
        changes = [e.margin for e in self.executed if e.margin is not None]
        if not changes:
            return {}
        out: dict[str, Any] = {
            "margin_shrinks": sum(1 for m in changes if m.shrink > 0 and not m.fired),
            "margin_probes": self.margin_probes,
        }
        if self.margin_cost is not None:
            mutants = sum((m.cost for m in changes if m.cost is not None), MarginCost())
            out["margin_cost"] = {"mutants": mutants.to_json(), "all": self.margin_cost.to_json()}
        return out

    def planted_summary(self) -> dict[str, Any]:
        if self.planted_total is None:
            return {}
        return {
            "planted": {"triggered": len(self.unique), "total": self.planted_total},
            "false_positives": sum(e.false_positive for e in self.executed),
        }


def _entry(seed: Seed) -> Entry:
    return Entry(episode=seed.episode, exp=seed.exp)


def run_campaign(
    seeds: Sequence[Seed],
    executor: Executor,
    strategy: str,
    budget: int,
    seed: int,
    batch: int = 1,
    max_depth: int = 3,
    progress: bool = True,
    planted: WeakAgent | None = None,
    margins: MarginSource | None = None,
) -> RunResult:
    """Fuzz for ``budget`` mutant executions (see the module docstring).

    ``planted``: the planted-weakness agent behind ``executor``, for root causes;
    ``margins``: the system's margin source (required by the margin strategies)."""
    if not seeds:
        raise ValueError("no seeds to fuzz")
    if strategy in MARGIN_STRATEGIES and margins is None:
        raise ValueError(f"strategy {strategy!r} needs a margin source (a planted-weakness "
                         "agent or a llama-cpp model)")
    metered = MeteredSource(margins) if margins is not None else None
    margins = metered
    rng = random.Random(f"memrisk-fuzz:{strategy}:{seed}")
    entries = [_entry(s) for s in seeds]
    search = make_strategy(strategy, entries, rng, max_depth)
    if margins is not None and hasattr(search, "source"):
        search.source = margins
    seed_pairs = {
        (s.episode.risk, c.kind) for s in seeds for c in s.episode.decision_points[-1].checks
    }
    result = RunResult(
        strategy=strategy,
        seed=seed,
        budget=budget,
        universe=universe_size(seed_pairs, retrieval=executor.policy is not None),
        planted_total=len(planted.weaknesses) if planted is not None else None,
    )
    seen: set[str] = {s.episode.id for s in seeds}
    calls_before, started = executor.calls, time.monotonic()
    bar = tqdm(total=budget, desc=f"fuzz {strategy} s{seed}", unit="mutant", disable=not progress)
    limit = ATTEMPTS_PER_EXECUTION * max(budget, 1)
    while len(result.executed) < budget and result.attempts < limit:
        pending: list[tuple[Entry, Mutant]] = []
        planned: set[StaticKey] = set()
        while len(pending) < min(batch, budget - len(result.executed)) and result.attempts < limit:
            result.attempts += 1
            mutant = _next_mutant(search, rng, seen, result, planned)
            if mutant is not None:
                pending.append(mutant)
        if pending:
            _execute(pending, executor, search, result, planted, margins)
            bar.update(len(pending))
            bar.set_postfix(
                failures=sum(not e.passed for e in result.executed), unique=len(result.unique)
            )
    bar.close()
    result.model_calls = executor.calls - calls_before
    result.margin_probes = int(getattr(search, "probes", 0))
    result.margin_cost = metered.total if metered is not None else None
    result.seconds = time.monotonic() - started
    return result


def _next_mutant(
    search: Strategy,
    rng: random.Random,
    seen: set[str],
    result: RunResult,
    planned: set[StaticKey],
) -> tuple[Entry, Mutant] | None:
    """Choose an entry, make up to ``search.candidates`` valid mutants, pick one.

    ``planned`` holds the static keys of mutants chosen but not run yet (same batch).
    """
    entry, ops = search.choose()
    found: list[Mutant] = []
    for op in ops:
        if len(found) >= search.candidates:
            break
        mutant = mutate(entry.episode, entry.exp, op, rng, entry.chain)
        if mutant is None:
            result.inapplicable += 1
        elif mutant.id in seen or any(m.id == mutant.id for m in found):
            result.duplicates += 1
        else:
            verdict = check_mutant(mutant.episode)
            if verdict.ok:
                found.append(mutant)
            else:
                seen.add(mutant.id)
                result.rejected[verdict.reason] += 1
    if not found:
        return None
    keys = [static_keys(m.episode, m.exp, m.op) for m in found]
    covered: set[StaticKey] = {(p[0], p[1], p[2], p[3]) for p in result.coverage if p[0] != SHAPE}
    best = search.pick(keys, covered | planned)
    chosen = found[best]
    planned |= keys[best]
    seen.add(chosen.id)
    return entry, chosen


def _execute(
    pending: list[tuple[Entry, Mutant]],
    executor: Executor,
    search: Any,
    result: RunResult,
    planted: WeakAgent | None,
    margins: MarginSource | None = None,
) -> None:
    parents = [e for e, _ in pending if e.record is None]
    traces = executor.run([e.episode for e in parents] + [m.episode for _, m in pending])
    for entry, trace in zip(parents, traces):
        entry.record = last_record(entry.episode, trace)
    for (entry, mutant), trace in zip(pending, traces[len(parents) :]):
        assert entry.record is not None
        rec = last_record(mutant.episode, trace)
        pts = points(mutant.episode, mutant.exp, mutant.op, rec)
        covered_before = frozenset(result.coverage)
        new = len(pts - covered_before)
        result.coverage |= pts
        div = divergence(entry.record, rec)
        child = Entry(episode=mutant.episode, exp=mutant.exp, chain=mutant.chain, record=rec)
        new_shapes = sum(1 for p in pts - covered_before if p[0] == SHAPE)
        change = _margin_change(entry, child, margins)
        search.feedback(entry, child, mutant.op, new, div, new_shapes, margin=change)
        # labels: computed after the feedback, for the report only
        verdict = judge(mutant.episode, mutant.exp, trace)
        parent_ok = judge(entry.episode, entry.exp, executor.run([entry.episode])[0]).passed
        done = Executed(
            index=len(result.executed) + 1,
            episode=mutant.episode,
            parent_id=entry.episode.id,
            operators=tuple(str(c["op"]) for c in mutant.chain),
            passed=verdict.passed,
            parent_passed=parent_ok,
            failing=verdict.failing,
            new_points=new,
            divergence=div,
            reply=rec.raw_reply[:300],
            planted=(
                planted.decide(mutant.episode, mutant.episode.decision_points[-1].id)[1]
                if planted is not None
                else None
            ),
            planted_sut=planted is not None,
            margin=change,
        )
        result.executed.append(done)
        for key in done.keys:
            if key not in result.unique:
                result.unique[key] = mutant.id
                result.first_detection[":".join(k for k in key if k)] = done.index
        result.curve.append(
            {
                "budget": done.index,
                "unique_failures": len(result.unique),
                "coverage": measured(result.coverage) / result.universe if result.universe else 0.0,
            }
        )


def _margin_change(parent: Entry, child: Entry, source: MarginSource | None) -> MarginChange | None:
    """The child's margin against its parent's (each computed once and kept on the entry)."""
    if source is None:
        return None
    if parent.margins is None:
        parent.margins = source(parent.episode)
    child.margins = source(child.episode)
    return margin_change(parent.margins, child.margins)
