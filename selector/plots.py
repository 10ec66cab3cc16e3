"""PNG plots of a selection (matplotlib, imported lazily, Agg backend).

* ``ranking.png``: Spearman rho per method, one panel per fraction, 95% intervals for
  the stochastic methods (paper Figure 6.3).
* ``heatmap.png``: per-(system, risk) pass rate with the pass counts.
* ``ablation.png``: Spearman rho of the selector with each feature family dropped.

PNGs carry no timestamp or software metadata, so they are byte-stable on one machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from selector.evaluate import METHODS, PipelineResult
from selector.stats import counts_from_matrix

_META = {"Software": None}


def _pyplot() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise ModuleNotFoundError("plots need matplotlib: pip install matplotlib (or pass --no-plots)") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path) -> Path:
    """Lay out, write (fixed metadata, so the bytes are stable) and close ``fig``."""
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata=_META)
    plt.close(fig)
    return path


def _value(cell: dict[str, float]) -> tuple[float, float, float]:
    v = cell.get("point", cell.get("mean", 0.0))
    return v, cell.get("lo", v), cell.get("hi", v)


def ranking_plot(r: PipelineResult, path: Path) -> Path:
    plt = _pyplot()
    fractions = r.settings.all_fractions()
    fig, axes = plt.subplots(1, len(fractions), figsize=(4.2 * len(fractions), 3.6), sharey=True, squeeze=False)
    for ax, f in zip(axes[0], fractions):
        vals = [_value(next(x for x in r.comparison if x["method"] == m and x["fraction"] == f)["spearman"])
                for m in METHODS]
        mid = np.array([v[0] for v in vals])
        # the mean can lie outside its percentile interval (skewed draws): clip at 0
        err = np.maximum(0.0, np.array([[v[0] - v[1] for v in vals], [v[2] - v[0] for v in vals]]))
        colors = ["#c0392b" if m == "Risk-Preserving" else "#7f8c8d" for m in METHODS]
        ax.barh(np.arange(len(METHODS)), mid, xerr=err, color=colors, capsize=3)
        ax.set_yticks(np.arange(len(METHODS)), METHODS)
        ax.set_xlim(-1.05, 1.05)
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.set_title(f"{round(f * 100, 6):g}% subset")
        ax.set_xlabel("Spearman ρ")
    fig.suptitle("Ranking preservation (95% interval over seeds for stochastic methods)")
    return _save(plt, fig, path)


def heatmap_plot(r: PipelineResult, path: Path) -> Path:
    plt = _pyplot()
    c = counts_from_matrix(r.matrix)
    rate = c.passes / np.maximum(c.totals, 1)
    fig, ax = plt.subplots(figsize=(1.2 * len(c.risks) + 2.5, 0.5 * len(c.models) + 1.6))
    im = ax.imshow(rate, vmin=0.0, vmax=1.0, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(np.arange(len(c.risks)), c.risks)
    ax.set_yticks(np.arange(len(c.models)), c.models)
    for i in range(len(c.models)):
        for j in range(len(c.risks)):
            ax.text(j, i, f"{c.passes[i, j]}/{c.totals[i, j]}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label="pass rate")
    ax.set_title("Per-(system, risk) pass rate")
    return _save(plt, fig, path)


def ablation_plot(r: PipelineResult, path: Path) -> Path:
    plt = _pyplot()
    rows = [x for x in r.ablation if x["fraction"] == r.settings.fraction]
    labels = ["full" if x["dropped"] == "none" else "− " + x["dropped"] for x in rows]
    fig, ax = plt.subplots(figsize=(6, 0.5 * len(rows) + 1.4))
    ax.barh(np.arange(len(rows)), [x["spearman"] for x in rows], color="#2c7fb8")
    ax.set_yticks(np.arange(len(rows)), labels)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman ρ")
    ax.set_title(f"Feature ablation ({round(r.settings.fraction * 100, 6):g}% subset)")
    return _save(plt, fig, path)


def write_plots(r: PipelineResult, out_dir: Path) -> list[Path]:
    """All plots into ``out_dir``."""
    return [ranking_plot(r, out_dir / "ranking.png"), heatmap_plot(r, out_dir / "heatmap.png"),
            ablation_plot(r, out_dir / "ablation.png")]
