"""Out-of-sample evaluation of subset selection on systems whose ranking is known.

The systems are planted-weakness agents (:mod:`lm_eval_memrisk.running.weak`) with a rate
p < 1, plus reference agents.  A planted agent fails an episode exactly when one of
its acting weaknesses fires, each firing kept with probability p by a seeded coin, so
its *expected* pass count on any episode set is known in closed form:
``sum over episodes of (1 - p) ** (number of wrong replies it can give there)``
(:meth:`~lm_eval_memrisk.running.weak.WeakAgent.pass_probability`).  That gives the
known ranking and the known high-risk (bottom-k) systems, with no estimation.

Protocol: every method selects on the outcomes of seed 0 (the *selection* runs); the
subsets are then scored on fresh outcomes of the same systems under other seeds (the
*evaluation* runs), against the known ranking:

* ``spearman``: rho between the systems' pass counts on the subset (fresh outcomes)
  and their known expected pass rates on the full set;
* ``high_risk``: recall of the known bottom-k systems (tie-aware membership on the
  subset), reported only when the known bottom k is well-defined;
* ``in_sample_spearman``: the number the selector's own report shows (rho against the
  full-set ranking of the same seed-0 outcomes it selected on), for contrast.

Real models (optional, :class:`RealRuns`): logged lm-eval runs of a model sampled at a
temperature under different seeds join the planted systems.  Their ranking is not known
in closed form, so their "known" pass count is *estimated* at full cost from the fresh
runs (the mean full-set pass count over them); the selection run never enters it.  A
real system's selection outcomes come from its selection run, its fresh outcomes from
the fresh run paired with each fresh seed.

Held-out systems: for each system h the selector runs without h (seed-0 outcomes of
the others), and h's own rank error on the subset (fresh outcomes, among all
systems) is compared with the known rank, and with Random's over the bootstrap draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from lm_eval_memrisk.episodes.episode_features import episode_features
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.running.weak import WeakAgent
from lm_eval_memrisk.scoring.scorer import score
from selector import baselines as bl
from selector.evaluate import METHODS, SELECTOR, Settings, deterministic_subsets, mask_of
from selector.features import feature_matrix
from selector.greedy import subset_size
from selector.io import STRUCT_FIELDS, RunMatrix
from selector.objective import (
    Objective,
    Weights,
    average_ranks,
    bottom_k_defined,
    bottom_k_membership,
    high_risk_recall,
    spearman_to,
)

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Default systems: 12 planted profiles of different strengths and rates, plus the
#: three adversarial reference agents.
SYSTEMS: tuple[str, ...] = (
    "weak:churn1:p=0.6",
    "weak:churn2:p=0.8",
    "weak:gap6:p=0.7",
    "weak:gap10:p=0.9",
    "weak:scope-bleed:p=0.7",
    "weak:indirect:p=0.5",
    "weak:newest-wins:p=0.8",
    "weak:revoked-blind:p=0.7",
    "weak:decay4:p=0.7",
    "weak:decay8:p=0.9",
    "weak:churn1+decay4:p=0.5",
    "weak:scope-bleed+revoked-blind+gap6:p=0.6",
    "stale",
    "leaky",
    "constraint-blind",
)


def with_seed(system: str, seed: int) -> str:
    """The name of a fresh run of ``system`` under ``seed`` (reference agents: unchanged)."""
    return f"{system}:seed={seed}" if system.startswith("weak:") else system


def expected_pass(system: str, episodes: Sequence[Episode]) -> float:
    """Known expected pass count of ``system`` on ``episodes`` (see the module docstring)."""
    agent = get_agent(system)
    if not isinstance(agent, WeakAgent):
        return float(sum(score(e, run_episode(e, agent)).success for e in episodes))
    return float(sum(agent.pass_probability(e) for e in episodes))


def _trace_row(trace: Any) -> tuple[float, float, float, float]:
    used = sum(len(d.memory_used) for d in trace.decisions)
    calls = sum(d.action.kind == "tool_call" for d in trace.decisions)
    chars = sum(len(d.raw_reply) for d in trace.decisions)
    invalid = sum(d.action.kind == "invalid" for d in trace.decisions)
    return float(used), float(calls), float(chars), float(invalid)


def outcomes(episodes: Sequence[Episode], systems: Sequence[str], seed: int) -> RunMatrix:
    """A :class:`RunMatrix` from real runs (agent + scorer) of every system under ``seed``."""
    eps = sorted(episodes, key=lambda e: e.id)
    passed = np.zeros((len(eps), len(systems)), dtype=bool)
    scores = np.zeros((len(eps), len(systems)))
    trace = np.zeros((len(eps), len(systems), 4))
    for j, name in enumerate(systems):
        agent = get_agent(with_seed(name, seed))
        for i, e in enumerate(eps):
            t = run_episode(e, agent)
            result = score(e, t)
            passed[i, j], scores[i, j] = result.success, result.score
            trace[i, j] = _trace_row(t)
    by_risk: dict[str, int] = {}
    doc_ids = []
    for e in eps:
        doc_ids.append(by_risk.get(e.risk, 0))
        by_risk[e.risk] = doc_ids[-1] + 1
    return RunMatrix(
        episode_ids=tuple(e.id for e in eps), risks=tuple(e.risk for e in eps),
        tiers=tuple(e.tier for e in eps), tasks=tuple(f"memriskbench_{e.risk.lower()}" for e in eps),
        doc_ids=np.array(doc_ids, dtype=np.int64), systems=tuple(systems), passed=passed,
        score=scores, trace=trace,
        structure=np.array([[episode_features(e)[f] for f in STRUCT_FIELDS] for e in eps], dtype=np.float64),
    )


@dataclass(frozen=True)
class RealRuns:
    """Logged runs of real systems: one selection run, and one fresh run per fresh seed.

    Every matrix holds the same systems in the same order (e.g. a model sampled at
    T=0.7 under seed 1 for selection and seed 2 for evaluation)."""

    selection: RunMatrix
    fresh: tuple[RunMatrix, ...]

    def check(self, episode_ids: Sequence[str], n_fresh: int, dataset_hash: str = "") -> None:
        """Raise ``ValueError`` naming what does not line up with the planted systems
        (``dataset_hash``, when given: the dataset the planted systems run on)."""
        if len(self.fresh) != n_fresh:
            raise ValueError(f"real systems: {len(self.fresh)} fresh run(s) for {n_fresh} fresh seed(s)")
        for i, m in enumerate((self.selection, *self.fresh)):
            what = "selection run" if i == 0 else f"fresh run {i}"
            if m.systems != self.selection.systems:
                raise ValueError(f"real systems: the {what} holds {list(m.systems)}, "
                                 f"the selection run {list(self.selection.systems)}")
            if dataset_hash and m.dataset_hash != dataset_hash:
                raise ValueError(f"real systems: the {what} was run on dataset {m.dataset_hash or '(unknown)'}, "
                                 f"the planted systems on {dataset_hash} (choose the dataset with --episodes)")
            if tuple(m.episode_ids) != tuple(episode_ids):
                missing = sorted(set(episode_ids) - set(m.episode_ids))[:5]
                raise ValueError(f"real systems: the {what} does not cover the same main-track episodes "
                                 f"({len(m.episode_ids)} vs {len(episode_ids)}; missing e.g. {missing})")


def join_systems(a: RunMatrix, b: RunMatrix) -> RunMatrix:
    """``a`` with ``b``'s systems appended (same episodes, in the same order)."""
    if a.episode_ids != b.episode_ids:
        raise ValueError("join_systems: the two matrices cover different episodes")
    return replace(
        a, systems=a.systems + b.systems, passed=np.concatenate([a.passed, b.passed], axis=1),
        score=np.concatenate([a.score, b.score], axis=1), trace=np.concatenate([a.trace, b.trace], axis=1),
    )


