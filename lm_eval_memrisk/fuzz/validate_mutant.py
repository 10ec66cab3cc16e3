"""Validation of a mutant before it may be executed.

A mutant is kept only when (1) it survives the canonical JSON round trip, (2) the
episode validator finds no problem, (3) the oracle agent passes every check and
(4) the adversary of its targeted risk fails: R1/R2/R4 -> ``stale``, R3 -> ``leaky``,
R5 -> ``constraint-blind``, R6 -> the one the operator named in
``metadata["adversary"]`` (``stale`` for a summary older than the current item,
``leaky`` for another scope's summary), or, without that, ``stale`` or ``leaky``,
whichever fails, and (5) an agent that does nothing fails (a mutant that rewards not
acting measures no memory use).  Rejected mutants are counted by reason, never
executed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lm_eval_memrisk.episodes.codec import dumps_episode
from lm_eval_memrisk.episodes.errors import EpisodeFormatError
from lm_eval_memrisk.episodes.loader import episode_from_dict
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.risks import adversaries_of, specs
from lm_eval_memrisk.episodes.validate import collect_problems
from lm_eval_memrisk.running.agent_registry import get_agent
from lm_eval_memrisk.running.runner import run_episode
from lm_eval_memrisk.scoring.scorer import score

#: Risk -> its reference adversaries (the registry's ``adversaries``; a snapshot).
ADVERSARIES: dict[str, tuple[str, ...]] = {s.risk: s.adversaries for s in specs()}
REASONS = ("not_serialisable", "invalid_episode", "oracle_fails", "adversary_passes", "do_nothing_passes")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""
    """One of :data:`REASONS` when rejected."""
    detail: str = ""


def adversaries(episode: Episode) -> tuple[str, ...]:
    """The reference agents of which at least one must fail ``episode``."""
    named = episode.metadata.get("adversary")
    if isinstance(named, str) and named:
        return (named,)
    return adversaries_of(episode.risk)


def solves(episode: Episode, agent: str) -> bool:
    """Whether reference agent ``agent`` passes every check of ``episode``."""
    return score(episode, run_episode(episode, get_agent(agent))).success


def check_mutant(episode: Episode) -> Verdict:
    """Validate a mutant (see the module docstring)."""
    try:
        again = episode_from_dict(json.loads(dumps_episode(episode)))
    except (EpisodeFormatError, TypeError, ValueError) as exc:
        return Verdict(False, "not_serialisable", str(exc))
    if again != episode:
        return Verdict(False, "not_serialisable", "the JSON round trip changes the episode")
    problems = collect_problems(episode)
    if problems:
        return Verdict(False, "invalid_episode", str(problems[0]))
    if not solves(episode, "oracle"):
        return Verdict(False, "oracle_fails", "the oracle agent fails the recomputed checks")
    names = adversaries(episode)
    if not names or all(solves(episode, a) for a in names):
        return Verdict(
            False, "adversary_passes", f"{'/'.join(names) or 'no adversary'} passes {episode.risk}"
        )
    if solves(episode, "do-nothing"):
        return Verdict(False, "do_nothing_passes", "an agent that does nothing passes every check")
    return Verdict(True)
