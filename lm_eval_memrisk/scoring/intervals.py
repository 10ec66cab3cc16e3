"""Wilson score interval of a pass rate: the leaderboard's columns and the selector's
statistics (:mod:`selector.stats`) share it.

It lives in the core so that the leaderboard does not import the selector (which
imports the core): the package-level cycle leaderboard -> selector -> core is gone
(tests/test_architecture.py).
"""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson_interval"]

Z95 = 1.959964


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n trials (n > 0)."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
