"""``python -m lm_eval_memrisk.generator --out FILE [--seed N] [--n-per-risk N]``."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from lm_eval_memrisk.generator.build import (
    DEFAULT_VERSION,
    VERSIONS,
    default_counts,
    generate,
    scaled_counts,
    write_dataset,
)
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments, generate, write; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m lm_eval_memrisk.generator",
        description="Generate MemRiskBench episodes "
        "(the defaults reproduce data/episodes_v8.jsonl; --version v1 ... v7: the older files, v9: the next).",
    )
    parser.add_argument("--out", required=True, help="output JSONL file")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"master seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--n-per-risk",
        type=int,
        default=None,
        metavar="N",
        help="episodes per risk, R6 included (default: the v1 counts, 24)",
    )
    parser.add_argument(
        "--version",
        choices=sorted(VERSIONS),
        default=DEFAULT_VERSION,
        help=f"dataset version to build (default {DEFAULT_VERSION}; v1 ... v10, each its packaged file)",
    )
    args = parser.parse_args(argv)
    if args.n_per_risk is not None and args.n_per_risk < 1:
        parser.error("--n-per-risk must be at least 1")
    counts = default_counts() if args.n_per_risk is None else scaled_counts(args.n_per_risk)
    episodes = generate(args.seed, counts, args.version)
    write_dataset(args.out, episodes)
    per_risk = Counter(ep.risk for ep in episodes)
    summary = ", ".join(f"{risk} {n}" for risk, n in sorted(per_risk.items()))
    print(f"wrote {len(episodes)} episodes to {args.out} ({summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
