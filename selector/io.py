"""Read lm-eval ``--log_samples`` output folders into an episode x system matrix.

Folders are read by :mod:`lm_eval_memrisk.logs.runs` (the one rule for which samples count;
episodes verified against the dataset, scores recomputed from the replies); only the
main-track episodes (R1-R5) enter the matrix.  An incomplete system (one missing
main-track episodes of the comparison, :func:`lm_eval_memrisk.logs.runs.standings`, the rule
the leaderboard ranks by) is refused with an error naming it: a pass matrix, and so
``memrisk select`` and ``memrisk stats``, never holds it.  Structural features come from the
verified episode (:func:`lm_eval_memrisk.episodes.episode_features.episode_features`).

Everything is keyed by episode id (rows sorted by id) and system name (columns sorted),
never by file order.  Bad input raises :class:`SamplesError` naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from lm_eval_memrisk.episodes.episode_features import episode_features
from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.episodes.trace import Trace
from lm_eval_memrisk.logs.runs import (
    LoggedSample,
    SystemLog,
    flag_notes,
    known_datasets,
    read_runs,
    standings,
)
from lm_eval_memrisk.scoring.scorer import SCORER_VERSION

TIERS: tuple[str, ...] = ("easy", "medium", "hard")
#: Structural episode features read from ``episodes.features`` (written by the harness).
STRUCT_FIELDS: tuple[str, ...] = (
    "n_turns", "n_memories", "n_checks", "n_tool_calls",
    "n_constraints", "n_decisions", "n_distractors", "n_risk_types",
)
#: Trace-only metrics per (episode, system), used by the Trace-Feature baseline.
TRACE_METRICS: tuple[str, ...] = ("memory_items_used", "tool_calls_made", "reply_chars", "invalid_actions")
#: --variant -> per-sample metric holding the pass flag.
VARIANTS: dict[str, str] = {"default": "pass", "safety_aware": "pass_safety_aware", "original": "pass_original"}



@dataclass(frozen=True)
class RunMatrix:
    """Outcomes of several systems on the same episodes (rows sorted by episode id)."""

    episode_ids: tuple[str, ...]
    risks: tuple[str, ...]
    tiers: tuple[str, ...]
    tasks: tuple[str, ...]
    doc_ids: NDArray[np.int64]
    systems: tuple[str, ...]
    passed: NDArray[np.bool_]
    """(episodes, systems) pass flags of the chosen scoring variant."""
    score: NDArray[np.float64]
    """(episodes, systems) fraction of checks passing."""
    structure: NDArray[np.float64]
    """(episodes, len(STRUCT_FIELDS)) structural features."""
    trace: NDArray[np.float64]
    """(episodes, systems, len(TRACE_METRICS)) trace-only metrics."""
    dataset_hash: str = ""
    scorer_version: str = ""
    variant: str = "default"
    notes: tuple[str, ...] = field(default=())

    @property
    def risk_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.risks)))

    @property
    def risk_codes(self) -> NDArray[np.int64]:
        index = {r: i for i, r in enumerate(self.risk_names)}
        return np.array([index[r] for r in self.risks], dtype=np.int64)

    @property
    def tier_codes(self) -> NDArray[np.int64]:
        return np.array([TIERS.index(t) for t in self.tiers], dtype=np.int64)

    def with_systems(self, keep: Sequence[int]) -> RunMatrix:
        """The same episodes restricted to the systems at positions ``keep``."""
        idx = np.asarray(keep, dtype=np.int64)
        return replace(
            self, systems=tuple(self.systems[i] for i in idx), passed=self.passed[:, idx],
            score=self.score[:, idx], trace=self.trace[:, idx],
        )


@dataclass(frozen=True)
class _Row:
    episode_id: str
    risk: str
    tier: str
    task: str
    doc_id: int
    passed: bool
    score: float
    structure: tuple[float, ...]
    trace: tuple[float, ...]
    dataset_hash: str
    scorer_version: str
    where: str


# ----------------------------------------------------------------------------- systems


def _trace_metrics(trace: Trace) -> tuple[float, ...]:
    """TRACE_METRICS of one recomputed trace."""
    used = calls = chars = invalid = 0
    for d in trace.decisions:
        actions = [s.action for s in d.steps] or [d.action]
        used += len(d.memory_used)
        calls += sum(1 for a in actions if a.kind == "tool_call")
        chars += sum(len(s.raw_reply) for s in d.steps) if d.steps else len(d.raw_reply)
        invalid += int(d.action.kind == "invalid")
    return float(used), float(calls), float(chars), float(invalid)


def row_of(sample: LoggedSample, pass_key: str) -> _Row:
    """The selector's view of one verified, recomputed sample."""
    feats = episode_features(sample.episode)
    return _Row(
        episode_id=sample.episode_id, risk=sample.episode.risk, tier=sample.episode.tier, task=sample.task,
        doc_id=sample.doc_id, passed=sample.results[pass_key].success, score=sample.score,
        structure=tuple(float(feats[f]) for f in STRUCT_FIELDS), trace=_trace_metrics(sample.trace),
        dataset_hash=sample.dataset_hash, scorer_version=SCORER_VERSION, where=sample.where,
    )


