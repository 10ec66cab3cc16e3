"""The selection objective Psi(S) = alpha*rho + beta*cov + gamma*hr and its parts (paper §5.1).

All functions are vectorised over leading axes, so one call scores a whole batch of
subsets (bootstrap seeds, greedy candidates).  A subset is described by the per-system
*pass counts* on it: every system is scored on the same episodes, so ranking systems by
count is ranking them by mean pass.

Definitions (documented choices):

* ``rho``: Spearman correlation between the system ranking on S and on the full set E,
  ties given average ranks; if either ranking is constant (all systems tied, e.g. an
  empty subset) rho is defined as 0.
* ``cov``: fraction of the risk types of E that have at least one episode in S.
* ``hr``: recall of the high-risk systems, the bottom ``k`` by pass rate.  With ties the
  bottom-k set is fuzzy: a tie group straddling the cut gets membership
  ``(free slots) / (group size)`` each (the probability of being flagged under random
  tie-breaking).  ``hr(S) = sum_i min(m_i(S), m_i(E)) / k``: the plain recall when there
  are no ties, 1.0 for S = E.
* ``fail coverage`` (an evaluation metric, not in Psi): the share of all failing
  (episode, system) pairs of E whose episode is in S; 1.0 when E has no failure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]

#: Psi values closer than this count as a tie (then feature priority, then id decide).
TIE_TOL = 1e-12


@dataclass(frozen=True)
class Weights:
    """Selector settings: Psi weights and the size of the high-risk set."""

    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.0
    high_risk_k: int = 2

    def effective_k(self, n_systems: int) -> int:
        """``high_risk_k`` clamped to ``n_systems - 1`` (a bottom-k of everyone means nothing)."""
        return max(1, min(self.high_risk_k, n_systems - 1))


def rank_stats(values: NDArray[np.floating] | NDArray[np.integer]) -> tuple[FloatArray, FloatArray]:
    """(number strictly below, tie-group size incl. self) along the last axis."""
    v = np.asarray(values, dtype=np.float64)
    below = (v[..., None, :] < v[..., :, None]).sum(axis=-1).astype(np.float64)
    ties = (v[..., None, :] == v[..., :, None]).sum(axis=-1).astype(np.float64)
    return below, ties


def average_ranks(values: NDArray[np.floating] | NDArray[np.integer]) -> FloatArray:
    """1-based ascending ranks along the last axis, ties -> average rank."""
    below, ties = rank_stats(values)
    return below + (ties + 1.0) / 2.0


def spearman_to(ranks: FloatArray, ref_ranks: FloatArray) -> FloatArray:
    """Pearson correlation of rank vectors (last axis) with ``ref_ranks``; 0 if either is constant."""
    r = ranks - ranks.mean(axis=-1, keepdims=True)
    q = ref_ranks - ref_ranks.mean()
    num = (r * q).sum(axis=-1)
    den = np.sqrt((r * r).sum(axis=-1) * float((q * q).sum()))
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, num / safe, 0.0)


def spearman(a: NDArray[np.floating], b: NDArray[np.floating]) -> float:
    """Spearman rho of two score vectors (average ranks; 0 if either is constant)."""
    return float(spearman_to(average_ranks(np.asarray(a)), average_ranks(np.asarray(b))))


def bottom_k_membership(values: NDArray[np.floating] | NDArray[np.integer], k: int) -> FloatArray:
    """Fuzzy membership of each system in the bottom-k by value (ties share the free slots)."""
    below, ties = rank_stats(values)
    return np.clip(k - below, 0.0, ties) / ties


def bottom_k_defined(values: NDArray[np.floating] | NDArray[np.integer], k: int) -> bool:
    """Whether the bottom-k set is unambiguous: no tie group straddles the cut."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    return 0 < k < v.size and bool(v[k - 1] < v[k])


def high_risk_recall(membership: FloatArray, ref_membership: FloatArray, k: int) -> FloatArray:
    """``sum_i min(m_i(S), m_i(E)) / k`` along the last axis."""
    return np.asarray(np.minimum(membership, ref_membership).sum(axis=-1) / k, dtype=np.float64)


def risk_coverage(masks: BoolArray, risk_onehot: FloatArray) -> FloatArray:
    """Fraction of the risk types of E present in each subset (masks: (..., N))."""
    present = (masks.astype(np.float64) @ risk_onehot) > 0
    return np.asarray(present.sum(axis=-1) / risk_onehot.shape[1], dtype=np.float64)


def fail_coverage(masks: BoolArray, fails: FloatArray) -> FloatArray:
    """Share of all failing (episode, system) pairs whose episode is in the subset."""
    total = float(fails.sum())
    if total == 0:
        return np.ones(masks.shape[:-1])
    return (masks.astype(np.float64) @ fails) / total


class Objective:
    """Psi and the evaluation metrics for one pass matrix (episodes x systems)."""

    def __init__(self, passed: BoolArray, risk_codes: IntArray, weights: Weights) -> None:
        if passed.ndim != 2 or passed.shape[1] < 2:
            raise ValueError("the pass matrix needs at least 2 systems")
        self.passed = passed.astype(np.float64)
        self.weights = weights
        self.k = weights.effective_k(passed.shape[1])
        n_risks = int(risk_codes.max()) + 1 if risk_codes.size else 0
        self.risk_onehot = np.eye(n_risks)[risk_codes]
        self.fails = (1.0 - self.passed).sum(axis=1)
        full = self.passed.sum(axis=0)
        self.ref_ranks = average_ranks(full)
        self.ref_membership = bottom_k_membership(full, self.k)
        self.high_risk_defined = bottom_k_defined(full, self.k)
        """Whether the high-risk set of the full set is well-defined (reported only then)."""

    def rho_hr(self, below: FloatArray, ties: FloatArray) -> tuple[FloatArray, FloatArray]:
        """rho and hr from :func:`rank_stats` of the subset counts."""
        rho = spearman_to(below + (ties + 1.0) / 2.0, self.ref_ranks)
        member = np.clip(self.k - below, 0.0, ties) / ties
        return rho, high_risk_recall(member, self.ref_membership, self.k)

    def rho(self, counts: FloatArray) -> FloatArray:
        return self.rho_hr(*rank_stats(counts))[0]

    def hr(self, counts: FloatArray) -> FloatArray:
        return self.rho_hr(*rank_stats(counts))[1]

    def psi_counts(self, counts: FloatArray, cov: FloatArray | float) -> FloatArray:
        """Psi from per-system pass counts on S (..., n) and the risk coverage of S."""
        w = self.weights
        rho, hr = self.rho_hr(*rank_stats(counts))
        return w.alpha * rho + w.beta * np.asarray(cov) + w.gamma * hr

    def counts(self, masks: BoolArray) -> FloatArray:
        return masks.astype(np.float64) @ self.passed

    def psi(self, masks: BoolArray) -> FloatArray:
        """Psi of each subset given as a boolean mask over episodes (..., N)."""
        return self.psi_counts(self.counts(masks), risk_coverage(masks, self.risk_onehot))

    def metrics(self, masks: BoolArray) -> dict[str, FloatArray]:
        """The four evaluation metrics of §6 for each subset mask (..., N)."""
        rho, hr = self.rho_hr(*rank_stats(self.counts(masks)))
        return {
            "spearman": rho,
            "fail_coverage": fail_coverage(masks, self.fails),
            "risk_coverage": risk_coverage(masks, self.risk_onehot),
            "high_risk": hr,
        }


METRICS: tuple[str, ...] = ("spearman", "fail_coverage", "risk_coverage", "high_risk")
