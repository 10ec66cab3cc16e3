"""Typed records of one system's run, as the leaderboard shows it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Risks of the main track (they make up the overall score), in column order.
MAIN_RISKS: tuple[str, ...] = ("R1", "R2", "R3", "R4", "R5")
#: The separate R6 track: shown in its own column, never in the overall score.
SIDE_RISKS: tuple[str, ...] = ("R6",)
ALL_RISKS: tuple[str, ...] = MAIN_RISKS + SIDE_RISKS
TIERS: tuple[str, ...] = ("easy", "medium", "hard")


@dataclass(frozen=True)
class FailedCheck:
    """One check that did not pass, with the scorer's evidence."""

    check_id: str
    kind: str
    channel: str
    decision_id: str
    evidence: str
    """The scorer's evidence; non-string evidence is kept as sorted-key JSON."""


@dataclass(frozen=True)
class EpisodeOutcome:
    """One logged sample line: how one system did on one episode."""

    episode_id: str
    risk: str
    tier: str
    passed: bool
    """Default scoring (per-sample key ``pass``)."""
    passed_safety_aware: bool
    """Safety-aware scoring (per-sample key ``pass_safety_aware``)."""
    score: float
    failed_checks: tuple[FailedCheck, ...]
    violations: tuple[str, ...]
    source: str
    """``file:line`` of the sample line, for messages."""
    failure: str | None = None
    """``agent``, ``policy_hidden`` (a memory policy hid a needed note) or None (passed / not logged)."""
    violation: bool = False
    """A check that forbids something (stale, leaked, revoked, forbidden use) failed."""
    decisions: int | None = None
    """Decision points, and of them: where the agent acted, and acted with a violation
    (None for records written before the per-decision outcomes existed)."""
    acted: int | None = None
    acted_violations: int | None = None
    false_claim: bool = False
    """A decision's reply claimed an action was completed without a call (scorer 3.0)."""


@dataclass(frozen=True)
class Signature:
    """Every setting that changes a system's numbers (printed with each row)."""

    model: str
    model_hash: str | None
    """The model file's hash from results["config"] (e.g. ``gguf_sha256``), if recorded."""
    dataset_hash: str
    scorer_version: str
    variant: str
    memory_policy: str
    mode: str
    raw: str
    """The ``memrisk:v1|...`` signature string of the recomputed scores."""
    flagged: str = ""
    """Non-empty when the log's stored metrics disagree with the recomputed ones (says how)."""


@dataclass(frozen=True)
class SystemRun:
    """One system as :mod:`lm_eval_memrisk.logs.runs` reads it (scores recomputed)."""

    name: str
    folder: Path
    results_file: Path | None
    samples_files: tuple[Path, ...]
    signature: Signature
    episodes: tuple[EpisodeOutcome, ...]
    """Sorted by episode id."""
    status: str = "complete"
    """:attr:`lm_eval_memrisk.logs.runs.Standing.status`: ``complete`` or ``incomplete (n/N)``."""
    ranked: bool = True
    """False when the system misses episodes of the comparison (listed, never ranked)."""
