"""``memrisk select``: a risk-preserving subset of lm-eval logged runs (logic in :mod:`selector`)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lm_eval_memrisk.cli._shared import add_run_arguments
from lm_eval_memrisk.episodes.errors import MemriskError

HELP = "Select a risk-preserving subset from lm-eval --log_samples runs; compare baselines; write reports."


def _fractions(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from exc


def add_arguments(p: argparse.ArgumentParser) -> None:
    from selector.io import VARIANTS

    add_run_arguments(p, required=False)
    p.add_argument("--out", type=Path, required=True, help="output folder")
    p.add_argument("--fraction", type=float, default=0.2, help="subset size as a fraction (default 0.2)")
    p.add_argument("--fractions", type=_fractions, default=None,
                   help="fractions of the method comparison (default 0.2,0.3,0.5)")
    p.add_argument("--seed", type=int, default=0, help="base seed of the bootstrap (default 0)")
    p.add_argument("--alpha", type=float, default=1.0, help="weight of ranking preservation (default 1)")
    p.add_argument("--beta", type=float, default=1.0, help="risk coverage: any beta > 0 runs the risk-cover seed phase, 0 turns it off (default 1)")
    p.add_argument("--gamma", type=float, default=1.0, help="weight of high-risk detection (default 1)")
    p.add_argument("--high-risk-k", type=int, default=2, help="bottom-k systems counted as high-risk (default 2)")
    p.add_argument("--bootstrap", type=int, default=1000, help="draws of the stochastic baselines (default 1000)")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="default", help="scoring variant (default default)")
    p.add_argument("--held-out", action="append", metavar="SYSTEM",
                   help="hold out only this system (repeatable; default: each system in turn)")
    p.add_argument("--new-system", metavar="RUN_DIR", help="drift check: does the subset rank this system "
                   "where the full benchmark does?")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--reference", action="store_true",
                   help="add the committed reference set (selector/data/reference) to the runs")


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="memrisk-reference-") as tmp:
        return _run(args, Path(tmp))


def _run(args: argparse.Namespace, tmp: Path) -> int:
    """``run`` with ``tmp`` a scratch folder that is removed afterwards (the unpacked reference set)."""
    from selector.evaluate import FRACTIONS, Settings, run_pipeline
    from selector.io import build_matrix, load_systems
    from selector.objective import Weights
    from selector.report import signature, write_outputs

    fractions = tuple(args.fractions or FRACTIONS)
    if not 0.0 < args.fraction <= 1.0 or not all(0.0 < f <= 1.0 for f in fractions):
        raise MemriskError("fractions must lie in (0, 1]")
    if args.bootstrap < 1 or args.high_risk_k < 1:
        raise MemriskError("--bootstrap and --high-risk-k must be at least 1")
    runs = list(args.runs)
    if args.reference:
        from selector.reference import unpack

        runs = [f"{p.name}={p}" for p in unpack(tmp)] + runs
    if not runs:
        raise MemriskError("give RUN_DIR folders, --reference, or both")
    runs += [args.new_system] if args.new_system else []
    systems, notes = load_systems(runs, args.variant, args.episodes)
    new_name = list(systems)[-1] if args.new_system else None
    ref = {k: v for k, v in systems.items() if k != new_name}
    matrix = build_matrix(ref, args.variant, sorted(notes))
    drift_matrix = build_matrix(systems, args.variant) if new_name else None
    settings = Settings(
        fraction=args.fraction, fractions=fractions,
        weights=Weights(args.alpha, args.beta, args.gamma, args.high_risk_k), seed=args.seed,
        bootstrap=args.bootstrap, held_out=tuple(args.held_out) if args.held_out else None,
        progress=False if args.no_progress else None,
    )
    unknown = sorted(set(settings.held_out or ()) - set(matrix.systems))
    if unknown:
        raise MemriskError(f"--held-out {', '.join(unknown)}: not among the systems ({', '.join(matrix.systems)})")
    for note in matrix.notes:
        print(f"note: {note}", file=sys.stderr)
    try:
        result = run_pipeline(matrix, settings, drift_matrix, new_name)
    except ValueError as exc:
        raise MemriskError(str(exc)) from exc
    written = write_outputs(result, args.out, plots=False)
    if not args.no_plots:
        try:
            from selector.plots import write_plots

            written += write_plots(result, args.out)
        except ModuleNotFoundError as exc:
            print(f"warning: {exc}; the plots were skipped", file=sys.stderr)
    print(f"selected {len(result.subset)} of {len(matrix.episode_ids)} episodes "
          f"({len(matrix.systems)} systems); wrote {', '.join(p.name for p in written)} to {args.out}")
    print(signature(matrix, settings))
    return 0
