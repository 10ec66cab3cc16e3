"""Fuzzer experiment on a planted-weakness target (no model, CPU-light).

Runs guided, random and coverage-only search on ``weak:fuzz-target`` (8 planted
weaknesses, :mod:`lm_eval_memrisk.running.weak`) at each budget and seed, through the same
library call as ``memrisk fuzz`` (:func:`lm_eval_memrisk.fuzz.pipeline.run_fuzz`), and
writes ``table.md``, ``results.json`` and ``budget_curve.png`` into ``--out``.

    python scripts/fuzz_planted.py --out docs/fuzz_planted    # B = 24, 48, 96; seeds 0-4
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


def _pm(values: list[float], digits: int = 1) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--agent", default="weak:fuzz-target")
    p.add_argument("--budgets", default="24,48,96")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--episodes", default="v1",
                   help="seed dataset (default v1: the README's table; the planted target was built on it)")
    args = p.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    seeds = tuple(int(s) for s in args.seeds.split(","))
    rows: list[dict[str, Any]] = []
    curves: dict[str, list[list[int]]] = {}
    for budget in budgets:
        options = FuzzOptions(budget=budget, out=str(args.out / "runs" / f"B{budget}"), agent=args.agent,
                              episodes=args.episodes, seeds=seeds, strategies=STRATEGIES)
        _, runs = run_fuzz(options)
        for strategy in STRATEGIES:
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
                "first_detection": {w: sorted(v) for w, v in sorted(found.items())},
            })
            if budget == max(budgets):
                curves[strategy] = [[c["unique_failures"] for c in r.curve] for r in mine]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps({"agent": args.agent, "rows": rows, "curves": curves},
                                                      indent=1, sort_keys=True) + "\n", encoding="utf-8")
    header = ("| strategy | B | weaknesses triggered (of 8) | pairs | false positives | roots used | "
              "first detection: weakness (runs that found it, median budget) |")
    lines = [header, "|---|---|---|---|---|---|---|"]
    for r in rows:
        det = "; ".join(f"{w} ({len(v)}, {statistics.median(v):g})" for w, v in r["first_detection"].items())
        lines.append(f"| {r['strategy']} | {r['budget']} | {_pm(r['triggered'])} | {_pm(r['pairs'])} | "
                     f"{_pm(r['false_positives'])} | {_pm(r['roots_used'])} | {det} |")
    ratio = []
    for b in budgets:
        g = statistics.fmean(next(r for r in rows if r["strategy"] == "guided" and r["budget"] == b)["triggered"])
        rnd = statistics.fmean(next(r for r in rows if r["strategy"] == "random" and r["budget"] == b)["triggered"])
        ratio.append(f"B={b}: guided/random = {g / rnd:.2f}" if rnd else f"B={b}: random found none")
    lines += ["", "; ".join(ratio)]
    (args.out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _plot(args.out / "budget_curve.png", curves)
    print("\n".join(lines))
    return 0


def _plot(path: Path, curves: dict[str, list[list[int]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 4))
    for strategy, runs in curves.items():
        n = max(len(c) for c in runs)
        ys = np.array([[c[min(i, len(c) - 1)] for i in range(n)] for c in runs], dtype=float)
        mu, sd = ys.mean(axis=0), ys.std(axis=0, ddof=1)
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
