"""A real model's value margin (harness.value_margin) on the embedded SmolLM2-135M:
the candidates' order agrees with greedy decoding.  Marked ``model``; skips without
llama-cpp-python or the model file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

llama_cpp = pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.model

MESSAGES = [
    {"role": "system", "content": "You call tools by replying with JSON."},
    {"role": "user", "content": "My shipping address used to be 12 Oak Street, York. I moved to "
                                "9 Elm Road, Leeds. Ship my order to my current address."},
]
PREFIX = '{"tool": "ship_order", "arguments": {"address": "'


@pytest.fixture(scope="module")
def llm(smollm2_file: Path) -> Any:
    return llama_cpp.Llama(model_path=str(smollm2_file), n_ctx=512, n_threads=1, seed=0, verbose=False)


def _greedy(llm: Any, stop: str = '"', limit: int = 24) -> str:
    """Greedy continuation of the prompt and prefix, up to ``stop``."""
    from lm_eval_memrisk.harness.value_margin import next_token_logprobs, render_prompt

    llm.reset()
    llm.eval(llm.tokenize((render_prompt(llm, MESSAGES) + PREFIX).encode(), add_bos=False, special=True))
    out = b""
    for _ in range(limit):
        tok = int(next_token_logprobs(llm).argmax())
        out += llm.detokenize([tok])
        if stop.encode() in out:
            break
        llm.eval([tok])
    text = out.decode(errors="replace")
    return text.split(stop)[0] if stop else text


def test_single_token_candidates_follow_the_greedy_token(llm: Any) -> None:
    """One-token values: the candidate with the highest score is the greedy next token,
    and the margin is the difference of their next-token log-probabilities."""
    from lm_eval_memrisk.harness.value_margin import value_margin

    greedy = _greedy(llm, stop="", limit=1)  # the greedy next token's text
    others = [v for v in ("1", "2", "9", "A") if v != greedy][:2]
    assert all(len(llm.tokenize(v.encode(), add_bos=False, special=False)) == 1 for v in [greedy, *others])
    result = value_margin(llm, MESSAGES, PREFIX, greedy, others, suffix="")
    assert result.margin > 0 and result.tokens_scored == 3
    best = max(result.scores, key=lambda s: s[1])[0]
    assert best == greedy
    # the wrong candidates' order does not depend on the order they are given in
    again = value_margin(llm, MESSAGES, PREFIX, greedy, list(reversed(others)), suffix="")
    assert again.best_wrong == result.best_wrong and again.margin == pytest.approx(result.margin)


def test_the_margin_sign_follows_the_value_greedy_decoding_writes(llm: Any) -> None:
    """Greedy decoding starts writing one of the two addresses; that one scores higher
    (SmolLM2-135M writes the old address here, so the margin of the current one is < 0)."""
    from lm_eval_memrisk.harness.value_margin import value_margin

    current, stale = "9 Elm Road, Leeds", "12 Oak Street, York"
    greedy = _greedy(llm)
    assert greedy.startswith((current, stale)), greedy
    result = value_margin(llm, MESSAGES, PREFIX, current, [stale])
    assert (result.margin > 0) == greedy.startswith(current), (greedy, result.scores)
    assert result.best_wrong == stale and result.prompt_tokens > 0 and result.tokens_scored > 2


def test_a_fresh_start_reuses_a_shared_prefix_and_reads_the_same_logits(llm: Any) -> None:
    """``LlamaTokens.start`` keeps the KV cache of the prefix two prompts share (as
    ``Llama.generate`` does): the next-token distribution equals the one read after
    evaluating the second prompt from nothing, up to float rounding."""
    from lm_eval_memrisk.harness.llama_tokens import LlamaTokens

    model = LlamaTokens(llm)
    shared = model.prompt_tokens("You are a helpful assistant. The user's address is 9 Elm Road.")
    first, second = model.prompt_tokens(" Ship to"), model.prompt_tokens(" Where do I live?")
    llm.reset()
    model.start(shared + second)
    fresh = list(model.logprobs())
    model.start(shared + first)
    evaluated: list[int] = []
    real_eval = llm.eval
    llm.eval = lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1]
    try:
        model.start(shared + second)
    finally:
        del llm.eval
    reused = list(model.logprobs())
    assert evaluated == [len(second)] and llm.n_tokens == len(shared + second)
    assert max(abs(a - b) for a, b in zip(fresh, reused, strict=True)) < 1e-3
    assert reused.index(max(reused)) == fresh.index(max(fresh))
