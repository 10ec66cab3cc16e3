"""A ``llama_cpp.Llama`` as the fuzzer's :class:`~lm_eval_memrisk.fuzz.token_model.TokenModel`:
the model margins of :mod:`lm_eval_memrisk.fuzz.model_margins` scored on llama.cpp."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any


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
        they share with the tokens evaluated so far (the system prompt every decision
        prompt opens with), as ``Llama.generate`` does; the last token is always
        evaluated, so its logits are this sequence's."""
        tokens = list(tokens)
        evaluated = self.llm.input_ids[: self.llm.n_tokens]
        keep = 0
        for a, b in zip(evaluated, tokens[:-1]):
            if int(a) != b:
                break
            keep += 1
        self.llm.n_tokens = keep  # eval() drops the KV cells after n_tokens first
        self.llm.eval(tokens[keep:])

    def extend(self, tokens: Sequence[int]) -> None:
        self.llm.eval(list(tokens))

    def rewind(self, n: int) -> None:
        self.llm.n_tokens = n  # eval() drops the KV cells after n first

    def logprobs(self) -> Sequence[float]:
        import llama_cpp
        import numpy as np

        ptr = llama_cpp.llama_get_logits_ith(self.llm.ctx, -1)
        logits = np.ctypeslib.as_array(ptr, shape=(int(self.llm.n_vocab()),)).astype(np.float64)
        top = logits.max()
        out: Sequence[float] = logits - top - math.log(float(np.exp(logits - top).sum()))
        return out

