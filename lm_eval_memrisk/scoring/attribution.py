"""Retrieval attribution: which failures a memory policy caused, not the agent.

Under a memory policy other than ``full`` the agent sees only some notes.  At a
decision point, the *needed* values are the values of the memory items that the
ground-truth reference action uses (e.g. the new shipping address).  A needed value
is *hidden* when it occurs nowhere in what the agent was shown: not in the rendered
messages (visible notes and the conversation), not in an interactive step's tool
result.  A decision point with a hidden needed value cannot be passed by reasoning
over memory; a failed episode with such a failed decision point is labelled
``policy_hidden`` and reported apart from agent failures (``agent``).

Pure: reads the episode, the trace and its score; the scorer's verdict is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.jsonl import json_line
from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.state import action_text
from lm_eval_memrisk.episodes.trace import DecisionRecord, ItemState, Trace
from lm_eval_memrisk.scoring.parse import parse_action
from lm_eval_memrisk.scoring.scorer import ScoreResult

__all__ = ["FAILURE_LABELS", "attribute", "failure_counts", "hidden_values", "needed_values", "shown_text"]

#: ``None`` (passed), ``agent`` (the agent's own failure) or ``policy_hidden``.
FAILURE_LABELS: tuple[str, ...] = ("agent", "policy_hidden")


def needed_values(decision: Event, memory: Iterable[ItemState]) -> list[str]:
    """Values of memory items the decision point's reference action contains, sorted."""
    content = parse_action(action_text(dict(decision.reference or {"answer": ""}))).content
    return sorted({i.value for i in memory if contains_value(content, i.value)})


def shown_text(messages: Sequence[Mapping[str, Any]], tool_results: Iterable[Any] = ()) -> str:
    """Everything the agent was shown: message contents and tool results, one text."""
    parts = [str(m.get("content", "")) for m in messages]
    parts += [json_line(r) for r in tool_results if r is not None]
    return "\n".join(parts)


def hidden_values(needed: Iterable[str], shown: str) -> list[str]:
    """The needed values that occur nowhere in ``shown``."""
    return [v for v in needed if not contains_value(shown, v)]


def _hidden_at(decision: Event, rec: DecisionRecord) -> list[str]:
    shown = shown_text(rec.messages, (s.tool_result for s in rec.steps))
    return hidden_values(needed_values(decision, rec.state.memory), shown)


def attribute(episode: Episode, trace: Trace, result: ScoreResult) -> dict[str, Any]:
    """The episode's attribution record (see the module docstring).

    ``hidden``: decision ids whose needed values the policy hid (passed or not);
    ``failure``: ``None``, ``agent`` or ``policy_hidden``.
    """
    failed = {c.decision_id for c in result.checks if not c.passed}
    hidden: list[str] = []
    hidden_failed = False
    for dp in episode.decision_points:
        rec = trace.decision(dp.id)
        if rec is not None and _hidden_at(dp, rec):
            hidden.append(dp.id)
            hidden_failed = hidden_failed or dp.id in failed
    failure = None if result.success else ("policy_hidden" if hidden_failed else "agent")
    return {
        "episode_id": episode.id, "risk": episode.risk, "policy": trace.memory_policy,
        "success": result.success, "failure": failure, "hidden_decisions": hidden,
    }


def failure_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per risk (and ``all``): ``{"n", "passed", "agent", "policy_hidden"}``."""
    out: dict[str, dict[str, int]] = {}
    for r in records:
        for key in (str(r["risk"]), "all"):
            row = out.setdefault(key, {"n": 0, "passed": 0, "agent": 0, "policy_hidden": 0})
            row["n"] += 1
            row["passed"] += bool(r["success"])
            if r.get("failure") in FAILURE_LABELS:
                row[str(r["failure"])] += 1
    return out
