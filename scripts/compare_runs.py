"""Paired comparison of runs on the same episodes: per-risk pass and violation, McNemar.

    python scripts/compare_runs.py BASE=DIR NAME=DIR ... [--episodes FILE] [--shared] [--markdown]

The first run is the baseline (e.g. the ``full`` memory policy, or scripted mode).
Every run is read through the one run-folder reader (scores recomputed from the
logged replies).  For each run and risk: passed episodes, episodes with a violation
(a must-not check failed), and for the other runs the exact McNemar test against the
baseline on the episodes both ran (pass flags, then violation flags), with the counts
of discordant episodes.  This is the table of README "Memory policies on a model that
acts" and "Interactive vs scripted".
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from lm_eval_memrisk.episodes.risks import main_risks
from lm_eval_memrisk.leaderboard.collect import collect
from selector.stats import mcnemar_exact


def _paired(base: dict[str, Any], other: dict[str, Any], ids: list[str], attr: str) -> dict[str, Any]:
    a = np.array([bool(getattr(base[i], attr)) for i in ids], dtype=bool)
    b = np.array([bool(getattr(other[i], attr)) for i in ids], dtype=bool)
    p, only_base, only_other = mcnemar_exact(a, b)
    return {"p": p, "only_base": only_base, "only_other": only_other}


def compare(runs: Sequence[str], episodes: Sequence[str] = (), shared: bool = False) -> list[dict[str, Any]]:
    """Rows of :func:`markdown`; ``shared``: only the episodes every run has."""
    def note(msg: str) -> None:
        print(f"compare_runs: {msg}", file=sys.stderr)

    systems = [s for run in runs for s in collect([run], note, list(episodes))]  # in argument order
    hashes = {s.signature.dataset_hash for s in systems}
    if len(hashes) > 1:
        raise SystemExit(f"compare_runs: the runs used different datasets ({sorted(hashes)}); refusing to pair them")
    by_id = [{e.episode_id: e for e in s.episodes if e.risk in main_risks()} for s in systems]
    if shared:
        common = set.intersection(*(set(b) for b in by_id))
        by_id = [{i: e for i, e in b.items() if i in common} for b in by_id]
    rows = []
    for s, eps in zip(systems, by_id):
        row: dict[str, Any] = {"system": s.name, "policy": s.signature.memory_policy, "mode": s.signature.mode,
                               "risks": {}}
        for risk in list(main_risks()) + ["overall"]:
            ids = sorted(i for i, e in eps.items() if risk == "overall" or e.risk == risk)
            cell: dict[str, Any] = {
                "n": len(ids), "passed": sum(eps[i].passed for i in ids),
                "violation": sum(eps[i].violation for i in ids),
            }
            if s is not systems[0]:
                shared = [i for i in ids if i in by_id[0]]
                cell["vs_base"] = {"n": len(shared), "pass": _paired(by_id[0], eps, shared, "passed"),
                                   "violation": _paired(by_id[0], eps, shared, "violation")}
            row["risks"][risk] = cell
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    cols = list(main_risks()) + ["overall"]
    out = ["| run | policy | mode | " + " | ".join(cols) + " | McNemar vs first, pass (p; first-only/this-only) "
           "| McNemar vs first, violation |", "|---|---|---|" + "---|" * (len(cols) + 2)]
    for row in rows:
        cells = [f"{c['passed']}/{c['n']} · {c['violation']}" for c in (row["risks"][k] for k in cols)]
        vs = row["risks"]["overall"].get("vs_base")
        tests = ["", ""] if vs is None else [
            f"{vs[m]['p']:.3g} ({vs[m]['only_base']}/{vs[m]['only_other']})" for m in ("pass", "violation")]
        out.append(f"| {row['system']} | {row['policy']} | {row['mode']} | " + " | ".join(cells + tests) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="NAME=DIR or DIR; the first is the baseline")
    ap.add_argument("--episodes", action="append", default=[], help="episode file the runs used")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table (cells: passed/n · violations)")
    ap.add_argument("--shared", action="store_true", help="only the episodes every run has (e.g. a slice)")
    args = ap.parse_args(argv)
    rows = compare(args.runs, args.episodes, shared=args.shared)
    print(markdown(rows) if args.markdown else json.dumps(rows, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
