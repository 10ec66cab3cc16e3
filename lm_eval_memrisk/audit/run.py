"""Run the shortcut suite over episodes and tabulate passes per agent and risk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from lm_eval_memrisk.audit.cues import cue_table
from lm_eval_memrisk.audit.shortcuts import SHORTCUTS, Shortcut
from lm_eval_memrisk.audit.view import AUDIT_PRESENTATION, read_view
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import risk_ids
from lm_eval_memrisk.running.runner import decision_prompts, trace_from_replies
from lm_eval_memrisk.scoring.scorer import score

#: Every risk of the registry (main track first), then the main track as a whole.
GROUPS: tuple[str, ...] = (*risk_ids(), "main")


def replies(shortcut: Shortcut, episode: Episode) -> dict[str, str]:
    """The agent's reply at each decision point (it sees messages + skeleton only)."""
    out: dict[str, str] = {}
    for prompt in decision_prompts(episode, None, AUDIT_PRESENTATION):
        skeleton = dict(episode.event(prompt.decision_id).naive or {})
        out[prompt.decision_id] = shortcut.agent(read_view(prompt.messages, skeleton))
    return out


def passes(shortcut: Shortcut, episode: Episode) -> bool:
    trace = trace_from_replies(episode, replies(shortcut, episode), shortcut.name)
    return score(episode, trace).success


def _cell(passed: int, n: int) -> dict[str, Any]:
    return {"n": n, "passed": passed, "pass_rate": round(passed / n, 3) if n else 0.0}


def tally(episodes: Iterable[Episode], passed: Callable[[Episode], bool]) -> dict[str, Any]:
    """``{R1..R6, "main": {"n", "passed", "pass_rate"}}`` of ``passed`` over ``episodes``
    (groups with no episode left out)."""
    counts = {g: [0, 0] for g in GROUPS}
    for ep in episodes:
        ok = passed(ep)
        for g in (ep.risk, "main") if ep.track == "main" else (ep.risk,):
            counts[g][0] += ok
            counts[g][1] += 1
    return {g: _cell(p, n) for g, (p, n) in counts.items() if n}


def audit(episodes: Sequence[Episode], shortcuts: Sequence[Shortcut] = SHORTCUTS) -> dict[str, Any]:
    """``{"shortcuts": {NAME: {"kind", R1..R6, "main"}}, "cues": [...]}``."""
    table: dict[str, Any] = {}
    for sc in shortcuts:
        row: dict[str, Any] = {"kind": sc.kind}
        row.update(tally(episodes, partial(passes, sc)))
        table[sc.name] = row
    return {"shortcuts": table, "cues": cue_table(episodes)}


def format_tables(result: dict[str, Any]) -> str:
    """The agent x risk table (with the learned reader's rows when ``result`` has them)
    and the cue table as Markdown."""
    groups = [g for g in GROUPS if any(g in r for r in result["shortcuts"].values())]
    lines = ["| agent | kind | " + " | ".join(groups) + " |", "|---|---|" + "---|" * len(groups)]
    rows = [(name, row["kind"], row) for name, row in result["shortcuts"].items()]
    setup = result.get("learned_setup", {})
    if "learned" in result:  # learned.learned_audit's rows
        rows.append((f"learned (trained on seed {setup.get('train_seed', '?')})", "learned", result["learned"]))
    if "learned_cv" in result:
        rows.append((f"learned ({setup.get('cv_folds', '?')}-fold CV on this file)", "learned", result["learned_cv"]))
    for name, kind, row in rows:
        cells = [f"{row[g]['passed']}/{row[g]['n']}" if g in row else "-" for g in groups]
        lines.append(f"| {name} | {kind} | " + " | ".join(cells) + " |")
    lines += ["", "| cue | n | right rate |", "|---|---|---|"]
    lines += [f"| {c['cue']} | {c['n']} | {c['right_rate']:.2f} |" for c in result["cues"]]
    return "\n".join(lines)
