"""Dataset statistics (``memrisk audit --stats``): how far the decisive write lies from
the final decision, foils and updates per tier, mechanism patterns per risk, multi-hop
and combined episodes, the most frequent acknowledgement.

Like the cue table this reads the ground truth: it describes the dataset, not an agent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import mean
from typing import Any

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.records import TIERS, Episode, Event
from lm_eval_memrisk.episodes.risks import risk_ids
from lm_eval_memrisk.generator.verify import action_content, write_use_gap

#: Events that shape a mechanism pattern besides the key's writes.
PATTERN_EVENTS = ("memory_revoke", "constraint_declare", "constraint_lift", "decision_point")


def slot_key(episode: Episode, dp: Event) -> str | None:
    """The memory key the decision's action template (``naive``) asks for."""
    slot = str(dp.naive or "")
    keys = sorted({it.key for it in episode.memory_items.values()})
    return next((k for k in keys if "{{mem:" + k + "}}" in slot), None)


def used_items(episode: Episode, dp: Event) -> set[str]:
    """Ids of the items written before ``dp`` whose value its reference action uses."""
    content = action_content(dp.reference or {})
    before = episode.events[: episode.events.index(dp)]
    return {e.item.id for e in before if e.item is not None and contains_value(content, e.item.value)}


def final_gap(episode: Episode) -> int | None:
    """User/assistant messages from the decisive write to the final decision (None when
    the reference uses no note, e.g. a clarifying question)."""
    dp = episode.decision_points[-1]
    return write_use_gap(episode, episode.events.index(dp), used_items(episode, dp))


def mechanism_pattern(episode: Episode) -> tuple[tuple[str, ...], ...]:
    """The sequence of the final decision key's writes (kind, source, trust, owner kind,
    right or not) and of revocations, rules, lifts and earlier decisions before it."""
    dp = episode.decision_points[-1]
    key, used = slot_key(episode, dp), used_items(episode, dp)
    out: list[tuple[str, ...]] = []
    for e in episode.events[: episode.events.index(dp)]:
        if e.item is not None and e.item.key == key:
            right = "right" if e.item.id in used else "wrong"
            out.append((e.type, e.item.source, str(e.item.trust), e.item.scope.split(":")[0], right))
        elif e.type in PATTERN_EVENTS:
            out.append((e.type,))
    return tuple(out)


def wrong_notes(episode: Episode) -> int:
    """Notes of the final decision's key written before it that its reference does not use."""
    dp = episode.decision_points[-1]
    key, used = slot_key(episode, dp), used_items(episode, dp)
    before = episode.events[: episode.events.index(dp)]
    return sum(1 for e in before if e.item and e.item.key == key and e.item.id not in used)


def dataset_stats(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Per tier: gap mean/min, wrong notes at the final decision, same-key updates per episode,
    episodes with 2+ decisions; per risk: mechanism patterns; overall: multi-hop and
    combined episodes per risk, the most frequent assistant string's share."""
    tiers: dict[str, dict[str, float]] = {}
    for tier in TIERS:
        eps = [ep for ep in episodes if ep.tier == tier]
        gaps = [g for g in map(final_gap, eps) if g is not None]
        wrong = [wrong_notes(ep) for ep in eps]
        updates = [sum(e.type == "memory_update" and e.item is not None
                       and e.item.key == slot_key(ep, ep.decision_points[-1]) for e in ep.events)
                   for ep in eps]  # fmt: skip
        tiers[tier] = {
            "gap_mean": float(round(mean(gaps), 1)) if gaps else 0.0,
            "gap_min": min(gaps, default=0),
            "wrong_notes_final": float(round(mean(wrong), 1)) if wrong else 0.0,
            "updates_per_episode": float(round(mean(updates), 1)) if updates else 0.0,
            "multi_decision_episodes": sum(len(ep.decision_points) > 1 for ep in eps),
        }
    risks = risk_ids()
    acks = Counter(e.text for ep in episodes for e in ep.events if e.type == "assistant_message")
    top = acks.most_common(1)[0][1] if acks else 0
    return {
        "tiers": tiers,
        "patterns": {r: len({mechanism_pattern(ep) for ep in episodes if ep.risk == r}) for r in risks},
        "multi_hop": {r: sum(bool(ep.metadata.get("multi_hop")) for ep in episodes if ep.risk == r)
                      for r in risks},  # fmt: skip
        "combined": {r: sum(bool(ep.metadata.get("combined")) for ep in episodes if ep.risk == r)
                     for r in risks},  # fmt: skip
        "top_ack_share": round(top / sum(acks.values()), 3) if acks else 0.0,
        "assistant_turns": sum(acks.values()),
    }


def format_stats(stats: dict[str, Any]) -> str:
    """The statistics as two Markdown tables (per tier, per risk)."""
    t = stats["tiers"]
    rows = [
        ("gap, mean", "gap_mean"), ("gap, minimum", "gap_min"),
        ("wrong notes of the key at the final decision", "wrong_notes_final"),
        ("same-key updates per episode", "updates_per_episode"),
        ("episodes with 2+ decisions", "multi_decision_episodes"),
    ]  # fmt: skip
    lines = ["| per tier | " + " | ".join(TIERS) + " |", "|---|---|---|---|"]
    lines += [f"| {label} | " + " | ".join(str(t[x][k]) for x in TIERS) + " |" for label, k in rows]
    risks = list(stats["patterns"])
    lines += ["", "| per risk | " + " | ".join(risks) + " |", "|---|" + "---|" * len(risks)]
    for label, k in (("mechanism patterns", "patterns"), ("multi-hop episodes", "multi_hop"),
                     ("combined episodes", "combined")):  # fmt: skip
        lines.append(f"| {label} | " + " | ".join(str(stats[k][r]) for r in risks) + " |")
    share = f"{100 * stats['top_ack_share']:.1f}% of {stats['assistant_turns']} turns"
    lines += ["", f"Most frequent assistant string: {share}."]
    return "\n".join(lines)
