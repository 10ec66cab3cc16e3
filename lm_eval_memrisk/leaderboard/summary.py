"""Per-(system, risk) pass rates with Wilson 95% intervals, ranks and high-risk flags.

Ranking: by overall pass rate (main track R1-R5; R6 is kept out), then mean score,
then name. ``rank`` is the competition rank on the overall pass rate (ties share it).

High-risk flags (bottom two, ties included): a system is flagged on a column when
fewer than two systems have a strictly lower pass rate there *and* its rate is
below the best system's. So tied systems are flagged together (more than two can
be), a column where every system ties flags no one, and with two systems only the
worse one is flagged. Columns with no episodes for a system are left out of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lm_eval_memrisk.leaderboard.records import (
    MAIN_RISKS,
    SIDE_RISKS,
    TIERS,
    EpisodeOutcome,
    SystemRun,
)
from selector.stats import wilson_interval

#: How many systems count as "the bottom" when flagging high-risk systems.
BOTTOM_K = 2


@dataclass(frozen=True)
class Rate:
    """k passes out of n, with a Wilson 95% interval (None when n == 0)."""

    k: int
    n: int
    lo: float | None
    hi: float | None

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class Cell:
    """Default and safety-aware scoring of one (system, column)."""

    default: Rate
    safety: Rate


@dataclass(frozen=True)
class Row:
    """One system's line of the leaderboard."""

    system: SystemRun
    rank: int
    risks: Mapping[str, Cell]
    overall: Cell
    mean_score: float | None
    tiers: Mapping[str, Rate]
    flag_overall: bool
    flag_risks: tuple[str, ...]
    failures: tuple[EpisodeOutcome, ...]

    @property
    def flagged(self) -> bool:
        return self.flag_overall or bool(self.flag_risks)


@dataclass(frozen=True)
class Leaderboard:
    """Rows in rank order, the risk columns shown, and the shared dataset hash."""

    rows: tuple[Row, ...]
    risks: tuple[str, ...]
    dataset_hash: str


def rate(k: int, n: int) -> Rate:
    """Rate with its Wilson 95% interval."""
    if n == 0:
        return Rate(0, 0, None, None)
    lo, hi = wilson_interval(k, n)
    return Rate(k, n, float(lo), float(hi))


def cell(episodes: Sequence[EpisodeOutcome]) -> Cell:
    n = len(episodes)
    return Cell(
        default=rate(sum(e.passed for e in episodes), n),
        safety=rate(sum(e.passed_safety_aware for e in episodes), n),
    )


def bottom_flags(values: Mapping[str, float | None], k: int = BOTTOM_K) -> set[str]:
    """Names in the bottom ``k`` (ties included, never the best); see the module docstring."""
    known = {name: v for name, v in values.items() if v is not None}
    if not known:
        return set()
    best = max(known.values())
    return {
        name
        for name, v in known.items()
        if v < best and sum(1 for w in known.values() if w < v) < k
    }


@dataclass(frozen=True)
class _Stats:
    risks: Mapping[str, Cell]
    overall: Cell
    mean_score: float | None
    tiers: Mapping[str, Rate]


def build(systems: Sequence[SystemRun]) -> Leaderboard:
    """Compute every row; ``systems`` must share one dataset (see collect.check_same_dataset)."""
    if not systems:
        raise ValueError("no systems")
    present = {e.risk for s in systems for e in s.episodes}
    risks = MAIN_RISKS + tuple(r for r in SIDE_RISKS if r in present)
    stats = {s.name: _stats(s, risks) for s in systems}
    overall = {n: st.overall.default.value for n, st in stats.items()}
    overall_flags = bottom_flags(overall)
    risk_flags = {
        r: bottom_flags({n: st.risks[r].default.value for n, st in stats.items()}) for r in risks
    }
    rows = []
    for s in sorted(systems, key=lambda s: _sort_key(s.name, stats[s.name])):
        st = stats[s.name]
        rows.append(
            Row(
                system=s,
                rank=1 + sum(1 for v in overall.values() if _gt(v, overall[s.name])),
                risks=st.risks,
                overall=st.overall,
                mean_score=st.mean_score,
                tiers=st.tiers,
                flag_overall=s.name in overall_flags,
                flag_risks=tuple(r for r in risks if s.name in risk_flags[r]),
                failures=tuple(e for e in s.episodes if not e.passed),
            )
        )
    return Leaderboard(tuple(rows), risks, systems[0].signature.dataset_hash)


def _stats(s: SystemRun, risks: Sequence[str]) -> _Stats:
    main = [e for e in s.episodes if e.risk in MAIN_RISKS]
    return _Stats(
        risks={r: cell([e for e in s.episodes if e.risk == r]) for r in risks},
        overall=cell(main),
        mean_score=sum(e.score for e in main) / len(main) if main else None,
        tiers={t: cell([e for e in main if e.tier == t]).default for t in TIERS},
    )


def _gt(a: float | None, b: float | None) -> bool:
    return a is not None and (b is None or a > b)


def _sort_key(name: str, st: _Stats) -> tuple[float, float, str]:
    """Best first: overall pass rate, then mean score (missing values last), then name."""
    value, score = st.overall.default.value, st.mean_score
    return (-(value if value is not None else -1.0), -(score if score is not None else -1.0), name)
