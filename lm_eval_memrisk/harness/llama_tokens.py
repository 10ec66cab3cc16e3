"""A ``llama_cpp.Llama`` as the fuzzer's :class:`~lm_eval_memrisk.fuzz.token_model.TokenModel`:
the model margins of :mod:`lm_eval_memrisk.fuzz.model_margins` scored on llama.cpp."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError


class LlamaTokens:
    """The fuzzer's ``TokenModel`` over a ``llama_cpp.Llama`` (no ``logits_all`` needed: the
    last position's logits are read from the context).  ``prompt_tokenize`` tokenizes a
    prompt as the generating model does (e.g. ``LlamaCppLM.tokenize``); by default
    special tokens are parsed and no BOS is added."""

    def __init__(self, llm: Any, prompt_tokenize: Callable[[str], list[int]] | None = None):
        self.llm = llm
        self._prompt_tokenize = prompt_tokenize
        self._texts: list[str] | None = None

    def prompt_tokens(self, text: str) -> list[int]:
        if self._prompt_tokenize is not None:
            return list(self._prompt_tokenize(text))
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def piece_tokens(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def token_texts(self) -> Sequence[str]:
        if self._texts is None:
            self._texts = [
                bytes(self.llm.detokenize([t])).decode("utf-8", errors="replace")
                for t in range(int(self.llm.n_vocab()))
            ]
        return self._texts

    def start(self, tokens: Sequence[int]) -> None:
        """Evaluate ``tokens`` from the start, keeping the KV cache of the longest prefix
        they share with the tokens evaluated so far (for a fuzz campaign mostly the
        system prompt every decision prompt opens with), as ``Llama.generate`` does; the
        last token is always evaluated, so its logits are this sequence's.  A model whose
        state cannot be cut (recurrent) starts afresh."""
        tokens = list(tokens)
        if not tokens:
            raise MemriskError("a margin needs a non-empty prompt")
        evaluated = self.llm.input_ids[: self.llm.n_tokens]
        keep = 0
        for a, b in zip(evaluated, tokens[:-1]):
            if int(a) != b:
                break
            keep += 1
        if not self._cut(keep):  # a recurrent model's state cannot be cut: start afresh
            self.llm.reset()
            keep = 0
        self.llm.n_tokens = keep
        self.llm.eval(tokens[keep:])

    def reset(self) -> None:
        self.llm.reset()

    def _cut(self, n: int) -> bool:
        """Drop the KV cells from position ``n`` on (False: this model cannot)."""
        return bool(self.llm._ctx.kv_cache_seq_rm(-1, n, -1))

    def extend(self, tokens: Sequence[int]) -> None:
        self.llm.eval(list(tokens))

    def rewind(self, n: int) -> None:
        if not self._cut(n):
            raise MemriskError(
                "this model's state cannot be rewound (a recurrent or hybrid GGUF): "
                "its margins cannot be scored"
            )
        self.llm.n_tokens = n
        self.llm._requires_eval = True  # the context's logits belong to a later position

    def logprobs(self) -> Sequence[float]:
        import llama_cpp
        import numpy as np

        ptr = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        logits = np.ctypeslib.as_array(ptr, shape=(int(self.llm.n_vocab()),)).astype(np.float64)
        top = logits.max()
        out: Sequence[float] = logits - top - math.log(float(np.exp(logits - top).sum()))
        return out

