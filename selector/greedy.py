"""The risk-preserving selector: a risk-cover seed phase, then greedy forward selection.

1. Seed phase: for every risk type (in sorted order) the episode with the highest
   discrimination score, ties broken by episode id.
2. Greedy: repeatedly add the episode with the largest Psi(S + e) (= largest gain); ties
   within ``TIE_TOL`` go to the highest feature priority, then to the smallest episode id.

The selection order is a sequence, so the subset for any size k is its first k
episodes (k = floor(fraction * N + 0.5)); one run serves every fraction.

Speed: the gain of e depends only on e's pass row, and only on its entries for systems
whose pass counts on S are within 1 of another system's (any other pair keeps its order
whatever e adds).  Each step therefore scores one representative per distinct projection
of the pass rows onto those systems - exact, and cheap even for 10,000 episodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from selector.objective import TIE_TOL, Objective, rank_stats

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def subset_size(fraction: float, n_episodes: int) -> int:
    """k = floor(fraction * N + 0.5), at least 1."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
    return max(1, min(n_episodes, int(np.floor(fraction * n_episodes + 0.5))))


def priority_positions(priority: FloatArray) -> IntArray:
    """Position of each episode when sorted by (priority desc, index asc)."""
    n = priority.shape[0]
    order = np.lexsort((np.arange(n), -priority))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    return pos


def seed_phase(risk_codes: IntArray, seed_score: FloatArray) -> list[int]:
    """One seed per risk (sorted risk order): its highest seed score, ties -> smallest index."""
    seeds = []
    for r in np.unique(risk_codes):
        members = np.flatnonzero(risk_codes == r)
        seeds.append(int(members[np.argmax(seed_score[members])]))
    return seeds


@dataclass(frozen=True)
class GreedyResult:
    order: IntArray
    """Episode indices in selection order (seeds first)."""
    n_seeds: int


