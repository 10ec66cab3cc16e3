"""The risk-preserving selector: a risk-cover seed phase, then greedy forward selection.

1. Seed phase (only when coverage counts, beta > 0): for every risk type (in sorted
   order) the episode with the highest discrimination score, ties broken by episode
   id.  After it cov(S) = 1 for every larger S, so beta's size never changes a later
   pick: beta > 0 means "cover every risk first", beta = 0 "ignore coverage" (then the
   greedy starts from the empty set).  A subset smaller than the number of risk types
   cannot be covered and is refused (:func:`check_cover`), never silently cut.
2. Greedy: repeatedly add the episode with the largest Psi(S + e) (= largest gain); ties
   within ``TIE_TOL`` go to the highest feature priority, then to the smallest episode id.

The selection order is a sequence, so the subset for any size k is its first k
episodes (k = floor(fraction * N + 0.5)); one run serves every fraction.

Speed (exact, checked against :func:`reference_greedy_order`): the gain of e depends
only on e's pass flags for the systems ``q`` whose counts on S are within 1 of another
system's count (every other pair keeps its order whatever e adds).  With no such system
every gain ties and the next episode in priority order is taken.  With few (<= 10), all
2**q projections are scored once and the first episodes in priority order are checked
for the best one; otherwise one representative per projection present is scored.
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


def check_cover(sizes: list[int], n_risks: int, beta: float) -> None:
    """Refuse subset sizes below the number of risk types when coverage counts (beta > 0)."""
    small = [k for k in sizes if k < n_risks]
    if beta > 0 and small:
        raise ValueError(
            f"a subset of {min(small)} episodes cannot cover all {n_risks} risk types; "
            "choose a larger fraction, or --beta 0 to select without covering every risk"
        )


@dataclass(frozen=True)
class GreedyResult:
    order: IntArray
    """Episode indices in selection order (seeds first)."""
    n_seeds: int


class _Pool:
    """The episodes not yet selected, in priority order and grouped by identical pass row."""

    def __init__(self, passed: NDArray[np.bool_], priority: FloatArray, taken: list[int]) -> None:
        rows, inv = np.unique(passed, axis=0, return_inverse=True)
        self.group_of = inv.reshape(-1)
        self.rows = rows.astype(np.int64)
        self.cols = np.ascontiguousarray(self.rows.T)
        self.passed = passed.astype(np.int64)
        self.prio_pos = priority_positions(priority)
        self.by_priority = np.argsort(self.prio_pos)
        self.front = 0
        self.members = np.lexsort((self.prio_pos, self.group_of))
        self.ptr = np.searchsorted(self.group_of[self.members], np.arange(len(rows)))
        self.end = np.append(self.ptr[1:], len(self.group_of))
        self.alive = np.ones(len(self.group_of), dtype=bool)
        self.alive[taken] = False
        self.head = np.full(len(rows), _NONE, dtype=np.int64)
        for g in range(len(rows)):
            self._settle(g)
        self._advance_front()

    def _settle(self, g: int) -> None:
        while self.ptr[g] < self.end[g] and not self.alive[self.members[self.ptr[g]]]:
            self.ptr[g] += 1
        live = self.ptr[g] < self.end[g]
        self.head[g] = self.prio_pos[self.members[self.ptr[g]]] if live else _NONE

    def _advance_front(self) -> None:
        while self.front < len(self.by_priority) and not self.alive[self.by_priority[self.front]]:
            self.front += 1

    def first_alive(self, width: int) -> IntArray:
        """A prefix of the alive episodes in priority order (at most ``width``)."""
        window = self.by_priority[self.front:self.front + width]
        return window[self.alive[window]]

    def head_member(self, g: int) -> int:
        return int(self.members[self.ptr[g]])

    def take(self, e: int) -> None:
        """Remove episode ``e``, which must be the head of its group."""
        self.alive[e] = False
        self._settle(int(self.group_of[e]))
        self._advance_front()


_NONE = np.iinfo(np.int64).max
#: Up to this many close systems, all 2**q projections are scored at once.
_DIRECT_Q = 10
#: How many alive episodes (in priority order) the fast path looks at.
_WINDOW = 128


def _close_systems(counts: IntArray) -> IntArray:
    """Systems whose count is within 1 of some other system's count."""
    d = np.abs(counts[:, None] - counts[None, :])
    np.fill_diagonal(d, 2)
    return np.flatnonzero((d <= 1).any(axis=1))


def _int_rank_stats(v: IntArray) -> tuple[IntArray, IntArray]:
    """rank_stats of integer rows (C, m): a per-row histogram when the value range is small."""
    lo = v.min()
    width = int(v.max() - lo) + 1
    if width > 4 * v.shape[1]:
        return (v[:, None, :] < v[:, :, None]).sum(axis=-1), (v[:, None, :] == v[:, :, None]).sum(axis=-1)
    rows = np.arange(v.shape[0])[:, None]
    key = rows * width + (v - lo)
    hist = np.bincount(key.ravel(), minlength=v.shape[0] * width).reshape(v.shape[0], width)
    below = np.cumsum(hist, axis=1) - hist
    return below[rows, v - lo], hist[rows, v - lo]


