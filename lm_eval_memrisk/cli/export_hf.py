"""memrisk export-hf DIR: write a Hub-ready dataset folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_episodes_argument

HELP = "write the episodes as a Hugging Face Hub-ready dataset folder (configs r1..r6, tiers, all)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir")
    add_episodes_argument(p)


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.export_hf import export
    from lm_eval_memrisk.episodes.loader import load_episodes

    for path in export(load_episodes(args.episodes, track="all"), Path(args.out_dir)):
        print(f"wrote {path}")
    return 0
