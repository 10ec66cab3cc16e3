"""Graded margins of planted weaknesses: how close each came to firing at a decision.

A planted weakness (:mod:`lm_eval_memrisk.running.weak`) *acts* at a decision point
where all the conditions of its trigger are met and its wrong memory choice differs
from the oracle's.  Its **margin** grades how far it is from that, so a search can see
progress before a failure happens (as compare-operand feedback does for a branch):

* each trigger condition has a *shortfall* on [0, 1]
  (:meth:`lm_eval_memrisk.running.weak.Condition.shortfall`): 0 when met; a flag
  (another scope's newer note, an indirect request, a conflict, a revocation) is 1
  when false; a threshold k (turns since the write, same-key updates, constraint age)
  is ``(k - value) / k``, and 1 when there is nothing to count (no live note, no
  constraint);
* one more condition, ``differs``, is 0 when the weakness's wrong choice would give a
  reply that differs from the oracle's in the memory it uses
  (:func:`lm_eval_memrisk.running.weak.wrong_choice`), else 1;
* the margin is the mean shortfall over those conditions, on [0, 1].  Smaller is
  closer to firing; **margin <= 0 (it is never negative) means the weakness acts**:
  the agent fails the decision (at rate p = 1; the seeded rate coin is ignored, as in
  :meth:`~lm_eval_memrisk.running.weak.WeakAgent.wrong_replies`).

Examples: ``gap10`` on a note written 8 turns ago whose stale value differs from the
current one has margin (0.2 + 0) / 2 = 0.1.  ``deep-chain`` has four conditions
(constraint age >= 4, >= 1 update, another scope's newer note, differs); no v1 seed
meets two of the first three and one mutation adds at most one of them, so from a seed
its margin is >= 1/2 and reaching 0 takes two shrinking steps or more (each met
condition takes 1/4 off).

A decision's margin is the smallest over the agent's weaknesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import events_before, snapshot
from lm_eval_memrisk.episodes.trace import StateSnapshot
from lm_eval_memrisk.running.weak import (
    Structure,
    WeakAgent,
    Weakness,
    structure,
    wrong_choice,
)

#: The extra condition of every weakness: its wrong choice differs from the oracle's.
DIFFERS = "differs"
#: Margins are rounded to this many decimals (stable output bytes, no float noise).
DIGITS = 6


@dataclass(frozen=True)
class ConditionMargin:
    """One condition of a weakness at one decision: its value and its shortfall."""

    name: str
    """``gap>=10``, ``updates>=1``, ``foreign_newer``, ..., or ``differs``."""
    value: int | bool | None
    shortfall: float
    """0 (met) to 1 (far); see the module docstring."""


@dataclass(frozen=True)
class WeaknessMargin:
    """How close one weakness came to acting at one decision."""

    weakness: str
    margin: float
    """Mean shortfall of ``conditions`` on [0, 1]; <= 0: the weakness acts."""
    conditions: tuple[ConditionMargin, ...]

    @property
    def fired(self) -> bool:
        return self.margin <= 0.0


@dataclass(frozen=True)
class DecisionMargins:
    """Every weakness's margin at one decision point of one episode."""

    decision_id: str
    weaknesses: tuple[WeaknessMargin, ...]
    """In the agent's profile order."""

    @property
    def margin(self) -> float:
        """The decision's margin: the smallest weakness margin (1.0 with no weakness)."""
        return min((w.margin for w in self.weaknesses), default=1.0)

    @property
    def closest(self) -> str | None:
        """The first weakness (profile order) whose margin is the decision's margin."""
        return next((w.weakness for w in self.weaknesses if w.margin == self.margin), None)

    def of(self, weakness: str) -> WeaknessMargin:
        return next(w for w in self.weaknesses if w.weakness == weakness)


def weakness_margin(weakness: Weakness, episode: Episode, decision_id: str) -> WeaknessMargin:
    """The margin of one weakness at ``decision_id`` (a pure function of the episode)."""
    return _graded(weakness, episode, decision_id, structure(episode, decision_id),
                   snapshot(episode, events_before(episode, decision_id)))


def decision_margins(agent: WeakAgent, episode: Episode, decision_id: str) -> DecisionMargins:
    """Every weakness of ``agent`` graded at ``decision_id``."""
    s = structure(episode, decision_id)
    state = snapshot(episode, events_before(episode, decision_id))
    return DecisionMargins(
        decision_id, tuple(_graded(w, episode, decision_id, s, state) for w in agent.weaknesses)
    )


def _graded(
    weakness: Weakness, episode: Episode, decision_id: str, s: Structure, state: StateSnapshot
) -> WeaknessMargin:
    differs = wrong_choice(weakness, episode, decision_id, state) is not None
    conditions = tuple(
        ConditionMargin(c.name, c.value(s), c.shortfall(s)) for c in weakness.conditions
    ) + (ConditionMargin(DIFFERS, differs, 0.0 if differs else 1.0),)
    margin = sum(c.shortfall for c in conditions) / len(conditions)
    return WeaknessMargin(weakness.name, round(margin, DIGITS), conditions)


def checkpoint_margins(agent: WeakAgent, episode: Episode) -> DecisionMargins:
    """The margins at a fuzzing checkpoint's decision point (its last one)."""
    return decision_margins(agent, episode, episode.decision_points[-1].id)
