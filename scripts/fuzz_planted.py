"""Fuzzer experiment on a planted-weakness target (no model, CPU-light).

Runs every strategy (guided, random, coverage-only, margin, margin-only; ``--strategies``
for fewer) on ``weak:fuzz-target`` (8 planted weaknesses,
:mod:`lm_eval_memrisk.running.weak`) at each budget and seed, through the same library
call as ``memrisk fuzz`` (:func:`lm_eval_memrisk.fuzz.pipeline.run_fuzz`), and writes
``table.md``, ``results.json`` and ``budget_curve.png`` into ``--out``.

Seeds for tuning and for the report are kept apart (issue #30): tune the schedule
(``guidance.MARGIN_SCHEDULE``) with ``--tuning`` (seeds 100-104),
then run the report once on the report seeds 0-4 (the default).  One invocation never
mixes the two sets.

    python scripts/fuzz_planted.py --out runs/fuzz-tune --tuning        # tuning seeds 100-104
    python scripts/fuzz_planted.py --out docs/fuzz_planted              # report: B = 24, 48, 96; seeds 0-4
    python scripts/fuzz_planted.py --out runs/smoke --budgets 24 --seeds 100   # smoke run
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from lm_eval_memrisk.fuzz.guidance import STRATEGIES
from lm_eval_memrisk.fuzz.pipeline import FuzzOptions, run_fuzz

#: Seeds the report's table is measured on; never used for tuning.
REPORT_SEEDS = (0, 1, 2, 3, 4)
#: Seeds the energy schedule is tuned on; never reported.
TUNING_SEEDS = (100, 101, 102, 103, 104)


def _pm(values: list[float], digits: int = 1) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--agent", default="weak:fuzz-target")
    p.add_argument("--budgets", default="24,48,96")
    p.add_argument("--seeds", help="comma-separated search seeds (default: the report seeds 0-4, "
                   "or the tuning seeds 100-104 with --tuning)")
    p.add_argument("--tuning", action="store_true", help="tune: the tuning seeds 100-104 by default, "
                   "and no report seed allowed")
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help=f"comma-separated, from {', '.join(STRATEGIES)} (default: all)")
    p.add_argument("--episodes", default="v1",
                   help="seed dataset (default v1: the README's table; the planted target was built on it)")
    args = p.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    default = TUNING_SEEDS if args.tuning else REPORT_SEEDS
    seeds = tuple(int(s) for s in args.seeds.split(",")) if args.seeds else default
    problem = seed_problem(seeds, args.tuning)
    if problem:
        p.error(problem)
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        p.error(f"unknown strategy {unknown[0]!r}; choose from {', '.join(STRATEGIES)}")
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[list[int]]] = {}
    for budget in budgets:
        options = FuzzOptions(budget=budget, out=str(args.out / "runs" / f"B{budget}"), agent=args.agent,
                              episodes=args.episodes, seeds=seeds, strategies=strategies)
        _, runs = run_fuzz(options)
        for strategy in strategies:
            mine = [r for r in runs if r.strategy == strategy]
            found: dict[str, list[int]] = {}
            for r in mine:
                for w, at in r.first_detection.items():
                    found.setdefault(w, []).append(at)
            rows.append({
                "strategy": strategy, "budget": budget, "seeds": list(seeds),
                "triggered": [len(r.unique) for r in mine],
                "total": mine[0].planted_total,
                "pairs": [sum(e.pair for e in r.executed) for r in mine],
                "false_positives": [sum(e.false_positive for e in r.executed) for r in mine],
                "roots_used": [r.summary()["roots_used"] for r in mine],
                "margin_shrinks": [r.summary()["margin_shrinks"] for r in mine],
                "margin_probes": [r.margin_probes for r in mine],
                "parent_fails": [sum(not e.parent_passed for e in r.executed) for r in mine],
                "first_detection": {w: sorted(v) for w, v in sorted(found.items())},
            })
            if budget == max(budgets):
                curves[strategy] = [[c["unique_failures"] for c in r.curve] for r in mine]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"agent": args.agent, "rows": rows, "curves": curves},
                                                      indent=1, sort_keys=True) + "\n", encoding="utf-8")
    total = rows[0]["total"] if rows else 0
    header = (f"| strategy | B | weaknesses triggered (of {total}) | pairs | false positives | roots used | "
              "margin shrinks | parent already fails | first detection: weakness (runs that found it, median budget) |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        det = "; ".join(f"{w} ({len(v)}, {statistics.median(v):g})" for w, v in r["first_detection"].items())
        lines.append(f"| {r['strategy']} | {r['budget']} | {_pm(r['triggered'])} | {_pm(r['pairs'])} | "
                     f"{_pm(r['false_positives'])} | {_pm(r['roots_used'])} | {_pm(r['margin_shrinks'])} | "
                     f"{_pm(r['parent_fails'])} | {det} |")
    lines += ["", "; ".join(ratios(rows, budgets))]
    (args.out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot(args.out / "budget_curve.png", curves)
    print("\n".join(lines))
    return 0


def seed_problem(seeds: tuple[int, ...], tuning: bool) -> str | None:
    """Why ``seeds`` may not be used (None: they may): a run never mixes tuning and
    report seeds, and a tuning run uses no report seed."""
    used_report = [s for s in seeds if s in REPORT_SEEDS]
    used_tuning = [s for s in seeds if s in TUNING_SEEDS]
    if used_report and used_tuning:
        return f"seeds {used_report} (report) and {used_tuning} (tuning) must not share a run"
    if tuning and used_report:
        return f"a tuning run may not use the report seeds {used_report}"
    return None


def ratios(rows: list[dict[str, Any]], budgets: list[int]) -> list[str]:
    """``B=96: margin/random = 1.50`` for every strategy against random, per budget."""
    out = []
    for b in budgets:
        mean = {r["strategy"]: statistics.fmean(r["triggered"]) for r in rows if r["budget"] == b}
        if "random" not in mean:
            continue
        if not mean["random"]:
            out.append(f"B={b}: random found none")
            continue
        out += [f"B={b}: {strategy}/random = {m / mean['random']:.2f}"
                for strategy, m in mean.items() if strategy != "random"]
    return out


def _plot(path: Path, curves: dict[str, list[list[int]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 4))
    for strategy, runs in curves.items():
        n = max(len(c) for c in runs)
        ys = np.array([[c[min(i, len(c) - 1)] for i in range(n)] for c in runs], dtype=float)
        mu = ys.mean(axis=0)
        sd = ys.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros(n)
        x = np.arange(1, n + 1)
        ax.plot(x, mu, label=strategy)
        ax.fill_between(x, mu - sd, mu + sd, alpha=0.2)
    ax.set(xlabel="budget (mutant executions)", ylabel="planted weaknesses triggered",
           title="weak:fuzz-target, mean ± sd over seeds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
