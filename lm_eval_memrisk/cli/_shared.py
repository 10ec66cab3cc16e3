"""Options and output shared by several ``memrisk`` subcommands (one definition each)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lm_eval_memrisk.scoring.scorer import ScoreResult

EPISODES_HELP = "episode JSONL file (default: the shipped dataset)"


def add_episodes_argument(p: argparse.ArgumentParser) -> None:
    """``--episodes FILE``: the episode file to read instead of the shipped dataset."""
    p.add_argument("--episodes", help=EPISODES_HELP)


def add_run_arguments(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``RUN_DIR...`` and ``--episodes FILE``: run folders read by :mod:`lm_eval_memrisk.logs.runs`."""
    p.add_argument("runs", nargs="+" if required else "*", metavar="RUN_DIR",
                   help="lm-eval --output_path or memrisk run --out folder (each model folder is a system); "
                        "NAME=DIR names the system")
    p.add_argument("--episodes", action="append", default=[], metavar="FILE",
                   help="episode file the runs used, to verify their samples against "
                        "(repeatable; the packaged datasets are always known)")


def add_scoring_arguments(p: argparse.ArgumentParser, *, expected: bool = False) -> None:
    """``--variant`` (and with ``expected``, ``--expected``): the scorer's settings."""
    from lm_eval_memrisk.scoring.scorer import EXPECTED, VARIANTS

    p.add_argument("--variant", default="default", choices=VARIANTS)
    if expected:
        p.add_argument("--expected", default="revised", choices=EXPECTED)


def print_summary(
    results: Sequence[ScoreResult], variant: str, sig: str, as_json: bool,
    attribution: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Print the per-risk summary of ``results``: one JSON object, or the text table.

    With ``attribution`` (see :mod:`lm_eval_memrisk.scoring.attribution`) the failures are
    split per risk into the agent's own and those a memory policy caused
    (``policy_hidden``): key ``failures`` in JSON, one more line in the table.
    """
    from lm_eval_memrisk.scoring.summary import format_table, summarize

    summary = summarize(results, variant, sig)
    if attribution is not None:
        from lm_eval_memrisk.scoring.attribution import failure_counts

        summary["failures"] = failure_counts(attribution)
    if as_json:
        print(json.dumps(summary, sort_keys=True))
        return
    print(format_table(summary))
    if attribution is not None:
        split = ", ".join(
            f"{risk} {row['agent']}+{row['policy_hidden']}" for risk, row in summary["failures"].items()
        )
        print(f"failures (agent + policy_hidden): {split}")