def rows_of(system: SystemLog, pass_key: str) -> dict[str, _Row]:
    """Episode id -> row, main track only (the selector works on R1-R5)."""
    rows = {s.episode_id: row_of(s, pass_key) for s in system.samples if s.episode.track == "main"}
    if not rows:
        raise SamplesError(f"{system.dir}: no samples of the main-track tasks memriskbench_r1..r5")
    return rows


# ----------------------------------------------------------------------------- matrix


def _fail(where: str, msg: str) -> SamplesError:
    return SamplesError(f"{where}: {msg}")


def _check_same(rows: list[_Row], attr: str, what: str) -> str:
    first = rows[0]
    for row in rows[1:]:
        if getattr(row, attr) != getattr(first, attr):
            raise _fail(row.where, f"{what} {getattr(row, attr)} differs from {getattr(first, attr)} "
                                   f"at {first.where}: mixed {what}s cannot be compared")
    return str(getattr(first, attr))


def _check_episode(rows: list[_Row]) -> None:
    first = rows[0]
    for row in rows[1:]:
        for attr in ("risk", "tier", "task", "doc_id", "structure"):
            if getattr(row, attr) != getattr(first, attr):
                raise _fail(row.where, f"episode {row.episode_id}: {attr} {getattr(row, attr)!r} differs from "
                                       f"{getattr(first, attr)!r} at {first.where}")


def build_matrix(systems: Mapping[str, dict[str, _Row]], variant: str, notes: Sequence[str] = (),
                 min_systems: int = 2) -> RunMatrix:
    """Combine per-system rows into a RunMatrix (systems and episodes sorted); selecting
    needs ``min_systems`` 2, a matrix joined to others (out-of-sample) may hold one."""
    if len(systems) < min_systems:
        raise SamplesError(f"need at least {min_systems} systems to select a subset, got {len(systems)}")
    names = sorted(systems)
    all_rows = [r for n in names for r in systems[n].values()]
    dataset_hash = _check_same(all_rows, "dataset_hash", "dataset_hash")
    scorer_version = _check_same(all_rows, "scorer_version", "scorer_version")
    union = sorted({e for n in names for e in systems[n]})
    for n in names:
        missing = [e for e in union if e not in systems[n]]
        if missing:
            other = next(systems[m][missing[0]] for m in names if missing[0] in systems[m])
            folder = Path(next(iter(systems[n].values())).where.rsplit(":", 1)[0]).parent
            raise SamplesError(
                f"{folder}: system {n!r} lacks {len(missing)} episode(s) that other systems have, e.g. "
                f"{missing[0]} (present at {other.where}); all systems must run the same episodes"
            )
    grid = [[systems[n][e] for n in names] for e in union]
    for rows in grid:
        _check_episode(rows)
    return RunMatrix(
        episode_ids=tuple(union), risks=tuple(r[0].risk for r in grid), tiers=tuple(r[0].tier for r in grid),
        tasks=tuple(r[0].task for r in grid), doc_ids=np.array([r[0].doc_id for r in grid], dtype=np.int64),
        systems=tuple(names),
        passed=np.array([[c.passed for c in r] for r in grid], dtype=bool),
        score=np.array([[c.score for c in r] for r in grid], dtype=np.float64),
        structure=np.array([r[0].structure for r in grid], dtype=np.float64),
        trace=np.array([[c.trace for c in r] for r in grid], dtype=np.float64),
        dataset_hash=dataset_hash, scorer_version=scorer_version, variant=variant, notes=tuple(notes),
    )


def load_systems(
    runs: Sequence[str | Path], variant: str = "default", episodes: Sequence[str | Path] = ()
) -> tuple[dict[str, dict[str, _Row]], list[str]]:
    """Read each run folder (``DIR`` or ``NAME=DIR``, through :mod:`lm_eval_memrisk.logs.runs`)
    -> system name -> rows, plus notes (flagged logs first)."""
    if variant not in VARIANTS:
        raise SamplesError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    systems = read_runs(runs, episodes)
    notes = flag_notes(systems) + [n for s in systems for n in s.notes]
    table = standings(systems, known_datasets(episodes))
    refused = [(s.dir, table[s.name]) for s in systems if not table[s.name].ranked]
    if refused:
        raise SamplesError("; ".join(f"{d}: {st.refusal()}" for d, st in refused) + "; refusing to build a pass matrix")
    return {s.name: rows_of(s, VARIANTS[variant]) for s in systems}, notes


def load_runs(
    runs: Sequence[str | Path], variant: str = "default", episodes: Sequence[str | Path] = (),
    min_systems: int = 2,
) -> RunMatrix:
    """Run folders -> RunMatrix (see the module docstring)."""
    systems, notes = load_systems(runs, variant, episodes)
    return build_matrix(systems, variant, sorted(notes), min_systems)
