"""Per-(system, risk) statistics: Wilson intervals, McNemar, Fisher and Holm (paper §6.3).

* ``wilson_interval(k, n)``: Wilson score 95% interval for k passes out of n
  (:mod:`lm_eval_memrisk.scoring.intervals`, shared with the leaderboard).
* McNemar's exact test: systems scored on the same episodes are paired; the p-value is
  the two-sided binomial test of the discordant pairs against 1/2 (1.0 without any).
* Fisher's exact test (two-sided, ``scipy.stats.fisher_exact``) on the 2x2 table of
  passes and failures, as the paper reports it.
* Holm's step-down correction over all tests of one kind (all pairs x all risks).

Counts files follow ``memriskbench_table_6_3.json``: ``{"risks": [...],
"episodes_per_risk": 24, "passes": {model: [count per risk]}}``; an optional
``"totals": {model: [n per risk]}`` replaces ``episodes_per_risk``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binomtest, fisher_exact

from lm_eval_memrisk.episodes.errors import SamplesError
from lm_eval_memrisk.scoring.intervals import wilson_interval as wilson_interval  # re-exported
from selector.io import RunMatrix


def fisher_p(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p for k_a/n_a vs k_b/n_b passes."""
    return float(fisher_exact([[k_a, n_a - k_a], [k_b, n_b - k_b]], alternative="two-sided")[1])


def mcnemar_exact(a: NDArray[np.bool_], b: NDArray[np.bool_]) -> tuple[float, int, int]:
    """(p, a-only passes, b-only passes) for paired pass flags on the same episodes."""
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    if only_a + only_b == 0:
        return 1.0, 0, 0
    return float(binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue), only_a, only_b


def holm(pvalues: NDArray[np.float64] | list[float]) -> NDArray[np.float64]:
    """Holm step-down adjusted p-values (same order as the input)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


@dataclass(frozen=True)
class Counts:
    """Pass counts per (model, risk); models and risks in their given order."""

    models: tuple[str, ...]
    risks: tuple[str, ...]
    passes: NDArray[np.int64]
    totals: NDArray[np.int64]


def counts_from_matrix(m: RunMatrix) -> Counts:
    """Per-(system, risk) pass counts of a run matrix."""
    onehot = np.eye(len(m.risk_names), dtype=np.int64)[m.risk_codes]
    passes = m.passed.T.astype(np.int64) @ onehot
    totals = np.repeat(onehot.sum(axis=0)[None, :], len(m.systems), axis=0)
    return Counts(models=m.systems, risks=m.risk_names, passes=passes, totals=totals)


def _table(raw: Any, key: str, models: list[str], n_risks: int, path: Path) -> NDArray[np.int64]:
    if not isinstance(raw, dict) or sorted(raw) != sorted(models):
        raise SamplesError(f"{path}: '{key}' must map each model to a list of {n_risks} counts")
    rows = []
    for model in models:
        row = raw[model]
        if (not isinstance(row, list) or len(row) != n_risks
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in row)):
            raise SamplesError(f"{path}: {key}[{model!r}] must be a list of {n_risks} non-negative integers")
        rows.append(row)
    return np.array(rows, dtype=np.int64)


def read_counts(path: Path) -> Counts:
    """Read a counts JSON file (see the module docstring)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SamplesError(f"{path}: cannot read counts file: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise SamplesError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("passes"), dict) or not data["passes"]:
        raise SamplesError(f"{path}: expected an object with 'risks' and 'passes' {{model: [counts]}}")
    risks = data.get("risks")
    if not isinstance(risks, list) or not risks or not all(isinstance(r, str) for r in risks):
        raise SamplesError(f"{path}: 'risks' must be a non-empty list of names")
    models = list(data["passes"])
    passes = _table(data["passes"], "passes", models, len(risks), path)
    if "totals" in data:
        totals = _table(data["totals"], "totals", models, len(risks), path)
    else:
        n = data.get("episodes_per_risk")
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise SamplesError(f"{path}: need 'episodes_per_risk' (a positive integer) or 'totals'")
        totals = np.full(passes.shape, n, dtype=np.int64)
    if (passes > totals).any():
        raise SamplesError(f"{path}: a pass count exceeds its total")
    return Counts(models=tuple(models), risks=tuple(risks), passes=passes, totals=totals)


def wilson_table(c: Counts) -> list[dict[str, Any]]:
    """One row per (model, risk): passes, n, rate and the Wilson 95% interval."""
    rows = []
    for i, model in enumerate(c.models):
        for j, risk in enumerate(c.risks):
            k, n = int(c.passes[i, j]), int(c.totals[i, j])
            lo, hi = wilson_interval(k, n) if n > 0 else (0.0, 1.0)
            rows.append({"model": model, "risk": risk, "passes": k, "n": n,
                         "rate": k / n if n else 0.0, "lo": lo, "hi": hi})
    return rows


def fisher_tests(c: Counts) -> list[dict[str, Any]]:
    """Fisher tests for every pair of models within every risk, Holm-adjusted over all."""
    tests = []
    for j, risk in enumerate(c.risks):
        for a, b in combinations(range(len(c.models)), 2):
            ka, na, kb, nb = (int(c.passes[a, j]), int(c.totals[a, j]), int(c.passes[b, j]), int(c.totals[b, j]))
            tests.append({"risk": risk, "a": c.models[a], "b": c.models[b], "test": "fisher",
                          "a_passes": ka, "a_n": na, "b_passes": kb, "b_n": nb, "p": fisher_p(ka, na, kb, nb)})
    return _with_holm(tests)


def mcnemar_tests(m: RunMatrix) -> list[dict[str, Any]]:
    """Paired McNemar tests for every pair of systems within every risk, Holm-adjusted."""
    tests = []
    codes = m.risk_codes
    for j, risk in enumerate(m.risk_names):
        rows = codes == j
        for a, b in combinations(range(len(m.systems)), 2):
            p, only_a, only_b = mcnemar_exact(m.passed[rows, a], m.passed[rows, b])
            tests.append({"risk": risk, "a": m.systems[a], "b": m.systems[b], "test": "mcnemar",
                          "a_only": only_a, "b_only": only_b, "p": p})
    return _with_holm(tests)


def _with_holm(tests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    adjusted = holm([t["p"] for t in tests])
    return [{**t, "p_holm": float(q)} for t, q in zip(tests, adjusted)]
