"""Margin feedback: how close the system under test came to failing, and how a
mutation moved that.

A *margin source* maps a checkpoint (an episode whose last decision point is the one
fuzzed) to its :class:`Margins`: one ``(cause, margin)`` part per way the decision can
go wrong, smaller = closer to failing, <= 0 = it fails that way.  For a planted-weakness
agent the causes are its weaknesses and the margins are
:mod:`lm_eval_memrisk.running.weak_margin`'s (on [0, 1]); see :func:`planted_source`.
A model's margin (log-probability of the reference value against the best wrong
candidate, issue #30 item 1) would plug in here with the wrong candidates as causes.

:func:`margin_change` compares a mutant with its parent: the largest drop of one
cause's margin (``shrink``) is what the ``margin`` strategies reward
(:mod:`lm_eval_memrisk.fuzz.guidance`); ``before``/``after`` (the decision's margin,
the smallest part) go to ``mutants.jsonl`` and the report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.running.weak import WeakAgent
from lm_eval_memrisk.running.weak_margin import DIGITS, checkpoint_margins


@dataclass(frozen=True)
class Margins:
    """A system's margins at one checkpoint: ``(cause, margin)`` per way to fail."""

    parts: tuple[tuple[str, float], ...]

    @property
    def value(self) -> float:
        """The decision's margin: the smallest part (1.0 when there is none)."""
        return min((m for _, m in self.parts), default=1.0)

    @property
    def fired(self) -> bool:
        """Some cause's margin is <= 0: the system fails the decision."""
        return self.value <= 0.0


MarginSource = Callable[[Episode], Margins]


def planted_source(agent: WeakAgent) -> MarginSource:
    """The margin source of a planted-weakness agent: one part per weakness."""

    def margins(episode: Episode) -> Margins:
        graded = checkpoint_margins(agent, episode)
        return Margins(tuple((w.weakness, w.margin) for w in graded.weaknesses))

    return margins


@dataclass(frozen=True)
class MarginChange:
    """A mutant's margin against its parent's (one executed mutant)."""

    before: float
    """The parent's decision margin."""
    after: float
    """The mutant's decision margin."""
    shrink: float
    """The largest drop of one cause's margin from parent to mutant (0: none dropped)."""
    cause: str | None
    """The cause with that drop (the first in the parts' order on a tie; None: no drop)."""
    fired: bool
    """The mutant's margin is <= 0: it fails (no reward for shrinking then)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "shrink": self.shrink,
            "cause": self.cause,
            "fired": self.fired,
        }


def margin_change(parent: Margins, child: Margins) -> MarginChange:
    """Compare a mutant's margins with its parent's, cause by cause (causes the parent
    lacks count from 1.0, the far end of the planted scale)."""
    before = dict(parent.parts)
    cause, shrink = None, 0.0
    for name, after in child.parts:
        drop = round(before.get(name, 1.0) - after, DIGITS)
        if drop > shrink:
            cause, shrink = name, drop
    return MarginChange(
        before=round(parent.value, DIGITS),
        after=round(child.value, DIGITS),
        shrink=shrink,
        cause=cause,
        fired=child.fired,
    )
