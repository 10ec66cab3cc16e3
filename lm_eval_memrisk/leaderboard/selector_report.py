"""Read ranking preservation (Spearman rho per method and fraction) from a selector report.json.

Accepted shape: a list of rows, top level or under one of ``ROW_KEYS``; each row has
``method``, ``fraction`` (or ``size``) and ``spearman`` (or ``rho``), where the value is
a number or an object ``{"point"|"mean"|"value"|"estimate": x, "lo": a, "hi": b}``;
``spearman_lo``/``spearman_hi`` beside a number also give the interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.leaderboard.collect import read_json_file

ROW_KEYS: tuple[str, ...] = ("comparison", "method_comparison", "methods", "rows", "results")
_POINT_KEYS = ("point", "mean", "value", "estimate")


@dataclass(frozen=True)
class RankPoint:
    """Spearman rho between rankings on a subset and on the full set."""

    method: str
    fraction: float
    rho: float
    lo: float | None = None
    hi: float | None = None


def read_selector_report(path: Path) -> list[RankPoint]:
    """Points sorted by (method, fraction); a clear error naming the file otherwise."""
    rows = _rows(read_json_file(path, "selector report"))
    if rows is None:
        raise MemriskError(
            f"{path}: no method comparison found; expected a list of rows with "
            f"method, fraction and spearman (top level or under one of {', '.join(ROW_KEYS)})"
        )
    points = [_point(row, f"{path}: {key}[{i}]") for key, i, row in rows]
    if not points:
        raise MemriskError(f"{path}: the method comparison is empty")
    return sorted(points, key=lambda p: (p.method, p.fraction))


def _rows(data: Any) -> list[tuple[str, int, Any]] | None:
    if isinstance(data, list):
        return [("rows", i, r) for i, r in enumerate(data)]
    if isinstance(data, dict):
        for key in ROW_KEYS:
            if isinstance(data.get(key), list):
                return [(key, i, r) for i, r in enumerate(data[key])]
    return None


def _point(row: Any, where: str) -> RankPoint:
    if not isinstance(row, dict) or not isinstance(row.get("method"), str):
        raise MemriskError(f"{where}: each row needs a string 'method'")
    fraction = _num(row.get("fraction", row.get("size")), f"{where}: fraction")
    raw = row.get("spearman", row.get("rho"))
    lo, hi = row.get("spearman_lo"), row.get("spearman_hi")
    if isinstance(raw, dict):
        point = next((raw[k] for k in _POINT_KEYS if k in raw), None)
        lo, hi = raw.get("lo", raw.get("ci_lo")), raw.get("hi", raw.get("ci_hi"))
        raw = point
    rho = _num(raw, f"{where}: spearman")
    return RankPoint(
        method=row["method"],
        fraction=fraction,
        rho=rho,
        lo=None if lo is None else _num(lo, f"{where}: spearman lo"),
        hi=None if hi is None else _num(hi, f"{where}: spearman hi"),
    )


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MemriskError(f"{where} must be a number, got {value!r}")
    return float(value)
