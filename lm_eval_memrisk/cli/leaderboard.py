"""``memrisk leaderboard RUN_DIR... --out DIR [--selector-report FILE]``."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Leaderboard (Markdown, CSV, static HTML page, PNG figures) from lm-eval output folders."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs",
        nargs="*",
        type=Path,
        metavar="RUN_DIR",
        help="lm-eval --output_path folder (each model subfolder is a system) or a model subfolder",
    )
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
    import tempfile

    from lm_eval_memrisk.errors import MemriskError
    from lm_eval_memrisk.leaderboard import write_leaderboard

    run_dirs = list(args.run_dirs)
    if args.reference:
        from selector.reference import unpack

        run_dirs = unpack(Path(tempfile.mkdtemp(prefix="memrisk-reference-"))) + run_dirs
    if not run_dirs:
        raise MemriskError("give RUN_DIR folders, --reference, or both")
    for path in write_leaderboard(run_dirs, args.out, args.selector_report):
        print(path)
    return 0
