"""``memrisk runs RUN_DIR...``: what every reader of run folders sees (logic in :mod:`lm_eval_memrisk.logs.runs`)."""

from __future__ import annotations

import argparse
import json
import sys

from lm_eval_memrisk.cli._shared import add_run_arguments

HELP = "list the systems, episodes and files that select, stats, report, leaderboard and rescore read"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_run_arguments(p)
    p.add_argument("--json", action="store_true",
                   help='print [{"system", "dir", "episodes", "passed", "dataset_hash", "files", "flagged", "status"}]')


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.logs.runs import (
        flag_notes,
        known_datasets,
        read_runs,
        standing_notes,
        standings,
    )

    systems = read_runs(args.runs, args.episodes)
    table = standings(systems, known_datasets(args.episodes))
    if args.json:
        print(json.dumps([dict(s.summary(), status=table[s.name].status) for s in systems], indent=2,
                         sort_keys=True))
    else:
        width = max(len(s.name) for s in systems) + 2
        for s in systems:
            print(f"{s.name:<{width}}{s.passed:>4}/{len(s.samples):<4} {s.dataset_hash}  {s.dir}  "
                  f"[{table[s.name].status}]")
            for f in s.files:
                print(f"{'':<{width}}  {f.name}")
    for note in flag_notes(systems) + [n for s in systems for n in s.notes] + standing_notes(table):
        print(f"note: {note}", file=sys.stderr)
    return 0
