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
(``tokens_scored`` reports the cost).  This is issue #30 item 1's signal; the fuzzer
reads it through :mod:`lm_eval_memrisk.fuzz.model_margins`, which calls the same
:func:`~lm_eval_memrisk.fuzz.value_scores.score_values` on the prompt the generating
model sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.fuzz.value_scores import ValueMargin, score_values
from lm_eval_memrisk.harness.llama_tokens import LlamaTokens

__all__ = ["ValueMargin", "next_token_logprobs", "render_prompt", "score_values", "value_margin"]


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
    return LlamaTokens(llm).logprobs()


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
    holds the prompt); the prefix it shares with what ``llm`` evaluated before is reused
    from its KV cache, the rest is evaluated."""
    model = LlamaTokens(llm)
    prefix = model.prompt_tokens(render_prompt(llm, messages) + call_prefix)
    return score_values(model, prefix, reference, wrong, suffix)
