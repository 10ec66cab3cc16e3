"""The experiments of paper §6: method comparison, feature ablation, held-out system, drift.

Stochastic baselines are drawn ``bootstrap`` times, draw b of method M from the Generator
``SeedSequence(seed, spawn_key=(key(M), b))``, and report the mean with a 95% percentile
interval; deterministic methods report a point estimate.  Results are keyed by method,
fraction and system name, so nothing depends on file or argument order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from lm_eval_memrisk.scoring.intervals import wilson_interval
from selector import baselines as bl
from selector.features import (
    FAMILY_NAMES,
    feature_matrix,
    priority,
    seed_score,
    standardize,
    trace_feature_matrix,
)
from selector.greedy import GreedyResult, check_cover, greedy_order, subset_size
from selector.io import RunMatrix
from selector.objective import (
    METRICS,
    TIE_TOL,
    Objective,
    Weights,
    average_ranks,
    bottom_k_membership,
    spearman,
)

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

FRACTIONS: tuple[float, ...] = (0.2, 0.3, 0.5)
SELECTOR = "Risk-Preserving"
METHODS: tuple[str, ...] = (
    "Random", "Stratified", "Difficulty", "Disagreement", "Clustering", "Trace-Feature", SELECTOR,
)


@dataclass(frozen=True)
class Settings:
    """Everything that determines the outputs besides the input runs."""

    fraction: float = 0.2
    fractions: tuple[float, ...] = FRACTIONS
    weights: Weights = field(default_factory=Weights)
    seed: int = 0
    bootstrap: int = 1000
    held_out: tuple[str, ...] | None = None
    """Systems to hold out in turn (None: every system)."""
    progress: bool | None = None
    """tqdm on the bootstrap: None shows it only on a terminal."""

    def all_fractions(self) -> tuple[float, ...]:
        return tuple(sorted(set(self.fractions) | {self.fraction}))


def select_order(m: RunMatrix, x: FloatArray, weights: Weights, k_max: int,
                 families: Iterable[str] = FAMILY_NAMES, reference: Sequence[int] | None = None) -> GreedyResult:
    """The Risk-Preserving selection order on the systems ``reference`` (all if None)."""
    fams = list(families)
    passed = m.passed if reference is None else m.passed[:, list(reference)]
    obj = Objective(passed, m.risk_codes, weights)
    return greedy_order(obj, m.risk_codes, seed_score(x, fams), priority(x, fams), k_max)


def mask_of(n: int, index: Sequence[int] | IntArray) -> NDArray[np.bool_]:
    mask = np.zeros(n, dtype=bool)
    mask[np.asarray(index, dtype=np.int64)] = True
    return mask


def summarise(values: FloatArray, stochastic: bool) -> dict[str, float]:
    """{"mean", "lo", "hi", "sd"} (2.5/97.5 percentiles) or {"point"} for one value."""
    if not stochastic:
        return {"point": float(values[0])}
    lo, hi = np.percentile(values, [2.5, 97.5])
    return {"mean": float(values.mean()), "lo": float(lo), "hi": float(hi), "sd": float(values.std())}


# ----------------------------------------------------------------------------- comparison


def deterministic_subsets(m: RunMatrix, x: FloatArray, order: IntArray, sizes: list[int]) -> dict[str, list[IntArray]]:
    """Subsets of each size for the deterministic methods (the selector from ``order``)."""
    diff, dis = bl.difficulty_order(x), bl.disagreement_order(m.passed)
    return {
        "Difficulty": [np.sort(diff[:k]) for k in sizes],
        "Disagreement": [np.sort(dis[:k]) for k in sizes],
        "Clustering": bl.clustering_subsets(standardize(x), sizes),
        "Trace-Feature": bl.clustering_subsets(standardize(trace_feature_matrix(m)), sizes),
        SELECTOR: [np.sort(order[:k]) for k in sizes],
    }


def bootstrap_masks(m: RunMatrix, sizes: list[int], seed: int, n_draws: int,
                    progress: bool | None = None) -> dict[str, NDArray[np.bool_]]:
    """Method -> (len(sizes), n_draws, N) subset masks of the stochastic baselines."""
    n_ep = len(m.episode_ids)
    codes = m.risk_codes
    out = {name: np.zeros((len(sizes), n_draws, n_ep), dtype=bool) for name in bl.STOCHASTIC}
    with tqdm(total=n_draws * len(bl.STOCHASTIC), desc="bootstrap", unit="draw",
              disable=None if progress is None else not progress, leave=False) as bar:
        for name in bl.STOCHASTIC:
            for b in range(n_draws):
                rng = bl.seeded_rng(seed, name, b)
                subsets = (bl.random_subsets(n_ep, sizes, rng) if name == "Random"
                           else bl.stratified_subsets(codes, sizes, rng))
                for i, idx in enumerate(subsets):
                    out[name][i, b, idx] = True
                bar.update(1)
    return out


def compare_methods(m: RunMatrix, x: FloatArray, order: IntArray, s: Settings) -> list[dict[str, Any]]:
    """The §6.5 table: one row per (method, fraction), plus the full set."""
    obj = Objective(m.passed, m.risk_codes, s.weights)
    n_ep = len(m.episode_ids)
    fractions = s.all_fractions()
    sizes = [subset_size(f, n_ep) for f in fractions]
    full = obj.metrics(np.ones((1, n_ep), dtype=bool))
    rows = [{"method": "Full", "fraction": 1.0, "size": n_ep, "stochastic": False,
             **{k: summarise(full[k], False) for k in METRICS}}]
    det = deterministic_subsets(m, x, order, sizes)
    boot = bootstrap_masks(m, sizes, s.seed, s.bootstrap, s.progress)
    for method in METHODS:
        stochastic = method in bl.STOCHASTIC
        for i, (f, k) in enumerate(zip(fractions, sizes)):
            masks = boot[method][i] if stochastic else mask_of(n_ep, det[method][i])[None, :]
            vals = obj.metrics(masks)
            rows.append({"method": method, "fraction": f, "size": k, "stochastic": stochastic,
                         **{key: summarise(vals[key], stochastic) for key in METRICS}})
            if method == SELECTOR and s.weights.beta > 0 and k < len(m.risk_names):
                rows[-1]["note"] = (f"{k} episodes < {len(m.risk_names)} risk types: the prefix of the "
                                    f"order holds the seeds of the first {k} risks only")
    if not obj.high_risk_defined:  # a tie straddles the bottom-k cut: nothing to detect
        for row in rows:
            row["high_risk"] = {"na": 1.0}
    return rows


# ----------------------------------------------------------------------------- ablation


def ablation(m: RunMatrix, x: FloatArray, order: IntArray, s: Settings) -> list[dict[str, Any]]:
    """Drop each feature family in turn, re-select, and score at every fraction."""
    obj = Objective(m.passed, m.risk_codes, s.weights)
    n_ep = len(m.episode_ids)
    fractions = s.all_fractions()
    sizes = [subset_size(f, n_ep) for f in fractions]
    rows = []
    for dropped in ("none",) + FAMILY_NAMES:
        fams = [f for f in FAMILY_NAMES if f != dropped]
        ord_ = order if dropped == "none" else select_order(m, x, s.weights, max(sizes), fams).order
        for f, k in zip(fractions, sizes):
            vals = obj.metrics(mask_of(n_ep, ord_[:k])[None, :])
            rows.append({"dropped": dropped, "fraction": f, "size": k,
                         **{key: float(vals[key][0]) for key in METRICS}})
    return rows


def psi_steps(m: RunMatrix, order: IntArray, weights: Weights, size: int) -> dict[str, Any]:
    """How many greedy picks up to ``size`` raised Psi, and how many tied (then feature
    priority chose: the only picks an ablation can move)."""
    obj = Objective(m.passed, m.risk_codes, weights)
    n_ep = len(m.episode_ids)
    masks = np.zeros((size, n_ep), dtype=bool)
    for k in range(size):
        masks[k, order[: k + 1]] = True
    psi = obj.psi(masks)
    n_seeds = len(m.risk_names) if weights.beta > 0 else 0
    gains = np.diff(psi, prepend=0.0)[n_seeds:]  # the gain of each pick after the seed phase
    return {"size": size, "seed_picks": min(n_seeds, size), "raised": int((gains > TIE_TOL).sum()),
            "tied": int((gains <= TIE_TOL).sum()), "psi": float(psi[-1])}


# ----------------------------------------------------------------------------- held-out / drift


def desc_ranks(values: FloatArray) -> FloatArray:
    """1 = best (highest value); ties share the average rank."""
    return np.asarray(values.shape[-1] + 1.0 - average_ranks(values), dtype=np.float64)


def held_out(m: RunMatrix, s: Settings) -> list[dict[str, Any]]:
    """Select without system h (features leave-one-system-out), then place h on the subset."""
    n_ep, n_sys = len(m.episode_ids), len(m.systems)
    k = subset_size(s.fraction, n_ep)
    names = m.systems if s.held_out is None else tuple(sorted(s.held_out))
    full_obj = Objective(m.passed, m.risk_codes, s.weights)
    full_counts = m.passed.sum(axis=0).astype(np.float64)
    rows = []
    for name in names:
        if name not in m.systems:
            raise ValueError(f"held-out system {name!r} is not among the runs ({', '.join(m.systems)})")
        h = m.systems.index(name)
        ref = [i for i in range(n_sys) if i != h]
        if len(ref) < 2:
            continue
        order = select_order(m, feature_matrix(m, ref), s.weights, k, reference=ref).order
        mask = mask_of(n_ep, order)
        counts = m.passed[mask].sum(axis=0).astype(np.float64)
        ref_obj = Objective(m.passed[:, ref], m.risk_codes, s.weights)
        all_vals = full_obj.metrics(mask[None, :])
        rows.append({
            "system": name, "size": int(mask.sum()),
            "spearman_reference": float(ref_obj.metrics(mask[None, :])["spearman"][0]),
            "spearman_all": float(all_vals["spearman"][0]),
            "risk_coverage": float(all_vals["risk_coverage"][0]),
            "pass_subset": float(counts[h] / mask.sum()), "pass_full": float(full_counts[h] / n_ep),
            "rank_subset": float(desc_ranks(counts)[h]), "rank_full": float(desc_ranks(full_counts)[h]),
            "high_risk_subset": float(bottom_k_membership(counts, full_obj.k)[h]),
            "high_risk_full": float(full_obj.ref_membership[h]),
            "risk_counts": _risk_counts(m, mask),
        })
    return rows


def _risk_counts(m: RunMatrix, mask: NDArray[np.bool_]) -> dict[str, int]:
    counts = np.bincount(m.risk_codes[mask], minlength=len(m.risk_names))
    return {r: int(c) for r, c in zip(m.risk_names, counts)}


def drift_check(m_all: RunMatrix, system: str, subset: IntArray, weights: Weights) -> dict[str, Any]:
    """Does the subset place a new system where the full benchmark does?"""
    h = m_all.systems.index(system)
    n_ep = len(m_all.episode_ids)
    mask = mask_of(n_ep, subset)
    sub = m_all.passed[mask].sum(axis=0).astype(np.float64)
    full = m_all.passed.sum(axis=0).astype(np.float64)
    k = weights.effective_k(len(m_all.systems))
    lo, hi = wilson_interval(int(sub[h]), int(mask.sum()))
    rank_s, rank_f = float(desc_ranks(sub)[h]), float(desc_ranks(full)[h])
    pass_f = float(full[h] / n_ep)
    return {
        "system": system, "n_systems": len(m_all.systems),
        "pass_subset": float(sub[h] / mask.sum()), "pass_subset_lo": lo, "pass_subset_hi": hi,
        "pass_full": pass_f, "rank_subset": rank_s, "rank_full": rank_f,
        "spearman_all": spearman(sub, full),
        "high_risk_subset": float(bottom_k_membership(sub, k)[h]),
        "high_risk_full": float(bottom_k_membership(full, k)[h]),
        "rank_preserved": rank_s == rank_f, "full_pass_in_interval": lo <= pass_f <= hi,
    }


# ----------------------------------------------------------------------------- pipeline


@dataclass(frozen=True)
class PipelineResult:
    matrix: RunMatrix
    settings: Settings
    features: FloatArray
    order: IntArray
    """Risk-Preserving selection order up to the largest fraction."""
    subset: IntArray
    """Sorted episode indices of the subset at ``settings.fraction``."""
    comparison: list[dict[str, Any]]
    ablation: list[dict[str, Any]]
    held_out: list[dict[str, Any]]
    drift: dict[str, Any] | None = None
    psi_steps: dict[str, Any] | None = None
    """:func:`psi_steps` at ``settings.fraction``."""


def select_subset(m: RunMatrix, s: Settings) -> tuple[FloatArray, IntArray, IntArray]:
    """(features, selection order to the largest fraction, subset at ``s.fraction``)."""
    x = feature_matrix(m)
    n_ep = len(m.episode_ids)
    sizes = [subset_size(f, n_ep) for f in s.all_fractions()]
    check_cover([subset_size(s.fraction, n_ep)], len(m.risk_names), s.weights.beta)
    order = select_order(m, x, s.weights, max(sizes)).order
    return x, order, np.sort(order[:subset_size(s.fraction, n_ep)])


def run_pipeline(m: RunMatrix, s: Settings, drift_runs: RunMatrix | None = None,
                 drift_system: str | None = None) -> PipelineResult:
    """Select, then run the comparison, ablation, held-out and (optional) drift checks."""
    x, order, subset = select_subset(m, s)
    drift = None
    if drift_runs is not None and drift_system is not None:
        if drift_runs.episode_ids != m.episode_ids:
            raise ValueError("the drift-check runs must cover exactly the reference episodes")
        drift = drift_check(drift_runs, drift_system, subset, s.weights)
    return PipelineResult(
        matrix=m, settings=s, features=x, order=order, subset=subset,
        comparison=compare_methods(m, x, order, s), ablation=ablation(m, x, order, s),
        held_out=held_out(m, s), drift=drift,
        psi_steps=psi_steps(m, order, s.weights, subset_size(s.fraction, len(m.episode_ids))),
    )
