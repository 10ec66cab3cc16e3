"""The six baselines of paper §5.4.

Stochastic (one subset per seeded Generator; the bootstrap draws 1,000 of them):

* ``Random``: the first k of a uniform permutation.
* ``Stratified``: per risk, the first n_r of a uniform permutation of its episodes;
  n_r is proportional to the risk's size (largest remainder, ties to the lower risk).

Deterministic (one subset per size):

* ``Difficulty``: the hardest episodes: fail rate desc, tier desc, turns desc, id.
* ``Disagreement``: pass-rate variance p (1 - p) over systems desc, then id.
* ``Clustering``: k-medoids on the standardised 12 features.
* ``Trace-Feature``: k-medoids on standardised trace-only metrics.

k-medoids is the Voronoi-iteration algorithm with farthest-first initialisation
(start at the episode nearest the feature mean; ties to the smaller index), so it is
deterministic; the subset is the k medoids.  Nearest-medoid search uses each point's
sorted neighbour list, with an exact fallback when no medoid is in the list.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from selector.features import FEATURE_NAMES

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

STOCHASTIC: tuple[str, ...] = ("Random", "Stratified")
DETERMINISTIC: tuple[str, ...] = ("Difficulty", "Disagreement", "Clustering", "Trace-Feature")
#: Fixed per-method keys for deriving bootstrap seeds (never reorder).
SEED_KEYS: dict[str, int] = {"Random": 1, "Stratified": 2}
_NEIGHBOURS = 32


# ----------------------------------------------------------------------------- stochastic


def random_subsets(n_episodes: int, sizes: list[int], rng: np.random.Generator) -> list[IntArray]:
    """Uniform subsets of each size (prefixes of one permutation)."""
    perm = rng.permutation(n_episodes)
    return [np.sort(perm[:k]) for k in sizes]


def stratified_allocation(risk_sizes: IntArray, k: int) -> IntArray:
    """Proportional allocation of k over risks by largest remainder."""
    quota = risk_sizes * k / risk_sizes.sum()
    alloc = np.floor(quota).astype(np.int64)
    rest = k - int(alloc.sum())
    order = np.lexsort((np.arange(len(quota)), -(quota - alloc)))
    alloc[order[:rest]] += 1
    return np.asarray(np.minimum(alloc, risk_sizes), dtype=np.int64)


def stratified_subsets(risk_codes: IntArray, sizes: list[int], rng: np.random.Generator) -> list[IntArray]:
    """Risk-stratified uniform subsets of each size."""
    risks = np.unique(risk_codes)
    perms = [rng.permutation(np.flatnonzero(risk_codes == r)) for r in risks]
    sizes_r = np.array([len(p) for p in perms], dtype=np.int64)
    out = []
    for k in sizes:
        alloc = stratified_allocation(sizes_r, k)
        out.append(np.sort(np.concatenate([p[:a] for p, a in zip(perms, alloc)])))
    return out


def seeded_rng(seed: int, method: str, index: int) -> np.random.Generator:
    """The Generator of bootstrap draw ``index`` of ``method``, derived via SeedSequence."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(SEED_KEYS[method], index))))


# ----------------------------------------------------------------------------- ranking


def difficulty_order(x: FloatArray) -> IntArray:
    """Hardest first: fail rate, tier, turns (all desc), then index."""
    col = {n: i for i, n in enumerate(FEATURE_NAMES)}
    n = x.shape[0]
    return np.lexsort((np.arange(n), -x[:, col["n_turns"]], -x[:, col["tier"]], -x[:, col["fail_rate"]]))


def disagreement_order(passed: NDArray[np.bool_]) -> IntArray:
    """Largest pass-rate variance p (1 - p) first, then index."""
    p = passed.mean(axis=1)
    return np.lexsort((np.arange(len(p)), -np.round(p * (1.0 - p), 12)))


# ----------------------------------------------------------------------------- k-medoids


