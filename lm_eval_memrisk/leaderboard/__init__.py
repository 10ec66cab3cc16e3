"""Leaderboard from lm-eval output folders: Markdown, CSV, a static HTML page and PNG figures.

Run it as ``memrisk leaderboard RUN_DIR... --out DIR [--selector-report FILE]``
(see docs/leaderboard.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lm_eval_memrisk.leaderboard.collect import Warn, collect, stderr_warn
from lm_eval_memrisk.leaderboard.records import EpisodeOutcome, FailedCheck, Signature, SystemRun
from lm_eval_memrisk.leaderboard.summary import Leaderboard, Rate, Row, bottom_flags, build

__all__ = [
    "EpisodeOutcome",
    "FailedCheck",
    "Leaderboard",
    "Rate",
    "Row",
    "Signature",
    "SystemRun",
    "bottom_flags",
    "build",
    "collect",
    "stderr_warn",
    "write_leaderboard",
]


def write_leaderboard(
    run_dirs: Sequence[str | Path],
    out: Path,
    selector_report: Path | None = None,
    warn: Warn = stderr_warn,
    episodes: Sequence[str | Path] = (),
) -> list[Path]:
    """Write leaderboard.{md,csv,html}, heatmap.png, tiers.png (+ ranking.png); return the paths."""
    from lm_eval_memrisk.leaderboard import figures, html, table
    from lm_eval_memrisk.leaderboard.selector_report import read_selector_report

    points = read_selector_report(selector_report) if selector_report else None
    board = build(collect(run_dirs, warn, episodes))
    pngs = {"heatmap.png": figures.heatmap(board), "tiers.png": figures.tiers(board)}
    if points is not None:
        pngs["ranking.png"] = figures.ranking(points)
    texts = {
        "leaderboard.md": table.to_markdown(board),
        "leaderboard.csv": table.to_csv(board),
        "leaderboard.html": html.render(board, pngs),
    }
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    for name, data in pngs.items():
        (out / name).write_bytes(data)
        written.append(out / name)
    return written
