"""memrisk rescore OUTPUT_DIR: re-score lm-eval sample logs (no model re-run)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_scoring_arguments

HELP = "re-score lm-eval --log_samples output under another variant; writes new files and prints an audit"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("output_dir", help="an lm_eval --output_path folder")
    add_scoring_arguments(p, expected=True)
    p.add_argument("--episodes", action="append", default=[], metavar="FILE",
                   help="episode file the run used, to verify its samples against (repeatable)")
    p.add_argument("--json", action="store_true", help="print the audit as JSON")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.logs.rescore import rescore_dir

    audit, written = rescore_dir(Path(args.output_dir), args.variant, args.expected, args.episodes)
    if args.json:
        print(json.dumps({"written": [str(p) for p in written], "audit": audit.to_dict()}, sort_keys=True))
    else:
        print(audit.table())
        for p in written:
            print(f"wrote {p}")
    return 0
