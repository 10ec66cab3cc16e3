"""The 12-dimensional episode feature vector (paper §5.2) in four families.

=====  ==================  ================  ==================================================
 #     name                family            definition (over the reference systems R)
=====  ==================  ================  ==================================================
 0     tier                difficulty        tier ordinal: easy 0, medium 1, hard 2
 1     n_turns             difficulty        trajectory length: user + assistant turns
 2     pass_spread         discrimination    std over R of the pass flag, sqrt(p (1 - p))
 3     item_rest_corr      discrimination    Pearson over R of the pass flag with each system's
                                             pass rate on the other episodes (0 if constant)
 4     fail_rate           failure density   fraction of R failing the episode, 1 - p
 5     check_fail_rate     failure density   1 - mean score over R (share of checks failed)
 6     n_risk_types        complexity        distinct risk phenomena in the episode
 7     n_memories          complexity        memory items written
 8     n_checks            complexity        checks over all decision points
 9     n_tool_calls        complexity        scripted tool calls
 10    n_constraints       complexity        constraints declared
 11    n_distractors       complexity        memory items no decision point is about
=====  ==================  ================  ==================================================

Features 2-5 depend on outcomes and are computed from the reference systems only; the
held-out check recomputes them leave-one-system-out (for held-out system h, from the
other systems), so h's results never leak into its own selection.  Structural features
come from the ``episodes.features`` record the harness logs.

The selector uses features through two scores, each a mean of min-max scaled features
(a constant feature scales to 0): the *discrimination score* (family 2-3) picks the seed
episode of each risk, and the *priority* (sum of the active families' scores; higher
means more discriminative, failure-rich, harder, more complex) breaks ties in Psi gain.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from selector.io import STRUCT_FIELDS, RunMatrix

FloatArray = NDArray[np.float64]

FEATURE_NAMES: tuple[str, ...] = (
    "tier", "n_turns", "pass_spread", "item_rest_corr", "fail_rate", "check_fail_rate",
    "n_risk_types", "n_memories", "n_checks", "n_tool_calls", "n_constraints", "n_distractors",
)
FAMILIES: dict[str, tuple[int, ...]] = {
    "difficulty": (0, 1),
    "discrimination": (2, 3),
    "failure_density": (4, 5),
    "complexity": (6, 7, 8, 9, 10, 11),
}
FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)
_COMPLEXITY_FIELDS = ("n_risk_types", "n_memories", "n_checks", "n_tool_calls", "n_constraints", "n_distractors")


def _row_corr(x: FloatArray, y: FloatArray) -> FloatArray:
    """Pearson correlation of matching rows; 0 where either row is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    return np.where(den > 1e-12, (xc * yc).sum(axis=1) / np.where(den > 1e-12, den, 1.0), 0.0)


def outcome_features(passed: NDArray[np.bool_], score: FloatArray) -> FloatArray:
    """Features 2-5 (discrimination, failure density) from (episodes, systems) outcomes."""
    x = passed.astype(np.float64)
    n_ep = x.shape[0]
    p = x.mean(axis=1)
    rest = (x.sum(axis=0)[None, :] - x) / max(n_ep - 1, 1)
    return np.column_stack([np.sqrt(p * (1.0 - p)), _row_corr(x, rest), 1.0 - p, 1.0 - score.mean(axis=1)])


def feature_matrix(m: RunMatrix, reference: Sequence[int] | None = None) -> FloatArray:
    """(episodes, 12) features; outcome features from the systems at ``reference`` (all if None)."""
    ref = np.arange(len(m.systems)) if reference is None else np.asarray(reference, dtype=np.int64)
    col = {f: i for i, f in enumerate(STRUCT_FIELDS)}
    outcome = outcome_features(m.passed[:, ref], m.score[:, ref])
    return np.column_stack([
        m.tier_codes.astype(np.float64), m.structure[:, col["n_turns"]], outcome,
        m.structure[:, [col[f] for f in _COMPLEXITY_FIELDS]],
    ])


def loso_feature_matrices(m: RunMatrix) -> FloatArray:
    """(systems, episodes, 12): for held-out system h, features from all other systems."""
    n = len(m.systems)
    return np.stack([feature_matrix(m, [s for s in range(n) if s != h]) for h in range(n)])


def trace_feature_matrix(m: RunMatrix) -> FloatArray:
    """(episodes, 4) trace-only metrics averaged over systems (Trace-Feature baseline)."""
    return np.asarray(m.trace.mean(axis=1), dtype=np.float64)


def minmax(x: FloatArray) -> FloatArray:
    """Scale each column to [0, 1]; a constant column becomes 0."""
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = hi - lo
    return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1.0), 0.0)


def standardize(x: FloatArray) -> FloatArray:
    """Z-score each column; a constant column becomes 0 (for distance-based clustering)."""
    sd = x.std(axis=0)
    return np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)


def family_score(x: FloatArray, family: str) -> FloatArray:
    """Mean of the min-max scaled features of one family."""
    return np.asarray(minmax(x[:, list(FAMILIES[family])]).mean(axis=1), dtype=np.float64)


def priority(x: FloatArray, families: Iterable[str] = FAMILY_NAMES) -> FloatArray:
    """Sum of the given families' scores, rounded to 12 places (stable tie-breaking)."""
    fams = list(families)
    total = np.zeros(x.shape[0])
    for fam in fams:
        total = total + family_score(x, fam)
    return np.round(total, 12)


def seed_score(x: FloatArray, families: Iterable[str] = FAMILY_NAMES) -> FloatArray:
    """The discrimination score if that family is active, else the priority of the active ones."""
    fams = list(families)
    if "discrimination" in fams:
        return np.round(family_score(x, "discrimination"), 12)
    return priority(x, fams)
