"""Seeds: memory checkpoints of benchmark episodes.

A checkpoint is an episode cut at one decision point: the events replayed before it
(the memory store, constraints, scopes and history at that point) plus that decision
point, with every other decision point dropped.  The checkpoint of an episode's only
and last decision point is the episode itself (same id); others get
``<episode id>@<decision id>``.  A checkpoint is a seed when it validates, the
oracle solves it and its expected behaviour can be read off its decision point.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.state import ordered_events
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.fuzz import pools
from lm_eval_memrisk.fuzz.edit import fit_tier, last_user_message
from lm_eval_memrisk.fuzz.expectation import Expectation, infer
from lm_eval_memrisk.fuzz.validate_mutant import solves


@dataclass(frozen=True)
class Seed:
    episode: Episode
    exp: Expectation


def checkpoint(episode: Episode, decision_id: str) -> Episode:
    """``episode`` cut at ``decision_id`` (see the module docstring)."""
    events = ordered_events(episode)
    cut = next(i for i, e in enumerate(events) if e.id == decision_id) + 1
    kept = [e for e in events[:cut] if e.type != "decision_point" or e.id == decision_id]
    if len(kept) == len(episode.events):
        return episode
    ids = {e.id for e in kept}
    fixed: list[Event] = []
    for n, e in enumerate(kept):
        after = tuple(a for a in e.after if a in ids)
        if not after and e.after and n > 0:
            after = (kept[n - 1].id,)
        fixed.append(replace(e, after=after))
    cp = replace(episode, id=f"{episode.id}@{decision_id}", events=tuple(fixed))
    request = last_user_message(cp, decision_id)
    return fit_tier(cp, request.id if request else decision_id, pools.FILLERS)


def make_seeds(episodes: Iterable[Episode]) -> tuple[list[Seed], dict[str, int]]:
    """Seeds from every decision point of ``episodes``, and counts of skipped checkpoints."""
    seeds: list[Seed] = []
    skipped = {"invalid": 0, "oracle_fails": 0, "no_expectation": 0}
    for ep in episodes:
        for dp in ep.decision_points:
            cp = checkpoint(ep, dp.id)
            if collect_problems(cp):
                skipped["invalid"] += 1
            elif not solves(cp, "oracle"):
                skipped["oracle_fails"] += 1
            else:
                exp = infer(cp)
                if exp is None:
                    skipped["no_expectation"] += 1
                else:
                    seeds.append(Seed(cp, exp))
    return seeds, skipped


def select_episodes(
    episodes: Sequence[Episode],
    risks: Sequence[str] = (),
    limit: int | None = None,
    per_risk: int | None = None,
) -> list[Episode]:
    """Episodes of the given risks (all when empty): the first ``per_risk`` of each risk,
    then at most ``limit`` in all (file order)."""
    wanted = {r.upper() for r in risks}
    chosen = [e for e in episodes if not wanted or e.risk in wanted]
    if per_risk:
        taken: dict[str, int] = {}
        kept = []
        for e in chosen:
            if taken.get(e.risk, 0) < per_risk:
                taken[e.risk] = taken.get(e.risk, 0) + 1
                kept.append(e)
        chosen = kept
    return chosen[:limit] if limit else chosen
