"""PNG figures (matplotlib, Agg backend, imported only when a figure is drawn).

Each function returns PNG bytes; the same input gives the same bytes on one machine.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.leaderboard.records import TIERS
from lm_eval_memrisk.leaderboard.selector_report import RankPoint
from lm_eval_memrisk.leaderboard.summary import Leaderboard

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MemriskError(
            "the leaderboard figures need matplotlib: pip install 'lm-eval-memrisk[plots]'"
        ) from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)
    return buf.getvalue()


def _split(board: Leaderboard) -> int | None:
    """How many real rows come before the reference rows, when the board has both groups."""
    real = len(board.group_rows("real"))
    return real if 0 < real < len(board.rows) else None


def heatmap(board: Leaderboard) -> bytes:
    """Systems (real, then reference, each in rank order) x risks, default pass rate; empty
    cells grey, flags marked '!', a line between the groups."""
    plt = _pyplot()
    names = [row.system.name for row in board.rows]
    values = [
        [v if (v := row.risks[r].default.value) is not None else math.nan for r in board.risks]
        for row in board.rows
    ]
    fig, ax = plt.subplots(figsize=(1.1 * len(board.risks) + 3, 0.45 * len(names) + 1.6))
    cmap = plt.get_cmap("RdYlGn").with_extremes(bad="#d9d9d9")
    im = ax.imshow(values, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(board.risks)), labels=list(board.risks))
    ax.set_yticks(range(len(names)), labels=names)
    for i, row in enumerate(board.rows):
        for j, r in enumerate(board.risks):
            v = values[i][j]
            text = "—" if math.isnan(v) else f"{v:.2f}" + ("!" if r in row.flag_risks else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=9)
    split = _split(board)
    if split is not None:
        ax.axhline(split - 0.5, color="black", linewidth=2)
    ax.set_title("Pass rate per system and risk (! = high risk)"
                 + ("\nreal systems above the line, reference systems below" if split is not None else ""))
    fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    return _png(fig)


def tiers(board: Leaderboard) -> bytes:
    """Grouped bars: pass rate by difficulty tier per system, Wilson 95% error bars."""
    plt = _pyplot()
    names = [row.system.name for row in board.rows]
    width = 0.8 / len(TIERS)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(names) + 2), 3.6))
    for t_i, tier in enumerate(TIERS):
        xs, ys, err_lo, err_hi = [], [], [], []
        for s_i, row in enumerate(board.rows):
            r = row.tiers[tier]
            if r.n and r.lo is not None and r.hi is not None:
                v = r.k / r.n
                xs.append(s_i + (t_i - 1) * width)
                ys.append(v)
                err_lo.append(max(0.0, v - r.lo))
                err_hi.append(max(0.0, r.hi - v))
        ax.bar(xs, ys, width, yerr=[err_lo, err_hi], capsize=2, label=tier)
    ax.set_xticks(range(len(names)), labels=names, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("pass rate")
    split = _split(board)
    if split is not None:
        ax.axvline(split - 0.5, color="black", linewidth=1.5)
    ax.set_title("Pass rate by difficulty tier (main track)"
                 + ("\nreal systems left of the line, reference systems right" if split is not None else ""))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="tier")
    return _png(fig)


def ranking(points: Sequence[RankPoint]) -> bytes:
    """Spearman rho vs subset fraction, one line per selector method (CI band when given)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for method in sorted({p.method for p in points}):
        mine = [p for p in points if p.method == method]
        xs = [p.fraction for p in mine]
        (line,) = ax.plot(xs, [p.rho for p in mine], marker="o", label=method)
        if all(p.lo is not None and p.hi is not None for p in mine):
            lo = [p.lo if p.lo is not None else p.rho for p in mine]
            hi = [p.hi if p.hi is not None else p.rho for p in mine]
            ax.fill_between(xs, lo, hi, alpha=0.15, color=line.get_color())
    ax.set_xlabel("subset fraction")
    ax.set_ylabel("Spearman rho vs full set")
    ax.set_ylim(-1.05, 1.05)
    ax.set_title("Ranking preservation per method")
    ax.legend(fontsize=8)
    return _png(fig)
