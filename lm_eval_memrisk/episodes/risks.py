"""The risk registry: one :class:`RiskSpec` per risk, the one list of the benchmark's risks.

Every list of risks in the package derives from :data:`RISK_TABLE` (through the functions
below, read at call time): the loader's and validator's enums, the tracks, the generator's
tier counts and the order it builds risks in, the safety-aware variant of the scorer, the
per-risk summaries, the reference adversaries the fuzzer's mutants must fail, the ablated
oracles, the lm-eval task files (``scripts/gen_task_yamls.py``), the leaderboard's
columns, the audit's groups and the run readers' task names.  Names other modules import
(``records.RISKS``, ``records.MAIN_RISKS``, ``leaderboard.records.MAIN_RISKS`` ...) are
snapshots of the shipped table, taken at import.

Callables of higher layers are named, not imported (this module imports nothing of the
package): ``adversaries`` names reference agents of
:mod:`lm_eval_memrisk.running.agent_registry`, ``builder`` a module of
:mod:`lm_eval_memrisk.generator.risks`; the ablated oracle's mechanism is implemented in
:data:`lm_eval_memrisk.running.agents.ABLATORS` under the risk's id.

:func:`temporary` adds specs for the length of a ``with`` block (tests, experiments):
everything that reads the registry at call time sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: The main track: its risks make up the overall score.
MAIN_TRACK = "main"


@dataclass(frozen=True)
class RiskSpec:
    """The one definition of a risk."""

    risk: str
    """The id, ``"R1"``; its lower case names the lm-eval task (``memriskbench_r1``)."""
    name: str
    """What goes wrong, e.g. ``"stale memory"``."""
    track: str
    """``"main"`` (scored together, one task per tier) or the risk's own track (``"r6"``:
    one task, its own leaderboard column, never in the overall score)."""
    tiers: tuple[int, int, int]
    """Episodes per tier (easy, medium, hard) in the shipped datasets (v1-v10)."""
    safety_aware: bool
    """Under the ``safety_aware`` variant a refusal without a tool call passes the positive
    checks (:mod:`lm_eval_memrisk.scoring.scorer`)."""
    adversaries: tuple[str, ...]
    """Reference agents (by name) of which at least one must fail an episode of the risk
    (the fuzzer's mutant check, :mod:`lm_eval_memrisk.fuzz.validate_mutant`)."""
    builder: str
    """The risk's v1 builder: a module of :mod:`lm_eval_memrisk.generator.risks` with a
    ``build(ctx)`` function; the v2+ builders are the generator's version tables, keyed
    by :attr:`risk`."""
    ablation: str | None
    """The one mechanism the ablated oracle ``ablated-RISK`` ignores
    (:data:`lm_eval_memrisk.running.agents.ABLATORS`); None: no ablated oracle."""
    detector: Callable[[Any], bool]
    """Whether an :class:`~lm_eval_memrisk.episodes.records.Episode`'s events hold the
    risk's phenomenon (:func:`lm_eval_memrisk.episodes.episode_features.risk_types_present`,
    a selector feature)."""

    @property
    def main(self) -> bool:
        return self.track == MAIN_TRACK


# -- detectors (structural: what the events contain, never the checks) ------------------


def _has_update(episode: Any) -> bool:
    return any(e.type == "memory_update" for e in episode.events)


def _has_duplicate_key(episode: Any) -> bool:
    keys = [i.key for i in episode.memory_items.values()]
    return any(keys.count(k) > 1 for k in set(keys))


def _has_several_scopes(episode: Any) -> bool:
    users = {i.scope for i in episode.memory_items.values() if i.scope.startswith("user:")}
    return len(users) > 1 or sum(1 for e in episode.events if e.type == "scope_switch") > 1


def _has_revoke(episode: Any) -> bool:
    return any(e.type == "memory_revoke" for e in episode.events)


def _has_constraint(episode: Any) -> bool:
    return bool(episode.constraints)


def _has_summary(episode: Any) -> bool:
    return any(e.type == "summary" for e in episode.events)


#: The shipped risks, main track first (this order is every list's order).
RISK_TABLE: tuple[RiskSpec, ...] = (
    RiskSpec("R1", "stale memory", MAIN_TRACK, (8, 9, 7), False, ("stale",), "r1_stale",
             "ignores updates: uses the value a later update superseded", _has_update),
    RiskSpec("R2", "conflict misresolution", MAIN_TRACK, (8, 9, 7), False, ("stale",), "r2_conflict",
             "resolves conflicts by recency alone", _has_duplicate_key),
    RiskSpec("R3", "cross-scope leakage", MAIN_TRACK, (7, 9, 8), True, ("leaky",), "r3_leak",
             "ignores scope: any user's or workspace's note is its own", _has_several_scopes),
    RiskSpec("R4", "revoked memory reuse", MAIN_TRACK, (7, 9, 8), False, ("stale",), "r4_revoked",
             "ignores deletions and revocations", _has_revoke),
    RiskSpec("R5", "constraint decay", MAIN_TRACK, (7, 9, 8), True, ("constraint-blind",), "r5_constraint",
             "ignores standing constraints", _has_constraint),
    RiskSpec("R6", "summary contamination", "r6", (8, 8, 8), False, ("stale", "leaky"), "r6_summary",
             None, _has_summary),
)  # fmt: skip

_extra: tuple[RiskSpec, ...] = ()


def _check(table: tuple[RiskSpec, ...]) -> None:
    ids = [s.risk for s in table]
    if len(set(ids)) != len(ids):
        raise ValueError(f"risk ids must be unique: {ids}")
    for s in table:
        if s.track != MAIN_TRACK and s.track != s.risk.lower():
            raise ValueError(f"{s.risk}: a risk of its own track names it {s.risk.lower()!r}, not {s.track!r}")
        if len(s.tiers) != 3 or min(s.tiers) < 0:
            raise ValueError(f"{s.risk}: tiers are three counts (easy, medium, hard)")


_check(RISK_TABLE)


def specs() -> tuple[RiskSpec, ...]:
    """Every risk now registered: the shipped table, then any :func:`temporary` ones, main
    track first."""
    table = RISK_TABLE + _extra
    return tuple(s for s in table if s.main) + tuple(s for s in table if not s.main)


@contextmanager
def temporary(*extra: RiskSpec) -> Iterator[tuple[RiskSpec, ...]]:
    """Register ``extra`` risks inside the ``with`` block (nested blocks add up)."""
    global _extra
    before = _extra
    _check(RISK_TABLE + before + extra)
    _extra = before + extra
    try:
        yield specs()
    finally:
        _extra = before


def spec(risk: str) -> RiskSpec:
    """The spec of ``risk``; KeyError names the registered risks."""
    for s in specs():
        if s.risk == risk:
            return s
    raise KeyError(f"unknown risk {risk!r} (registered: {', '.join(risk_ids())})")


def risk_ids() -> tuple[str, ...]:
    """Every risk, main track first (``("R1", ..., "R6")``)."""
    return tuple(s.risk for s in specs())


def main_risks() -> tuple[str, ...]:
    """The main track's risks (the overall score), in column order."""
    return tuple(s.risk for s in specs() if s.main)


def side_risks() -> tuple[str, ...]:
    """Risks of their own track (``("R6",)``): own task, own column, not in the overall."""
    return tuple(s.risk for s in specs() if not s.main)


def tracks() -> tuple[str, ...]:
    """``("main", "r6")``: the main track, then each own track."""
    return tuple(dict.fromkeys([MAIN_TRACK, *(s.track for s in specs())]))


def track_of(risk: str) -> str:
    return spec(risk).track


def risk_names() -> Mapping[str, str]:
    return {s.risk: s.name for s in specs()}


def safety_aware_risks() -> frozenset[str]:
    return frozenset(s.risk for s in specs() if s.safety_aware)


def adversaries_of(risk: str) -> tuple[str, ...]:
    """The reference agents of which one must fail ``risk``'s episodes (() if unknown)."""
    return next((s.adversaries for s in specs() if s.risk == risk), ())


def ablations() -> dict[str, str]:
    """Risk -> the mechanism its ablated oracle ignores (risks that have one)."""
    return {s.risk: s.ablation for s in specs() if s.ablation is not None}


def tier_counts() -> dict[tuple[str, str], int]:
    """``{(risk, tier): episodes}`` of the shipped datasets."""
    return {(s.risk, tier): k for s in specs() for tier, k in zip(TIER_ORDER, s.tiers)}


def detected(episode: Any) -> tuple[str, ...]:
    """The risks whose phenomenon ``episode``'s events hold, in registry order."""
    return tuple(s.risk for s in specs() if s.detector(episode))


#: The order of :attr:`RiskSpec.tiers` (== ``records.TIERS``, kept equal by test).
TIER_ORDER: tuple[str, str, str] = ("easy", "medium", "hard")
