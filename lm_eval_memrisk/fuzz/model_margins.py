"""A real model's margins at a checkpoint: the fuzzer's margin source for ``--model llama-cpp``.

For every decision point with a target (:mod:`.decision_targets`), on the prompt the
generating model sees (the same rendered messages, chat template and tokenizer):

* ``value`` decisions: :func:`.value_scores.score_values` scores the reference and every wrong candidate after the prompt and the call (or
  answer) prefix; each wrong role gives one part, ``<decision>:<role>`` =
  log P(reference) - log P(best wrong candidate of that role), in nats;
* ``withhold`` decisions (ask or decline): two parts (:mod:`.reply_start`),
  ``<decision>:tool-call`` = log P(reply starts as plain text) - log P(reply starts a
  tool call), and ``<decision>:claim`` = the best withholding opener ("Which", "I
  can't") against the best opener that reports an action taken ("Done", "Sent").

The episode's margin is the minimum over its decisions' parts (:attr:`Margins.value`).
Parts are mapped from nats onto the planted margins' range with
``tanh(nats / MODEL_MARGIN_SCALE)``: the sign is kept (> 0: the reference wins with
room; <= 0: a wrong choice scores at least as high), 1 nat is 0.24, 4 nats 0.76, and
the bound 1.0 is where :func:`lm_eval_memrisk.fuzz.margins.margin_change` starts a cause
the parent lacks.  The raw minimum in nats and the cost (prompt tokens evaluated,
candidate tokens scored) travel with the margins.  A checkpoint without any target has
no parts (margin 1.0) and costs nothing.

The margin is what the model *prefers* at the first point of difference, not what
greedy decoding writes; margin <= 0 is a strong hint of a failure, not a verdict (the
verdict stays the scorer's, on the generated reply).  Each decision's prompt is
evaluated as a fresh sequence that reuses the KV cache of whatever prefix it shares
with the tokens the model evaluated last (mostly the system prompt), which moves a
margin by float rounding only; the model is reset before each campaign
(:class:`ModelSource`), so a run's margins do not depend on the runs before it, and
the cost counts the whole prompt all the same.  Generation does not start from a
margin's state: ``LlamaCppLM.generate_until`` resets the model unless a prompt
continues its previous one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.render import MemoryPolicy, flatten
from lm_eval_memrisk.fuzz.decision_targets import (
    CLAIM,
    TOOL_CALL,
    WITHHOLD,
    DecisionTarget,
    decision_targets,
)
from lm_eval_memrisk.fuzz.margins import MarginCost, Margins
from lm_eval_memrisk.fuzz.reply_start import WITHHOLD_OPENERS, reply_start_margin
from lm_eval_memrisk.fuzz.token_model import TokenModel
from lm_eval_memrisk.fuzz.value_scores import score_values
from lm_eval_memrisk.running.runner import decision_prompts
from lm_eval_memrisk.running.weak_margin import DIGITS

#: Nats per unit of ``tanh`` argument when a model's margin is mapped onto (-1, 1).
MODEL_MARGIN_SCALE = 4.0
#: Messages -> the prompt text the generating model receives.
Render = Callable[[list[dict[str, str]]], str]


def scaled(nats: float) -> float:
    """A margin in nats on the planted scale: ``tanh(nats / MODEL_MARGIN_SCALE)``, rounded."""
    return round(math.tanh(nats / MODEL_MARGIN_SCALE), DIGITS)


@dataclass(frozen=True)
class DecisionMargin:
    """A model's margins at one decision point, in nats, and their cost."""

    decision_id: str
    kind: str
    parts: tuple[tuple[str, float], ...]
    """(``<decision>:<role>``, margin in nats) per wrong role (or ``tool-call`` and
    ``claim``)."""
    cost: MarginCost


def measure(model: TokenModel, prompt: str, target: DecisionTarget) -> DecisionMargin:
    """The margins of one decision whose prompt text is ``prompt``."""
    if target.kind == WITHHOLD:
        own = (target.reference,) if target.reference else ()
        start = reply_start_margin(model, model.prompt_tokens(prompt), WITHHOLD_OPENERS + own)
        withhold = ((f"{target.decision_id}:{TOOL_CALL}", round(start.margin, DIGITS)),
                    (f"{target.decision_id}:{CLAIM}", round(start.opener.margin, DIGITS)))
        return DecisionMargin(target.decision_id, target.kind, withhold,
                              MarginCost(start.prompt_tokens, start.tokens_scored))
    prefix = model.prompt_tokens(prompt + target.prefix)
    result = score_values(model, prefix, target.reference, [c.text for c in target.wrong],
                          target.suffix)
    reference = result.scores[0][1]
    by_role: dict[str, float] = {}
    for cand, (_, score) in zip(target.wrong, result.scores[1:], strict=True):
        by_role[cand.role] = min(reference - score, by_role.get(cand.role, math.inf))
    parts = tuple((f"{target.decision_id}:{r}", round(m, DIGITS)) for r, m in by_role.items())
    return DecisionMargin(target.decision_id, target.kind, parts,
                          MarginCost(result.prompt_tokens, result.tokens_scored))


def episode_margins(
    model: TokenModel, render: Render, episode: Episode, policy: MemoryPolicy | None = None
) -> Margins:
    """The model's margins at every decision of ``episode`` (see the module docstring)."""
    targets = decision_targets(episode)
    prompts = {p.decision_id: p for p in decision_prompts(episode, policy)} if targets else {}
    decisions = [measure(model, render(prompts[t.decision_id].messages_copy()), t) for t in targets]
    raw = [(cause, m) for d in decisions for cause, m in d.parts]
    cost = sum((d.cost for d in decisions), MarginCost())
    return Margins(
        tuple((cause, scaled(m)) for cause, m in raw),
        nats=min((m for _, m in raw), default=None),
        cost=cost,
    )


class ModelSource:
    """The margin source of a model (for :func:`lm_eval_memrisk.fuzz.campaign.run_campaign`).
    :meth:`reset` forgets the model's evaluated tokens: the pipeline calls it before each
    campaign, so a (strategy, seed) run's margins never depend on the runs before it."""

    def __init__(self, model: TokenModel, render: Render, policy: MemoryPolicy | None = None):
        self.model, self.render, self.policy = model, render, policy

    def __call__(self, episode: Episode) -> Margins:
        return episode_margins(self.model, self.render, episode, self.policy)

    def reset(self) -> None:
        self.model.reset()


def lm_source(lm: Any, policy: MemoryPolicy | None = None, chat_template: bool = True) -> ModelSource:
    """The margin source of a loaded lm-eval model that hands out a :class:`TokenModel`
    (``lm.token_model()``: the in-process ``llama-cpp`` model), scored on the prompts its
    ``generate_until`` gets: the chat template's rendering, or the flattened transcript
    with ``chat_template=False`` (as :func:`lm_eval_memrisk.harness.lm_adapter.lm_generate`
    renders them, tools in the system message)."""
    make = getattr(lm, "token_model", None)
    if not callable(make):
        raise MemriskError(
            "the margin strategies read a model's log-probabilities: use --model llama-cpp "
            "(or a planted-weakness agent, --agent weak:NAME)"
        )

    def render(messages: list[dict[str, str]]) -> str:
        context = lm.apply_chat_template(messages) if chat_template else flatten(messages)
        if not isinstance(context, str):
            raise MemriskError(f"{type(lm).__name__} renders no text prompt; margins need one")
        return context

    return ModelSource(make(), render, policy)
