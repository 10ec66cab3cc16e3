"""``memrisk validate [FILE] [--json]``: check an episode file, list every problem.

Besides the format and semantic rules, every episode without such a problem is run by
the oracle, which must pass it, and by a do-nothing agent, which must not
(:func:`lm_eval_memrisk.episodes.validate.behaviour_problems`)."""

from __future__ import annotations

import argparse
import json
import sys

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.loader import FileScan, dataset_hash, scan_episodes
from lm_eval_memrisk.episodes.risks import tracks

HELP = "check an episode file (default: the shipped dataset) and list every problem"

#: Most problems printed in text mode (``--json`` lists them all).
MAX_SHOWN = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        nargs="?",
        default=None,
        metavar="FILE",
        help="episode JSONL file or packaged version v1-v10 (default: data/episodes_v8.jsonl)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON report on stdout")


def _episode_count(scan: FileScan, adjective: str = "") -> str:
    """``N [adjective ]episode(s) (main M, r6 K)``."""
    counts = scan.track_counts()
    n = len(scan.episodes)
    plural = "s" if n != 1 else ""
    return f"{n} {adjective}episode{plural} ({', '.join(f'{t} {counts[t]}' for t in tracks())})"


def run(args: argparse.Namespace) -> int:
    """Validate FILE; print ``OK: ...`` (exit 0) or the problems (exit 1)."""
    try:
        scan = scan_episodes(args.file, behaviour=True)
        digest = dataset_hash(args.file) if scan.ok else None
    except MemriskError as exc:
        if args.json:
            print(json.dumps({"ok": False, "file": args.file, "error": str(exc)}))
        else:
            print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        report = {
            "ok": scan.ok,
            "file": scan.path,
            "episodes": len(scan.episodes),
            "tracks": scan.track_counts(),
            "dataset_hash": digest,
            "problems": [
                {
                    "path": p.path,
                    "line": p.line,
                    "episode_id": p.episode_id,
                    "field": p.field,
                    "message": p.reason,
                    "text": str(p),
                }
                for p in scan.problems
            ],
        }
        if not scan.episodes and not scan.problems:
            report["error"] = "no episodes found (the file is empty)"
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0 if scan.ok else 1
    if scan.ok:
        print(f"OK: {_episode_count(scan)} in {scan.path}")
        return 0
    if not scan.problems:
        print(f"error: {scan.path}: no episodes found (the file is empty)", file=sys.stderr)
        return 1
    for problem in scan.problems[:MAX_SHOWN]:
        print(problem, file=sys.stderr)
    hidden = len(scan.problems) - MAX_SHOWN
    if hidden > 0:
        print(f"... and {hidden} more (use --json to list all)", file=sys.stderr)
    n = len(scan.problems)
    print(
        f"FAILED: {n} problem{'s' if n != 1 else ''} in {scan.path}; "
        f"{_episode_count(scan, 'valid ')}",
        file=sys.stderr,
    )
    return 1