class _Groups:
    """Episodes grouped by identical pass row, each group a queue in priority order."""

    def __init__(self, passed: NDArray[np.bool_], prio_pos: IntArray, taken: list[int]) -> None:
        rows, inv = np.unique(passed, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        self.rows = rows.astype(np.int64)
        self.cols = np.ascontiguousarray(self.rows.T)
        self.members = np.lexsort((prio_pos, inv))
        self.prio_pos = prio_pos
        self.ptr = np.searchsorted(inv[self.members], np.arange(len(rows)))
        self.end = np.append(self.ptr[1:], len(inv))
        self.alive = np.ones(len(inv), dtype=bool)
        self.alive[taken] = False
        self.head = np.full(len(rows), np.iinfo(np.int64).max, dtype=np.int64)
        for g in range(len(rows)):
            self._settle(g)

    def _settle(self, g: int) -> None:
        while self.ptr[g] < self.end[g] and not self.alive[self.members[self.ptr[g]]]:
            self.ptr[g] += 1
        live = self.ptr[g] < self.end[g]
        self.head[g] = self.prio_pos[self.members[self.ptr[g]]] if live else np.iinfo(np.int64).max

    def pop(self, g: int) -> int:
        e = int(self.members[self.ptr[g]])
        self.alive[e] = False
        self._settle(g)
        return e


def _close_systems(counts: IntArray) -> IntArray:
    """Systems whose count is within 1 of some other system's count."""
    d = np.abs(counts[:, None] - counts[None, :])
    np.fill_diagonal(d, 2)
    return np.flatnonzero((d <= 1).any(axis=1))


def _candidate_stats(counts: IntArray, q: IntArray, add_q: IntArray) -> tuple[FloatArray, FloatArray]:
    """rank_stats of ``counts`` plus each candidate's pass flags ``add_q`` on the systems ``q``.

    Only pairs inside ``q`` are recomputed: a system outside ``q`` is >= 2 away from
    every other one, so adding one episode cannot change its relations.
    """
    below, ties = rank_stats(counts)
    cq = counts[q]
    inner_below = (cq[None, :] < cq[:, None]).sum(axis=1)
    vq = (cq[None, :] + add_q).astype(np.float64)
    c_below = np.repeat(below[None, :], add_q.shape[0], axis=0)
    c_ties = np.repeat(ties[None, :], add_q.shape[0], axis=0)
    c_below[:, q] = (below[q] - inner_below)[None, :] + (vq[:, None, :] < vq[:, :, None]).sum(axis=-1)
    c_ties[:, q] = (vq[:, None, :] == vq[:, :, None]).sum(axis=-1)
    return c_below, c_ties


#: Up to this many close systems, all 2**q projections are scored directly.
_DIRECT_Q = 10


def _pick_group(obj: Objective, groups: _Groups, counts: IntArray, live: IntArray) -> int:
    q = _close_systems(counts)
    if q.size == 0:  # no candidate can change the ranking: every gain is equal
        return int(live[np.argmin(groups.head[live])])
    sub = groups.cols[q][:, live]
    if q.size <= 62:
        codes = (np.int64(1) << np.arange(q.size, dtype=np.int64)) @ sub
        if q.size <= _DIRECT_Q:  # few projections: score the present ones directly
            present = np.flatnonzero(np.bincount(codes, minlength=1 << q.size))
            add_q = (present[:, None] >> np.arange(q.size)) & 1
            lookup = np.zeros(1 << q.size, dtype=np.int64)
            lookup[present] = np.arange(present.size)
            cls = lookup[codes]
        else:
            _, first, cls = np.unique(codes, return_index=True, return_inverse=True)
            add_q = sub[:, first].T
    else:
        add_q, cls = np.unique(sub.T, axis=0, return_inverse=True)
    cls = cls.reshape(-1)
    rho, hr = obj.rho_hr(*_candidate_stats(counts, q, add_q))
    w = obj.weights
    psi = w.alpha * rho + w.gamma * hr  # cov is full after the seed phase
    ok = psi >= psi.max() - TIE_TOL
    eligible = live[ok[cls]]
    return int(eligible[np.argmin(groups.head[eligible])])


def greedy_order(obj: Objective, risk_codes: IntArray, seed_scores: FloatArray,
                 priority: FloatArray, k_max: int) -> GreedyResult:
    """Selection order of the first ``k_max`` episodes (seed phase, then greedy)."""
    passed = obj.passed.astype(bool)
    n_ep = passed.shape[0]
    k_max = min(k_max, n_ep)
    chosen = seed_phase(risk_codes, seed_scores)[:k_max]
    n_seeds = len(chosen)
    groups = _Groups(passed, priority_positions(priority), chosen)
    counts = passed[chosen].sum(axis=0).astype(np.int64)
    while len(chosen) < k_max:
        live = np.flatnonzero(groups.head < np.iinfo(np.int64).max)
        g = _pick_group(obj, groups, counts, live)
        chosen.append(groups.pop(g))
        counts += groups.rows[g]
    return GreedyResult(order=np.asarray(chosen, dtype=np.int64), n_seeds=n_seeds)


def reference_greedy_order(obj: Objective, risk_codes: IntArray, seed_scores: FloatArray,
                           priority: FloatArray, k_max: int) -> IntArray:
    """Plain O(N) per step implementation of the same rule (for tests and small sets)."""
    n_ep = obj.passed.shape[0]
    chosen = seed_phase(risk_codes, seed_scores)[:k_max]
    pos = priority_positions(priority)
    mask = np.zeros(n_ep, dtype=bool)
    mask[chosen] = True
    while len(chosen) < min(k_max, n_ep):
        cand = np.flatnonzero(~mask)
        masks = np.repeat(mask[None, :], cand.size, axis=0)
        masks[np.arange(cand.size), cand] = True
        psi = obj.psi(masks)
        ok = cand[psi >= psi.max() - TIE_TOL]
        e = int(ok[np.argmin(pos[ok])])
        chosen.append(e)
        mask[e] = True
    return np.asarray(chosen, dtype=np.int64)
