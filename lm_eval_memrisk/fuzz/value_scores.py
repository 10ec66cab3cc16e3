"""Score a reference value against wrong candidates as continuations of one prefix.

:func:`score_values` evaluates the prefix (the prompt and the call or answer prefix)
once on a :class:`~lm_eval_memrisk.fuzz.token_model.TokenModel`, keeps its KV cache, and
scores each candidate (followed by ``suffix``, which ends the value so that a prefix of a
value does not score as the value) by rewinding to the prefix; a candidate costs its own
tokens only (``tokens_scored``).

    margin = log P(reference + suffix | prefix) - max over wrong w of log P(w + suffix | prefix)

in nats; > 0: the model prefers the reference, <= 0: a wrong value scores at least as
high.  :mod:`lm_eval_memrisk.harness.value_margin` runs it on a ``llama_cpp.Llama``;
:mod:`.model_margins` on the prompts of a fuzz campaign.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_memrisk.fuzz.token_model import TokenModel, continuation_logprob


@dataclass(frozen=True)
class ValueMargin:
    """The log-probability margin of the reference value against the wrong candidates."""

    margin: float
    """log P(reference) - log P(best wrong candidate), in nats."""
    best_wrong: str
    scores: tuple[tuple[str, float], ...]
    """(candidate, summed log-probability), reference first, then the wrong ones in order."""
    prompt_tokens: int
    """Tokens of the prompt and call prefix (evaluated once)."""
    tokens_scored: int
    """Candidate tokens evaluated (the cost beyond the shared prefix)."""


def score_values(
    model: TokenModel,
    prefix: Sequence[int],
    reference: str,
    wrong: Sequence[str],
    suffix: str = '"',
) -> ValueMargin:
    """Score ``reference`` and every ``wrong`` value as continuations of the ``prefix``
    tokens (the prompt and call prefix, evaluated once) on ``model``."""
    if not wrong:
        raise ValueError("value_margin needs at least one wrong candidate")
    model.start(prefix)
    after_prefix = model.logprobs()  # kept: the model's logits move on
    scores: list[tuple[str, float]] = []
    scored = 0
    for value in (reference, *wrong):
        tokens = model.piece_tokens(value + suffix)
        scores.append((value, continuation_logprob(model, len(prefix), after_prefix, tokens)))
        scored += len(tokens)
    best_wrong, best = max(scores[1:], key=lambda s: s[1])
    return ValueMargin(scores[0][1] - best, best_wrong, tuple(scores), len(prefix), scored)
