"""``memrisk stats``: Wilson intervals and pairwise tests per risk (logic in :mod:`selector.stats`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lm_eval_memrisk.cli._shared import add_run_arguments
from lm_eval_memrisk.episodes.errors import MemriskError

HELP = "Per-(system, risk) Wilson intervals; pairwise Fisher (and paired McNemar) tests with Holm correction."


def add_arguments(p: argparse.ArgumentParser) -> None:
    from selector.io import VARIANTS

    add_run_arguments(p, required=False)
    p.add_argument("--counts", type=Path, metavar="FILE.json",
                   help="per-(model, risk) pass counts (format of memriskbench_table_6_3.json)")
    p.add_argument("--json", action="store_true", help="print JSON: {\"tests\": [...], \"intervals\": [...]}")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="default", help="scoring variant of run folders")


def _text(intervals: list[dict[str, Any]], tests: list[dict[str, Any]]) -> str:
    lines = [f"{'model':<24} {'risk':<12} {'passes':>7}  rate   Wilson 95%"]
    for c in intervals:
        lines.append(f"{c['model']:<24} {c['risk']:<12} {c['passes']:>3}/{c['n']:<3}  {c['rate']:.3f}  "
                     f"[{c['lo']:.3f}, {c['hi']:.3f}]")
    lines += ["", f"{'test':<8} {'risk':<12} {'a':<24} {'b':<24} {'p':>9} {'p_holm':>9}"]
    for t in tests:
        mark = " *" if t["p_holm"] < 0.05 else ""
        lines.append(f"{t['test']:<8} {t['risk']:<12} {t['a']:<24} {t['b']:<24} {t['p']:9.4g} {t['p_holm']:9.4g}{mark}")
    lines.append("(* Holm-adjusted p < 0.05; Holm over all pairs x risks of each test)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from selector.io import load_runs
    from selector.stats import (
        counts_from_matrix,
        fisher_tests,
        mcnemar_tests,
        read_counts,
        wilson_table,
    )

    if bool(args.counts) == bool(args.runs):
        raise MemriskError("give either --counts FILE.json or run folders")
    if args.counts:
        counts = read_counts(args.counts)
        tests = fisher_tests(counts)
    else:
        matrix = load_runs(args.runs, args.variant, args.episodes)
        for note in matrix.notes:
            print(f"note: {note}", file=sys.stderr)
        counts = counts_from_matrix(matrix)
        tests = fisher_tests(counts) + mcnemar_tests(matrix)
    intervals = wilson_table(counts)
    if args.json:
        print(json.dumps({"tests": tests, "intervals": intervals}, sort_keys=True, indent=2))
    else:
        print(_text(intervals, tests))
    return 0