@dataclass(frozen=True)
class Truth:
    """The known ranking: expected full-set pass counts and the bottom-k membership."""

    expected: FloatArray
    k: int

    @property
    def ranks(self) -> FloatArray:
        return average_ranks(self.expected)

    @property
    def membership(self) -> FloatArray:
        return bottom_k_membership(self.expected, self.k)

    @property
    def high_risk_defined(self) -> bool:
        return bottom_k_defined(self.expected, self.k)


def score_masks(masks: BoolArray, fresh: Sequence[RunMatrix], truth: Truth) -> dict[str, FloatArray]:
    """Per mask (..., N): mean over the fresh runs of rho and high-risk recall vs the truth."""
    rho = np.zeros(masks.shape[:-1])
    hr = np.zeros(masks.shape[:-1])
    for m in fresh:
        counts = masks.astype(np.float64) @ m.passed.astype(np.float64)
        rho += spearman_to(average_ranks(counts), truth.ranks)
        member = bottom_k_membership(counts, truth.k)
        hr += high_risk_recall(member, truth.membership, truth.k)
    return {"spearman": rho / len(fresh), "high_risk": hr / len(fresh)}


def _cell(values: FloatArray, stochastic: bool) -> dict[str, float]:
    if not stochastic:
        return {"point": float(values[0])}
    lo, hi = np.percentile(values, [2.5, 97.5])
    return {"mean": float(values.mean()), "lo": float(lo), "hi": float(hi)}


