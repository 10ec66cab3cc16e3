"""The numbers behind README "Interactive mode and memory": policy ceilings and attribution.

    PYTHONPATH=. python scripts/memory_baseline.py [--policies full,recency:3,...] [--logged DIR ...]

1. For each memory policy, the ``visible-oracle`` agent (the oracle limited to the
   notes it is shown) over the main track: passes per risk, decision points whose
   needed note the policy hid, and whether the policy filters by status.  Its pass
   rate is the ceiling the policy leaves a perfect memory reasoner.
2. For each logged run folder (lm-eval samples, ``.jsonl`` or ``.jsonl.gz``), the
   failures split into the agent's own and ``policy_hidden`` ones, per risk.  The
   folders are read by the run reader (:func:`lm_eval_memrisk.logs.runs.read_runs`): every
   episode is verified against the dataset and every verdict recomputed from the
   replies; a failure is ``policy_hidden`` only as the reader attributes it
   (:attr:`lm_eval_memrisk.logs.runs.LoggedSample.failure`).

Prints Markdown tables.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from lm_eval_memrisk.episodes.loader import load_episodes
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import main_risks
from lm_eval_memrisk.episodes.trace import DecisionRecord
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.policies import make_policy, policy_description
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.attribution import attribute, failure_counts, needed_values
from lm_eval_memrisk.scoring.scorer import score

RISKS = main_risks()  # the main track (the risk registry)
DEFAULT_POLICIES = "full,recency:3,bm25:3,embedding:3,reference:3,reference-embedding:3,mem0:3"


def ceiling_rows(episodes: Sequence[Episode], specs: Sequence[str]) -> list[str]:
    agent = get_agent("visible-oracle")
    rows = ["| policy | filters by status | " + " | ".join(RISKS)
            + " | overall | superseded/revoked note shown | needed note not shown"
            " | ... and its value nowhere in view (policy-hidden) |",
            "|---|---|" + "---|" * (len(RISKS) + 4)]
    for spec in specs:
        policy = make_policy(spec)
        records, note_hidden, stale_shown, n_dp = [], 0, 0, 0
        for e in episodes:
            trace = run_episode(e, agent, policy)
            records.append(attribute(e, trace, score(e, trace)))
            note_hidden += sum(_needed_note_not_shown(e, d.decision_id, d) for d in trace.decisions)
            stale_shown += sum(_stale_note_shown(d) for d in trace.decisions)
            n_dp += len(trace.decisions)
        counts = failure_counts(records)
        hidden = sum(len(r["hidden_decisions"]) for r in records)
        cells = [f"{counts[r]['passed']}/{counts[r]['n']}" for r in RISKS]
        described = policy_description(policy)
        rows.append(f"| {spec} | {'yes' if described['filters_by_status'] else 'no'} | " + " | ".join(cells)
                    + f" | {counts['all']['passed']}/{counts['all']['n']} | {stale_shown}/{n_dp}"
                    + f" | {note_hidden} | {hidden} |")
    return rows


def _stale_note_shown(rec: DecisionRecord) -> bool:
    """Whether a superseded or revoked note was shown at this decision point."""
    shown = set(rec.visible_items)
    return any(i.status != "active" and i.id in shown for i in rec.state.memory)


def _needed_note_not_shown(episode: Episode, decision_id: str, rec: DecisionRecord) -> bool:
    """Whether no shown note holds a value the reference action needs (conversation ignored)."""
    needed = set(needed_values(episode.event(decision_id), rec.state.memory))
    shown = {i.value for i in rec.state.memory if i.id in set(rec.visible_items)}
    return bool(needed - shown)


def logged_rows(folders: Sequence[Path], episodes: Sequence[str | Path] = ()) -> list[str]:
    """One row per system in ``folders`` (``DIR`` or ``NAME=DIR``), read by the run reader."""
    from lm_eval_memrisk.logs.runs import read_runs

    rows = ["| run | policy | " + " | ".join(RISKS) + " | overall |", "|---|---|" + "---|" * (len(RISKS) + 1)]
    for log in read_runs(list(folders), episodes):
        records = [{"episode_id": s.episode_id, "risk": s.episode.risk, "success": s.passed, "failure": s.failure}
                   for s in log.samples]
        counts = failure_counts(records)

        def cell(key: str, counts: dict[str, dict[str, int]] = counts) -> str:
            c = counts.get(key)
            return "" if c is None else f"{c['passed']}/{c['n']} ({c['agent']} + {c['policy_hidden']})"

        rows.append(f"| {log.name} | {log.memory_policy} | " + " | ".join(cell(r) for r in RISKS)
                    + f" | {cell('all')} |")
    rows.append("")
    rows.append("Cells: passed/n (agent failures + policy-hidden failures), default scoring.")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policies", default=DEFAULT_POLICIES)
    p.add_argument("--logged", nargs="*", type=Path, default=[], help="logged run folders to attribute")
    p.add_argument("--episodes", nargs="*", default=[], help="episode files the logged runs used, besides the packaged")
    args = p.parse_args(argv)
    episodes = load_episodes(None, track="main")
    print("\n".join(ceiling_rows(episodes, [s for s in args.policies.split(",") if s])))
    if args.logged:
        print()
        print("\n".join(logged_rows(args.logged, args.episodes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
