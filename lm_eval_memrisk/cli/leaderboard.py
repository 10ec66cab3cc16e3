"""``memrisk leaderboard RUN_DIR... --out DIR [--selector-report FILE]``."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_run_arguments

HELP = "Leaderboard (Markdown, CSV, static HTML page, PNG figures) from lm-eval output folders."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, required=False)
    parser.add_argument(
        "--out", required=True, type=Path, help="folder to write the leaderboard into"
    )
    parser.add_argument(
        "--selector-report",
        type=Path,
        default=None,
        metavar="FILE",
        help="selector report.json: adds ranking.png (ranking preservation per method)",
    )
    parser.add_argument(
        "--reference", action="store_true",
        help="add the committed reference set (selector/data/reference) as systems",
    )


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.errors import MemriskError
    from lm_eval_memrisk.leaderboard import stderr_warn, write_leaderboard

    with tempfile.TemporaryDirectory(prefix="memrisk-reference-") as tmp:
        run_dirs: list[str | Path] = list(args.runs)
        if args.reference:
            from selector.reference import unpack

            run_dirs[:0] = [f"{p.name}={p}" for p in unpack(Path(tmp))]
        if not run_dirs:
            raise MemriskError("give RUN_DIR folders, --reference, or both")
        for path in write_leaderboard(run_dirs, args.out, args.selector_report, stderr_warn, args.episodes):
            print(path)
    return 0