def _desc_rank(counts: FloatArray) -> FloatArray:
    return np.asarray(counts.shape[-1] + 1.0 - average_ranks(counts), dtype=np.float64)


def evaluate(
    episodes: Sequence[Episode],
    systems: Sequence[str] = SYSTEMS,
    fresh_seeds: Sequence[int] = (1, 2, 3, 4, 5),
    settings: Settings | None = None,
    *,
    selection_seed: int = 0,
    real: RealRuns | None = None,
    dataset_hash: str = "",
) -> dict[str, Any]:
    """The out-of-sample comparison (see the module docstring) as a JSON-ready dict;
    ``dataset_hash`` (of the file ``episodes`` come from) is checked against real runs."""
    s = settings or Settings()
    selection = outcomes(episodes, systems, selection_seed)
    fresh = [outcomes(episodes, systems, seed) for seed in fresh_seeds]
    eps = sorted(episodes, key=lambda e: e.id)
    expected = [expected_pass(n, eps) for n in systems]
    if real is not None:
        real.check(selection.episode_ids, len(fresh), dataset_hash)
        selection = join_systems(selection, real.selection)
        fresh = [join_systems(m, r) for m, r in zip(fresh, real.fresh)]
        expected += list(np.mean([r.passed.sum(axis=0) for r in real.fresh], axis=0))
    all_systems = selection.systems
    weights = s.weights
    k = weights.effective_k(len(all_systems))
    truth = Truth(np.array(expected, dtype=np.float64), k)
    n_ep = len(eps)
    fractions = s.all_fractions()
    sizes = [subset_size(f, n_ep) for f in fractions]
    x = feature_matrix(selection)
    from selector.evaluate import bootstrap_masks, select_order

    order = select_order(selection, x, weights, max(sizes)).order
    det = deterministic_subsets(selection, x, order, sizes)
    no_seed = select_order(selection, x, Weights(weights.alpha, 0.0, weights.gamma, weights.high_risk_k),
                           max(sizes)).order
    boot = bootstrap_masks(selection, sizes, s.seed, s.bootstrap, progress=False)
    in_sample = Objective(selection.passed, selection.risk_codes, weights)
    rows: list[dict[str, Any]] = []
    for method in (*METHODS, f"{SELECTOR} (no seed phase)"):
        stochastic = method in bl.STOCHASTIC
        for i, (f, size) in enumerate(zip(fractions, sizes)):
            if stochastic:
                masks = boot[method][i]
            elif method == SELECTOR + " (no seed phase)":
                masks = mask_of(n_ep, np.sort(no_seed[:size]))[None, :]
            else:
                masks = mask_of(n_ep, det[method][i])[None, :]
            vals = score_masks(masks, fresh, truth)
            row: dict[str, Any] = {
                "method": method, "fraction": f, "size": size,
                "spearman": _cell(vals["spearman"], stochastic),
                "in_sample_spearman": _cell(in_sample.metrics(masks)["spearman"], stochastic),
            }
            row["high_risk"] = (_cell(vals["high_risk"], stochastic) if truth.high_risk_defined
                                else {"na": 1.0})
            rows.append(row)
    full = score_masks(np.ones((1, n_ep), dtype=bool), fresh, truth)
    return {
        "systems": list(all_systems),
        "estimated_systems": list(real.selection.systems) if real is not None else [],
        "selection_seed": selection_seed,
        "fresh_seeds": list(fresh_seeds),
        "n_episodes": n_ep,
        "bootstrap": s.bootstrap,
        "high_risk_k": k,
        "known_expected_pass": {n: float(v) for n, v in zip(all_systems, truth.expected)},
        "known_high_risk": [n for n, mem in zip(all_systems, truth.membership) if mem > 0],
        "high_risk_defined": truth.high_risk_defined,
        "full_set": {"spearman": float(full["spearman"][0]), "high_risk": float(full["high_risk"][0])},
        "comparison": rows,
        "held_out": held_out(selection, fresh, truth, s, boot_random=boot["Random"][fractions.index(s.fraction)]),
    }


