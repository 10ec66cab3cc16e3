"""``memrisk audit [--episodes FILE] [--json] [--train-seed N] [--stats | --ablations | --templates
| --learned-groups]``: the shortcut audit of a dataset and its learned surface reader, trained on
the generator's ``--train-seed`` episodes (``--stats``: the dataset statistics instead;
``--ablations``: the ablated oracles' risk-isolation table instead; ``--templates``: the
right rate of each generator sentence template instead; ``--learned-groups``: the learned
reader retrained on each family of its features instead)."""

from __future__ import annotations

import argparse
import json

from lm_eval_memrisk.episodes.loader import load_episodes

HELP = "run the shallow shortcut agents, the learned surface reader and the cue table on an episode file"
#: The learned reader's default training seed (audit.learned.DEFAULT_TRAIN_SEED; kept
#: here so that building the parser imports no numpy/scipy).
DEFAULT_TRAIN_SEED = 4242


def _seed(text: str) -> int:
    """A non-negative integer seed, or argparse's error."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {seed}")
    return seed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--episodes",
        default=None,
        metavar="FILE|VERSION",
        help="episode JSONL file or a packaged version (v1-v10; default: the shipped dataset)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--train-seed",
        type=_seed,
        default=None,
        metavar="N",
        help="generator seed of the learned reader's training episodes, built at the audited "
        "file's version (default %d)" % DEFAULT_TRAIN_SEED,
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--stats",
        action="store_true",
        help="print the dataset statistics (write->use gaps, foils, patterns, multi-hop) instead",
    )
    which.add_argument(
        "--ablations",
        action="store_true",
        help="print the ablated oracles (each ignores one risk's mechanism) x risk table instead",
    )
    which.add_argument(
        "--templates",
        action="store_true",
        help="print each generator sentence template's right rate (how often a value said in it is "
        "the one to use) instead",
    )
    which.add_argument(
        "--learned-groups",
        action="store_true",
        help="print the learned reader retrained with one feature family only and with all but one "
        "(words, labels, order, messages) instead: where its skill comes from",
    )


def run(args: argparse.Namespace) -> int:
    """Print the agent x risk table and the cue table (or the JSON object)."""
    from lm_eval_memrisk.audit import audit, format_tables
    from lm_eval_memrisk.audit.ablations import ablations, format_ablations
    from lm_eval_memrisk.audit.learned import learned_audit
    from lm_eval_memrisk.audit.learned_groups import format_learned_groups, learned_groups
    from lm_eval_memrisk.audit.stats import dataset_stats, format_stats
    from lm_eval_memrisk.audit.templates import format_templates, template_summary, template_table

    episodes = load_episodes(args.episodes, track="all")
    if args.stats:
        stats = dataset_stats(episodes)
        print(json.dumps(stats, sort_keys=True) if args.json else format_stats(stats))
        return 0
    if args.templates:
        rows = template_table(episodes)
        out = {"templates": rows, "summary": template_summary(rows)}
        print(json.dumps(out, sort_keys=True) if args.json else format_templates(rows))
        return 0
    if args.ablations:
        table = ablations(episodes)
        print(json.dumps(table, sort_keys=True) if args.json else format_ablations(table))
        return 0
    train_seed = DEFAULT_TRAIN_SEED if args.train_seed is None else args.train_seed
    if args.learned_groups:
        groups = learned_groups(episodes, train_seed)
        print(json.dumps(groups, sort_keys=True) if args.json else format_learned_groups(groups))
        return 0
    result = audit(episodes)
    result.update(learned_audit(episodes, train_seed))
    print(json.dumps(result, sort_keys=True) if args.json else format_tables(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``python -m lm_eval_memrisk.cli.audit``."""
    parser = argparse.ArgumentParser(prog="memrisk audit", description=HELP)
    add_arguments(parser)
    return run(parser.parse_args(argv))