def _sqdist(a: FloatArray, b: FloatArray) -> FloatArray:
    """Squared Euclidean distances, rounded to 10 places so ties are stable."""
    d = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * (a @ b.T)
    return np.asarray(np.round(np.maximum(d, 0.0), 10), dtype=np.float64)


def neighbour_lists(x: FloatArray, m: int = _NEIGHBOURS) -> IntArray:
    """(N, m) nearest points of each point (exact KD-tree search), sorted by (distance, index)."""
    m = min(m, x.shape[0])
    dist, idx = cKDTree(x).query(x, k=m)
    dist, idx = dist.reshape(len(x), m), idx.reshape(len(x), m).astype(np.int64)
    order = np.lexsort((idx, np.round(dist, 10)), axis=1)
    return np.take_along_axis(idx, order, axis=1)


def farthest_first(x: FloatArray, k: int) -> IntArray:
    """Farthest-first traversal of k points from the point nearest the mean."""
    n = x.shape[0]
    k = min(k, n)
    sq = (x * x).sum(axis=1)
    start = int(np.argmin(_sqdist(x, x.mean(axis=0, keepdims=True))[:, 0]))
    order = np.empty(k, dtype=np.int64)
    order[0] = start
    mind = np.full(n, np.inf)
    nxt = start
    for i in range(k):
        order[i] = nxt
        d = np.round(np.maximum(sq + sq[nxt] - 2.0 * (x @ x[nxt]), 0.0), 10)
        np.minimum(mind, d, out=mind)
        mind[nxt] = -1.0  # chosen points stay at -1: never picked again
        nxt = int(np.argmax(mind))
    return order


def nearest_medoid(x: FloatArray, medoids: IntArray, nbrs: IntArray) -> IntArray:
    """Each point's nearest medoid (ties to the smaller index); medoids map to themselves."""
    n = x.shape[0]
    is_med = np.zeros(n, dtype=bool)
    is_med[medoids] = True
    hit = is_med[nbrs]
    near: IntArray = nbrs[np.arange(n), hit.argmax(axis=1)]
    miss = np.flatnonzero(~hit.any(axis=1))
    if miss.size:
        srt = np.sort(medoids)
        near[miss] = srt[np.argmin(_sqdist(x[miss], x[srt]), axis=1)]
    near[medoids] = medoids
    return near


def cluster_medoids(x: FloatArray, labels: IntArray) -> IntArray:
    """The exact medoid of each cluster (min sum of distances; ties to the smaller index)."""
    order = np.lexsort((np.arange(len(labels)), labels))
    lab = labels[order]
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    sizes = np.diff(np.r_[starts, len(lab)])
    out = np.empty(len(starts), dtype=np.int64)
    for s in np.unique(sizes):
        which = np.flatnonzero(sizes == s)
        members = order[starts[which][:, None] + np.arange(s)[None, :]]
        if s <= 64:
            pts = x[members]
            diff = pts[:, :, None, :] - pts[:, None, :, :]
            cost = np.round(np.sqrt((diff * diff).sum(axis=-1)).sum(axis=-1), 10)
        else:  # large clusters one at a time
            cost = np.stack([np.sqrt(_sqdist(x[mem], x[mem])).sum(axis=1) for mem in members])
        out[which] = members[np.arange(len(which)), np.argmin(cost, axis=1)]
    return np.sort(out)


def kmedoids(x: FloatArray, init: IntArray, nbrs: IntArray, max_iter: int = 20) -> IntArray:
    """Voronoi-iteration k-medoids from ``init``; returns the sorted medoid indices."""
    med = np.sort(init)
    for _ in range(max_iter):
        new = cluster_medoids(x, nearest_medoid(x, med, nbrs))
        if np.array_equal(new, med):
            break
        med = new
    return med


def clustering_subsets(x: FloatArray, sizes: list[int]) -> list[IntArray]:
    """k-medoids subsets of each size on standardised features ``x``."""
    init = farthest_first(x, max(sizes))
    nbrs = neighbour_lists(x)
    return [kmedoids(x, init[:k], nbrs) for k in sizes]
