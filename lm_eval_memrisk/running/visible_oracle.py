"""The ``visible-oracle`` reference agent: the oracle, limited to what it is shown.

It validates a memory policy.  At each decision point it replays the ground-truth
reference action when every memory value that action needs occurs in the messages
it was shown (the rendered notes and conversation, as the model sees them);
otherwise it asks the user, as the memory rules tell an agent that lacks
information to do.  It never reads a hidden note: the ground-truth memory only tells
it *which* values the reference action takes from memory
(:func:`attribution.needed_values`), visibility is judged on the rendered messages.

Under ``full`` it passes every episode the oracle passes; under a filtering policy
its failures are exactly the decision points that policy made impossible, so its
pass rate is the policy's ceiling and every one of its failures is labelled
``policy_hidden`` (tested).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.state import state_at
from lm_eval_memrisk.running.agents import AMNESIAC_REPLY, action_to_reply
from lm_eval_memrisk.scoring.attribution import hidden_values, needed_values, shown_text

NAME = "visible-oracle"


class VisibleOracle:
    """See the module docstring."""

    wants_episode = True
    name = NAME

    def __call__(
        self, messages: Sequence[Mapping[str, str]], *, episode: Episode | None = None,
        decision_id: str | None = None,
    ) -> str:
        if episode is None or decision_id is None:
            raise MemriskError(f"reference agent {NAME!r} needs the episode and decision id")
        dp = episode.event(decision_id)
        needed = needed_values(dp, state_at(episode, decision_id).memory)
        if hidden_values(needed, shown_text(messages)):
            return AMNESIAC_REPLY
        return action_to_reply(dict(dp.reference or {"answer": ""}))
