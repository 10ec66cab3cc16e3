"""memrisk report RUN_DIR...: per-risk pass rates of one or more runs, side by side.

With several runs of the same model under different memory policies this is the
memory-baseline table of paper §6.8.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lm_eval_memrisk.cli._shared import add_run_arguments, add_scoring_arguments

HELP = "print per-risk pass rates of lm-eval/memrisk run folders side by side"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_run_arguments(p)
    add_scoring_arguments(p)
    p.add_argument("--metric", default="pass", choices=("pass", "score", "acted", "violation", "false_claim"),
                   help="pass: passed episodes (default); score: mean fraction of checks passed; "
                        "acted: decisions where the agent acted (a tool call or a needed value); "
                        "violation: violations among the decisions where the agent acted; "
                        "false_claim: episodes where a reply claims an action it did not take")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", action="store_true", help="print the table as JSON")


def label(system: Any) -> str:
    sig = system.signature
    extra = [x for x in (sig.mode if sig.mode != "scripted" else "", sig.memory_policy if sig.memory_policy != "full" else "") if x]
    return str(system.name) + (f" [{', '.join(extra)}]" if extra else "")


def _acted_cell(eps: list[Any], metric: str) -> str:
    """``k/n (r%)``: acted decisions, or violations among acted decisions ("n/a" for old records)."""
    known = [e for e in eps if e.acted is not None]
    if not known:
        return "n/a"
    if metric == "acted":
        k, n = sum(e.acted for e in known), sum(e.decisions for e in known)
    else:
        k, n = sum(e.acted_violations for e in known), sum(e.acted for e in known)
    return f"{k}/{n} ({k / n:.0%})" if n else f"{k}/0"


def run(args: argparse.Namespace) -> int:
    from lm_eval_memrisk.episodes.risks import main_risks, risk_ids
    from lm_eval_memrisk.leaderboard.collect import collect

    systems = collect(args.runs, lambda note: print(f"memrisk report: {note}", file=sys.stderr), args.episodes)
    table: dict[str, dict[str, str]] = {}
    for s in systems:
        row = {}
        for risk in [*risk_ids(), "overall"]:
            eps = [e for e in s.episodes if (e.risk in main_risks() if risk == "overall" else e.risk == risk)]
            if eps and args.metric in ("acted", "violation"):
                row[risk] = _acted_cell(eps, args.metric)
            elif eps and args.metric == "false_claim":
                k = sum(e.false_claim for e in eps)
                row[risk] = f"{k}/{len(eps)} ({k / len(eps):.0%})"
            elif eps and args.metric == "score":
                row[risk] = f"{sum(e.score for e in eps) / len(eps):.3f}"
            elif eps:
                ok = [e.passed_safety_aware if args.variant == "safety_aware" else e.passed for e in eps]
                k = sum(ok)
                hidden = sum(e.failure == "policy_hidden" and not good for e, good in zip(eps, ok))
                note = f"; {hidden} policy-hidden" if hidden else ""
                row[risk] = f"{k}/{len(eps)} ({k / len(eps):.0%}{note})"
        table[label(s)] = row
    cols = [c for c in [*risk_ids(), "overall"] if any(c in r for r in table.values())]
    if args.json:
        flagged = {label(s): s.signature.flagged for s in systems if s.signature.flagged}
        status = {label(s): s.status for s in systems}
        print(json.dumps({"variant": args.variant, "metric": args.metric, "rows": table, "flagged": flagged,
                          "status": status}, indent=2, sort_keys=True))
        return 0
    if args.markdown:
        print("| system | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for name, row in table.items():
            print(f"| {name} | " + " | ".join(row.get(c, "") for c in cols) + " |")
        return 0
    width = max(len(n) for n in table) + 2
    cell = {c: max(14, *(len(row.get(c, "")) + 2 for row in table.values())) for c in cols}  # never run together
    print("".join([f"{'system':<{width}}"] + [f"{c:>{cell[c]}}" for c in cols]))
    for name, row in table.items():
        print("".join([f"{name:<{width}}"] + [f"{row.get(c, ''):>{cell[c]}}" for c in cols]))
    for s in systems:
        if s.signature.flagged:
            print(f"FLAGGED {label(s)}: {s.signature.flagged}")
        if not s.ranked:
            print(f"INCOMPLETE {label(s)}: {s.status}, not ranked")
    what = {"score": "mean score per risk", "acted": "acted / decisions per risk",
            "violation": "violations / decisions where the agent acted, per risk",
            "false_claim": "episodes with a completion claimed but not done, per risk"}.get(args.metric, "pass counts per risk")
    print(f"(variant: {args.variant}; {what}; overall = R1-R5; 'policy-hidden': failed episodes whose "
          f"needed note the memory policy did not show, see attribution.py)")
    return 0
