"""Risk isolation by ablation (``memrisk audit --ablations``): the oracle with one risk's
mechanism removed (``ablated-R1`` ... ``ablated-R5``, :mod:`lm_eval_memrisk.running.agents`),
scored on every episode.

A risk is isolated when its ablated oracle fails every episode of that risk (the
diagonal) and fails an episode of another risk only where that episode carries a
check attributed to the ablated risk (a foil: ``Check.risk``) and that check is what
fails.  Like the cue table this reads the ground truth: it measures the dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lm_eval_memrisk.audit.run import GROUPS
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.agents import ABLATIONS
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score


def ablations(episodes: Sequence[Episode]) -> dict[str, Any]:
    """``{"ablations": {ABLATED: {RISK: {"n", "passed"}, ..., "main": {...}}},
    "ablation_findings": {ABLATED: {"diagonal_passed": [ids], "off_diagonal": [...]}}}``.

    ``off_diagonal`` lists each failed episode of another risk as ``{"episode", "risk",
    "failed": [risks whose checks failed], "attributed": bool}``; ``attributed`` is
    whether a check attributed to the ablated risk is among the failed ones."""
    table: dict[str, Any] = {}
    findings: dict[str, Any] = {}
    for ablated in ABLATIONS:
        agent = get_agent(f"ablated-{ablated}")
        tally = {g: [0, 0] for g in GROUPS}
        diagonal: list[str] = []
        off: list[dict[str, Any]] = []
        for ep in episodes:
            result = score(ep, run_episode(ep, agent))
            for g in (ep.risk, "main") if ep.track == "main" else (ep.risk,):
                tally[g][0] += result.success
                tally[g][1] += 1
            if ep.risk == ablated and result.success:
                diagonal.append(ep.id)
            elif ep.risk != ablated and not result.success:
                failed = [r for r, v in result.per_risk.items() if not v["passed"]]
                off.append({"episode": ep.id, "risk": ep.risk, "failed": failed, "attributed": ablated in failed})
        table[ablated] = {g: {"n": n, "passed": p} for g, (p, n) in tally.items() if n}
        findings[ablated] = {"diagonal_passed": diagonal, "off_diagonal": off}
    return {"ablations": table, "ablation_findings": findings}


def format_ablations(result: dict[str, Any]) -> str:
    """The ablated-oracle x risk table, then the diagonal passes and off-diagonal failures."""
    rows = result["ablations"]
    groups = [g for g in GROUPS if any(g in r for r in rows.values())]
    lines = [
        "| ablated oracle | ignores | " + " | ".join(groups) + " |",
        "|---|---|" + "---|" * len(groups),
    ]
    for ablated, row in rows.items():
        cells = [f"{row[g]['passed']}/{row[g]['n']}" if g in row else "-" for g in groups]
        lines.append(f"| ablated-{ablated} | {ABLATIONS[ablated]} | " + " | ".join(cells) + " |")
    lines += ["", "Diagonal: Rk episodes that the Rk-ablated oracle passes (should be none)"]
    for ablated, found in result["ablation_findings"].items():
        lines.append(f"- ablated-{ablated}: " + (", ".join(found["diagonal_passed"]) or "none"))
    lines += ["", "Off the diagonal: failed episodes of other risks (risks whose checks failed)"]
    for ablated, found in result["ablation_findings"].items():
        off = found["off_diagonal"]
        bare = [f["episode"] for f in off if not f["attributed"]]
        lines.append(
            f"- ablated-{ablated}: {len(off)} failed, {len(off) - len(bare)} on a foil attributed to {ablated}"
            + (f"; no {ablated} foil failed: " + ", ".join(bare) if bare else "")
        )
        lines += [f"  - {f['episode']}: failed {', '.join(f['failed'])}" for f in off]
    return "\n".join(lines)
