"""memrisk weak: the catalogue of planted-weakness agents (``weak:NAME``).

``memrisk weak --list --json`` prints ``[{"name", "description", "weaknesses",
"expected_fail": {"R1": n, ...}}]``, the failures each profile's triggers predict on
the episodes (``--episodes``, default the shipped dataset, all tracks).
"""

from __future__ import annotations

import argparse
import json

from lm_eval_memrisk.cli._shared import add_episodes_argument

HELP = "list the planted-weakness agents (weak:NAME) and the failures they are built to show"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--list", action="store_true", help="list the profiles (the default)")
    add_episodes_argument(p)
    p.add_argument("--json", action="store_true", help="print the catalogue as one JSON list")


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.loader import load_episodes
    from lm_eval_memrisk.running.weak import catalogue

    rows = catalogue(load_episodes(args.episodes, track="all"))
    if args.json:
        print(json.dumps(rows, sort_keys=True))
        return 0
    for row in rows:
        fails = " ".join(f"{r} {n}" for r, n in row["expected_fail"].items())
        print(f"weak:{row['name']:14s} {fails}   {row['description']}")
    return 0
