"""Structural features of an episode (pure; used by the selector and reports)."""

from __future__ import annotations

import re

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import detected

_PLACEHOLDER = re.compile(r"\{\{mem:([^{}]+)\}\}")


def risk_types_present(episode: Episode) -> tuple[str, ...]:
    """Which risk phenomena the episode's events contain (each risk's
    :attr:`~lm_eval_memrisk.episodes.risks.RiskSpec.detector`), sorted."""
    return tuple(sorted(detected(episode)))


def relevant_keys(episode: Episode) -> set[str]:
    """Memory keys the decision points are about (named by checks or placeholders)."""
    items = episode.memory_items
    keys: set[str] = set()
    for dp in episode.decision_points:
        for c in dp.checks:
            if c.item in items:
                keys.add(items[c.item].key)
        keys.update(k.strip() for k in _PLACEHOLDER.findall(repr(dp.naive or {})))
        ref = repr(dp.reference or {})
        keys.update(i.key for i in items.values() if i.value in ref)
    return keys


def episode_features(episode: Episode) -> dict[str, int]:
    relevant = relevant_keys(episode)
    items = episode.memory_items.values()
    return {
        "n_turns": episode.turn_count,
        "n_memories": len(episode.memory_items),
        "n_checks": sum(len(dp.checks) for dp in episode.decision_points),
        "n_tool_calls": sum(1 for e in episode.events if e.type == "tool_call"),
        "n_tools": len(episode.tools),
        "n_constraints": len(episode.constraints),
        "n_decisions": len(episode.decision_points),
        "n_distractors": sum(1 for i in items if i.key not in relevant),
        "n_risk_types": len(risk_types_present(episode)),
        "n_events": len(episode.events),
    }
