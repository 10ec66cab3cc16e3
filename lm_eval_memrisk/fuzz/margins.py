"""Margin feedback: how close the system under test came to failing, and how a
mutation moved that.

A *margin source* maps a checkpoint (an episode whose last decision point is the one
fuzzed) to its :class:`Margins`: one ``(cause, margin)`` part per way the decision can
go wrong, smaller = closer to failing, <= 0 = it fails that way.  For a planted-weakness
agent the causes are its weaknesses and the margins are
:mod:`lm_eval_memrisk.running.weak_margin`'s (on [0, 1]); see :func:`planted_source`.
A model's margins (:mod:`.model_margins`, issue #30 item 1) have one part per
(decision, wrong-candidate role): the log-probability margin of the reference against
that wrong choice, mapped from nats onto (-1, 1); they also carry the raw margin in
nats and what computing them cost (:class:`MarginCost`).

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
class MarginCost:
    """What computing a model's margins cost: prompt tokens evaluated (the prompt and
    any call prefix, once per decision) and candidate tokens scored beyond them."""

    prompt_tokens: int = 0
    tokens_scored: int = 0

    def __add__(self, other: MarginCost) -> MarginCost:
        return MarginCost(
            self.prompt_tokens + other.prompt_tokens, self.tokens_scored + other.tokens_scored
        )

    def to_json(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "tokens_scored": self.tokens_scored}


@dataclass(frozen=True)
class Margins:
    """A system's margins at one checkpoint: ``(cause, margin)`` per way to fail."""

    parts: tuple[tuple[str, float], ...]
    nats: float | None = None
    """A model's decision margin before scaling, in nats (None: a planted target, or
    nothing to compare)."""
    cost: MarginCost | None = None
    """What computing them cost on a model (None: free, a planted target)."""

    @property
    def value(self) -> float:
        """The decision's margin: the smallest part (1.0 when there is none)."""
        return min((m for _, m in self.parts), default=1.0)

    @property
    def fired(self) -> bool:
        """Some cause's margin is <= 0: the system fails the decision."""
        return self.value <= 0.0


MarginSource = Callable[[Episode], Margins]


class MeteredSource:
    """A margin source that adds up what its margins cost (every call: parents, probes
    and mutants); ``total`` stays None for a source whose margins are free."""

    def __init__(self, source: MarginSource):
        self.source = source
        self.total: MarginCost | None = None

    def __call__(self, episode: Episode) -> Margins:
        margins = self.source(episode)
        if margins.cost is not None:
            self.total = (self.total or MarginCost()) + margins.cost
        return margins


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
    nats_before: float | None = None
    """The parent's margin in nats (a model's margins only)."""
    nats_after: float | None = None
    """The mutant's margin in nats (a model's margins only)."""
    cost: MarginCost | None = None
    """What computing the mutant's margins cost (a model's margins only)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "before": self.before,
            "after": self.after,
            "shrink": self.shrink,
            "cause": self.cause,
            "fired": self.fired,
        }
        if self.nats_before is not None or self.nats_after is not None:
            out.update(nats_before=self.nats_before, nats_after=self.nats_after)
        return out


def cause_drops(parent: Margins | None, child: Margins) -> list[tuple[str, float]]:
    """How far each of the child's causes dropped from the parent's, in the child's order.

    A cause the parent lacks counts from the parent's decision margin (its smallest
    part; 1.0 when it has none, or with no parent): a mutation that turns a decision into
    another kind (a value to use becomes a question to ask, so ``dp:superseded`` gives
    way to ``dp:tool-call``) is rewarded only if the new cause comes closer to failing
    than anything the parent had, not for starting below the far end of the scale."""
    before = dict(parent.parts) if parent is not None else {}
    baseline = parent.value if parent is not None else 1.0
    return [(name, before.get(name, baseline) - after) for name, after in child.parts]


def margin_change(parent: Margins, child: Margins) -> MarginChange:
    """Compare a mutant's margins with its parent's, cause by cause (:func:`cause_drops`)."""
    cause, shrink = None, 0.0
    for name, exact in cause_drops(parent, child):
        drop = round(exact, DIGITS)
        if drop > shrink:
            cause, shrink = name, drop
    return MarginChange(
        before=round(parent.value, DIGITS),
        after=round(child.value, DIGITS),
        shrink=shrink,
        cause=cause,
        fired=child.fired,
        nats_before=parent.nats,
        nats_after=child.nats,
        cost=child.cost,
    )
