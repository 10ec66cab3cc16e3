"""L2-regularised logistic regression over bags of string features, in numpy/scipy.

Deterministic: the vocabulary is sorted, the weights start at zero and L-BFGS
(:func:`scipy.optimize.minimize`) runs to a fixed tolerance.  The bias is not penalised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

#: L2 penalty (on the summed log-loss) and the fewest training rows a feature needs.
L2 = 1.0
MIN_COUNT = 2


@dataclass(frozen=True)
class Model:
    """Weights per feature and a bias; :meth:`score` is the log-odds of "right"."""

    weights: dict[str, float]
    bias: float

    def score(self, features: Iterable[str]) -> float:
        return self.bias + sum(self.weights.get(f, 0.0) for f in sorted(features))


def _matrix(rows: Sequence[Iterable[str]], index: dict[str, int]) -> sparse.csr_matrix:
    data, cols, ptr = [], [], [0]
    for row in rows:
        hit = sorted({index[f] for f in row if f in index})
        cols += hit
        data += [1.0] * len(hit)
        ptr.append(len(cols))
    return sparse.csr_matrix((data, cols, ptr), shape=(len(rows), len(index)))


def fit(
    rows: Sequence[Iterable[str]],
    labels: Sequence[bool],
    l2: float = L2,
    min_count: int = MIN_COUNT,
) -> Model:
    """Fit ``P(right | features)`` to ``labels`` (one bag of features per row)."""
    if len(rows) != len(labels):
        raise ValueError(f"{len(rows)} rows but {len(labels)} labels")
    if not rows:
        raise ValueError("no training rows")
    counts = Counter(f for row in rows for f in set(row))
    vocab = sorted(f for f, n in counts.items() if n >= min_count)
    x = _matrix(rows, {f: i for i, f in enumerate(vocab)})
    y = np.asarray(labels, dtype=float)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = x @ w + b
        # log(1 + e^z) - y z, stable on both sides
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * w @ w)
        g = 1.0 / (1.0 + np.exp(-z)) - y
        return value, np.append(x.T @ g + l2 * w, g.sum())

    theta0 = np.zeros(len(vocab) + 1)
    res = minimize(
        loss, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-8}
    )
    w = res.x
    return Model(weights={f: float(w[i]) for i, f in enumerate(vocab)}, bias=float(w[-1]))
