"""A real model's margin at a decision: how close it came to choosing a wrong value.

Given a ``llama_cpp.Llama``, the decision's prompt messages and the reply's prefix up
to the argument value (the *call prefix*, e.g. ``{"tool": "ship_order", "arguments":
{"address": "``), :func:`value_margin` scores the reference value and each wrong
candidate value the episode holds (stale, revoked, other-scope, forbidden) as
continuations of that prefix:

    margin = log P(reference + suffix | prefix) - max over wrong w of log P(w + suffix | prefix)

in nats; > 0: the model prefers the reference, <= 0: a wrong value scores at least as
high (the same sign convention as the planted margins of
:mod:`lm_eval_memrisk.running.weak_margin`, on another scale).  ``suffix`` (default
``"``, the closing quote) ends the value, so a prefix of a value does not score as the
value.  The prompt and prefix are evaluated once and their KV cache kept (each
candidate rewinds to the prefix); a candidate then costs its own tokens only
(``tokens_scored`` reports the cost).  This is
issue #30 item 1's signal; the fuzzer does not call it yet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


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


def render_prompt(llm: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """The messages in the GGUF's own chat template, with the generation prompt."""
    from llama_cpp import llama_chat_format as lcf

    template = llm.metadata.get("tokenizer.chat_template")
    if template is None:
        raise ValueError("the GGUF has no tokenizer.chat_template")

    def text(tok: int) -> str:
        return "" if tok < 0 else str(llm._model.token_get_text(tok))

    formatter = lcf.Jinja2ChatFormatter(
        template=template, eos_token=text(llm.token_eos()), bos_token=text(llm.token_bos()),
        add_generation_prompt=True,
    )
    chat: list[Any] = [dict(m) for m in messages]
    return str(formatter(messages=chat).prompt)


def next_token_logprobs(llm: Any) -> Any:
    """Log-probabilities (a numpy vector over the vocabulary) of the token after the
    last evaluated one, read from the context (no ``logits_all`` needed)."""
    import llama_cpp
    import numpy as np

    ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    logits = np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)
    top = logits.max()
    return logits - top - math.log(float(np.exp(logits - top).sum()))


def value_margin(
    llm: Any,
    messages: Sequence[Mapping[str, str]],
    call_prefix: str,
    reference: str,
    wrong: Sequence[str],
    suffix: str = '"',
) -> ValueMargin:
    """Score ``reference`` and every ``wrong`` value after the prompt and ``call_prefix``
    (see the module docstring).  ``llm`` is a ``llama_cpp.Llama`` (any ``n_ctx`` that
    holds the prompt); its state is reset first."""
    if not wrong:
        raise ValueError("value_margin needs at least one wrong candidate")
    prefix = llm.tokenize((render_prompt(llm, messages) + call_prefix).encode(), add_bos=False,
                          special=True)
    llm.reset()
    llm.eval(prefix)
    after_prefix = next_token_logprobs(llm)  # kept: the context's logits move on
    scores: list[tuple[str, float]] = []
    scored = 0
    for value in (reference, *wrong):
        llm.n_tokens = len(prefix)  # back to the prefix; eval() drops the later KV cells
        tokens = llm.tokenize((value + suffix).encode(), add_bos=False, special=False)
        logprobs, total = after_prefix, 0.0
        for n, tok in enumerate(tokens):
            total += float(logprobs[tok])
            if n + 1 < len(tokens):
                llm.eval([tok])
                logprobs = next_token_logprobs(llm)
        scored += len(tokens)
        scores.append((value, total))
    best_wrong, best = max(scores[1:], key=lambda s: s[1])
    return ValueMargin(scores[0][1] - best, best_wrong, tuple(scores), len(prefix), scored)
