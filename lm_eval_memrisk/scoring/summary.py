"""Per-risk summaries of score results and their plain-text table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lm_eval_memrisk.episodes.risks import risk_ids
from lm_eval_memrisk.scoring.scorer import ScoreResult


def summarize(results: Sequence[ScoreResult], variant: str, sig: str) -> dict[str, Any]:
    """The summary object printed by ``memrisk run/score --json``."""
    by_risk: dict[str, dict[str, Any]] = {}
    for risk in risk_ids():
        rs = [r for r in results if r.risk == risk]
        if rs:
            passed = sum(r.success for r in rs)
            by_risk[risk] = {"n": len(rs), "passed": passed, "pass_rate": round(passed / len(rs), 6)}
    n = len(results)
    return {
        "n": n,
        "passed": sum(r.success for r in results),
        "score": round(sum(r.score for r in results) / n, 6) if n else 0.0,
        "by_risk": by_risk,
        "variant": variant,
        "signature": sig,
    }


def format_table(summary: dict[str, Any]) -> str:
    lines = [f"{'risk':<6}{'n':>5}{'passed':>8}{'pass rate':>11}"]
    for risk, row in summary["by_risk"].items():
        lines.append(f"{risk:<6}{row['n']:>5}{row['passed']:>8}{row['pass_rate']:>11.3f}")
    lines.append(f"{'all':<6}{summary['n']:>5}{summary['passed']:>8}"
                 f"{(summary['passed'] / summary['n'] if summary['n'] else 0):>11.3f}")
    lines.append(f"mean score {summary['score']:.3f}   {summary['signature']}")
    return "\n".join(lines)
