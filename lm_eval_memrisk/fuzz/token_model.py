"""A scoring view of a language model: evaluate tokens, read next-token log-probabilities.

:class:`TokenModel` is all that the fuzzer's model margins (:mod:`.value_scores`,
:mod:`.reply_start`, :mod:`.model_margins`) need from a model, so they run on a
``llama_cpp.Llama`` (:class:`lm_eval_memrisk.harness.llama_tokens.LlamaTokens`, which
the llama-cpp model hands out) and, in tests, on any object with the same methods.
Nothing here samples or generates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol


class TokenModel(Protocol):
    """Token-level access to a causal language model (one sequence, KV cache kept)."""

    def prompt_tokens(self, text: str) -> list[int]:
        """``text`` tokenized as a prompt (special tokens parsed, BOS as generation adds it)."""

    def piece_tokens(self, text: str) -> list[int]:
        """``text`` tokenized as a continuation (no BOS, special tokens not parsed)."""

    def token_texts(self) -> Sequence[str]:
        """The text of every token id (index = id; ``""`` for control tokens)."""

    def start(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` as a fresh sequence (what was evaluated before may only be
        reused as a KV cache of a shared prefix: the logits are those of ``tokens``)."""

    def extend(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` after the ones evaluated so far."""

    def rewind(self, n: int) -> None:
        """Keep only the first ``n`` evaluated tokens (the next :meth:`extend` follows them)."""

    def logprobs(self) -> Sequence[float]:
        """Log-probabilities over the vocabulary of the token after the evaluated ones."""

    def reset(self) -> None:
        """Forget everything evaluated (nothing is reused by the next :meth:`start`)."""


def log_softmax(logits: Sequence[float]) -> list[float]:
    """Log-probabilities from logits (max-shifted, so no overflow)."""
    top = max(logits)
    total = math.fsum(math.exp(x - top) for x in logits)
    return [x - top - math.log(total) for x in logits]


def continuation_logprob(
    model: TokenModel, base: int, after_base: Sequence[float], tokens: Sequence[int]
) -> float:
    """log P(``tokens`` | the first ``base`` evaluated tokens), summed over the tokens;
    ``after_base`` is the next-token distribution after them.  Rewinds to ``base`` first
    and evaluates all but the last token (the KV cache of the base is kept)."""
    model.rewind(base)
    logprobs, total = after_base, 0.0
    for n, tok in enumerate(tokens):
        total += float(logprobs[tok])
        if n + 1 < len(tokens):
            model.extend([tok])
            logprobs = model.logprobs()
    return total