def held_out(selection: RunMatrix, fresh: Sequence[RunMatrix], truth: Truth, s: Settings,
             boot_random: BoolArray) -> list[dict[str, Any]]:
    """Per system h: select without h, then h's own rank error on fresh outcomes."""
    from selector.evaluate import select_order

    n_ep, n_sys = len(selection.episode_ids), len(selection.systems)
    size = subset_size(s.fraction, n_ep)
    known = _desc_rank(truth.expected)
    out = []
    for h, name in enumerate(selection.systems):
        ref = [i for i in range(n_sys) if i != h]
        order = select_order(selection, feature_matrix(selection, ref), s.weights, size, reference=ref).order
        mask = mask_of(n_ep, order[:size])
        err = np.mean([abs(_desc_rank(mask.astype(float) @ m.passed.astype(float))[h] - known[h]) for m in fresh])
        rand = np.mean([np.abs(_desc_rank(boot_random.astype(float) @ m.passed.astype(float))[:, h] - known[h])
                        for m in fresh], axis=0)
        out.append({"system": name, "known_rank": float(known[h]), "rank_error": float(err),
                    "random_rank_error": _cell(rand, True)})
    return out


def markdown(result: dict[str, Any]) -> str:
    """README-ready tables of :func:`evaluate`'s result."""
    def cell(v: dict[str, float]) -> str:
        if "na" in v:
            return "n/a (tied bottom-k)"
        if "point" in v:
            return f"{v['point']:.3f}"
        return f"{v['mean']:.3f} [{v['lo']:.3f}, {v['hi']:.3f}]"

    lines = ["| method | fraction | size | ρ out of sample | high-risk recall out of sample | ρ in sample |",
             "|---|---|---|---|---|---|"]
    for r in result["comparison"]:
        lines.append(f"| {r['method']} | {r['fraction']:g} | {r['size']} | {cell(r['spearman'])} | "
                     f"{cell(r['high_risk'])} | {cell(r['in_sample_spearman'])} |")
    lines += ["", "| held-out system | known rank | rank error (Risk-Preserving) | rank error (Random, mean [95%]) |",
              "|---|---|---|---|"]
    estimated = set(result.get("estimated_systems", ()))
    for h in result["held_out"]:
        rank = f"{h['known_rank']:g}" + (" (estimated)" if h["system"] in estimated else "")
        lines.append(f"| {h['system']} | {rank} | {h['rank_error']:.2f} | {cell(h['random_rank_error'])} |")
    return "\n".join(lines) + "\n"