def _psi_gain(obj: Objective, counts: IntArray, q: IntArray, add_q: IntArray) -> FloatArray:
    """alpha*rho + gamma*hr after adding candidates with pass flags ``add_q`` on systems ``q``.

    cov is full after the seed phase (beta > 0) and weightless without it (beta = 0),
    so it does not enter the argmax.  Only pairs inside
    ``q`` are recomputed: a system outside ``q`` is >= 2 away from every other one, so
    adding one episode changes neither its rank nor its high-risk membership.
    """
    n = counts.shape[0]
    below, ties = rank_stats(counts)
    centre = (n + 1) / 2.0
    ref = obj.ref_ranks - centre
    other = np.ones(n, dtype=bool)
    other[q] = False
    r_o = below[other] + (ties[other] + 1.0) / 2.0 - centre
    member_o = np.clip(obj.k - below[other], 0.0, ties[other]) / ties[other]
    cq = counts[q]
    inner_below = (cq[None, :] < cq[:, None]).sum(axis=1)
    q_below, q_ties = _int_rank_stats(cq[None, :] + add_q)
    b = (below[q] - inner_below)[None, :] + q_below
    r = b + (q_ties + 1.0) / 2.0 - centre
    num = float(r_o @ ref[other]) + r @ ref[q]
    den = np.sqrt((float(r_o @ r_o) + (r * r).sum(axis=1)) * float(ref @ ref))
    rho = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    member = np.clip(obj.k - b, 0.0, q_ties) / q_ties
    hr = (float(np.minimum(member_o, obj.ref_membership[other]).sum())
          + np.minimum(member, obj.ref_membership[q][None, :]).sum(axis=1)) / obj.k
    return np.asarray(obj.weights.alpha * rho + obj.weights.gamma * hr, dtype=np.float64)


def _bits(q_size: int) -> IntArray:
    return np.int64(1) << np.arange(q_size, dtype=np.int64)


def _pick_small_q(obj: Objective, pool: _Pool, counts: IntArray, q: IntArray) -> int:
    """Score all 2**q projections; look in the priority window first, then everywhere."""
    codes_all = np.arange(1 << q.size, dtype=np.int64)
    psi_all = _psi_gain(obj, counts, q, (codes_all[:, None] >> np.arange(q.size)) & 1)
    window = pool.first_alive(_WINDOW)
    hit = psi_all[pool.passed[window[:, None], q[None, :]] @ _bits(q.size)] >= psi_all.max() - TIE_TOL
    if hit.any():  # the best conceivable projection occurs early in priority order
        return int(window[np.argmax(hit)])
    live = np.flatnonzero(pool.head < _NONE)
    codes = _bits(q.size) @ pool.cols[q][:, live]
    present = np.bincount(codes, minlength=codes_all.size) > 0
    best = psi_all[present].max()
    eligible = live[psi_all[codes] >= best - TIE_TOL]
    return pool.head_member(int(eligible[np.argmin(pool.head[eligible])]))


def _pick_large_q(obj: Objective, pool: _Pool, counts: IntArray, q: IntArray) -> int:
    """Score one representative per projection present among the alive episodes."""
    live = np.flatnonzero(pool.head < _NONE)
    sub = pool.cols[q][:, live]
    if q.size <= 62:
        _, first, cls = np.unique(_bits(q.size) @ sub, return_index=True, return_inverse=True)
        add_q = sub[:, first].T
    else:
        add_q, cls = np.unique(sub.T, axis=0, return_inverse=True)
    psi = _psi_gain(obj, counts, q, add_q)
    eligible = live[(psi >= psi.max() - TIE_TOL)[cls.reshape(-1)]]
    return pool.head_member(int(eligible[np.argmin(pool.head[eligible])]))


def _pick(obj: Objective, pool: _Pool, counts: IntArray) -> int:
    q = _close_systems(counts)
    if q.size == 0:  # no candidate can change the ranking: every gain is equal
        return int(pool.first_alive(1)[0])
    if q.size <= _DIRECT_Q:
        return _pick_small_q(obj, pool, counts, q)
    return _pick_large_q(obj, pool, counts, q)


def _seeds(obj: Objective, risk_codes: IntArray, seed_scores: FloatArray, k_max: int) -> list[int]:
    if obj.weights.beta <= 0:
        return []
    check_cover([k_max], len(np.unique(risk_codes)), obj.weights.beta)
    return seed_phase(risk_codes, seed_scores)


def greedy_order(obj: Objective, risk_codes: IntArray, seed_scores: FloatArray,
                 priority: FloatArray, k_max: int) -> GreedyResult:
    """Selection order of the first ``k_max`` episodes (seed phase, then greedy)."""
    passed = obj.passed.astype(bool)
    k_max = min(k_max, passed.shape[0])
    chosen = _seeds(obj, risk_codes, seed_scores, k_max)
    n_seeds = len(chosen)
    pool = _Pool(passed, priority, chosen)
    counts = passed[chosen].sum(axis=0).astype(np.int64)
    while len(chosen) < k_max:
        e = _pick(obj, pool, counts)
        pool.take(e)
        chosen.append(e)
        counts += pool.passed[e]
    return GreedyResult(order=np.asarray(chosen, dtype=np.int64), n_seeds=n_seeds)


def reference_greedy_order(obj: Objective, risk_codes: IntArray, seed_scores: FloatArray,
                           priority: FloatArray, k_max: int) -> IntArray:
    """Plain O(N) per step implementation of the same rule (for tests and small sets)."""
    n_ep = obj.passed.shape[0]
    chosen = _seeds(obj, risk_codes, seed_scores, min(k_max, n_ep))
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
