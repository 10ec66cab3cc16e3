"""A deterministic stand-in for a llama.cpp model, for margin tests without a model.

One token per character of a small vocabulary (id 0 is a control token with no text,
unknown characters share one id).  After any evaluated text the model prefers to go on
writing ``favour(text)``: the character that continues the longest suffix of the text
that is a prefix of the favoured string gets logit ``weight`` (the first character
when none does), every other token 0.  So the favoured string outscores every other
continuation, by an amount that only depends on the strings.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

from lm_eval_memrisk.fuzz.token_model import log_softmax

VOCAB = ("", "\ufffd", *sorted(set(string.printable) - {"\x0b", "\x0c"}))
UNKNOWN = 1
_IDS = {ch: n for n, ch in enumerate(VOCAB) if ch}


def _next_char(text: str, favoured: str) -> str:
    for k in range(min(len(favoured) - 1, len(text)), 0, -1):
        if text.endswith(favoured[:k]):
            return favoured[k]
    return favoured[0]


class FakeTokens:
    """A :class:`~lm_eval_memrisk.fuzz.token_model.TokenModel` with known log-probs."""

    def __init__(self, favour: Callable[[str], str] | str, weight: float = 6.0):
        self.favour = favour if callable(favour) else (lambda _text, f=favour: f)
        self.weight = weight
        self.ids: list[int] = []
        self.starts: list[str] = []
        """The text of every sequence :meth:`start` evaluated, in order."""
        self.evaluated = 0
        """Tokens evaluated in all (a margin's cost, counted by the model itself)."""

    def _tokens(self, text: str) -> list[int]:
        return [_IDS.get(ch, UNKNOWN) for ch in text]

    def prompt_tokens(self, text: str) -> list[int]:
        return self._tokens(text)

    def piece_tokens(self, text: str) -> list[int]:
        return self._tokens(text)

    def token_texts(self) -> Sequence[str]:
        return VOCAB

    def text(self) -> str:
        return "".join(VOCAB[t] for t in self.ids)

    def start(self, tokens: Sequence[int]) -> None:
        self.ids = list(tokens)
        self.evaluated += len(tokens)
        self.starts.append(self.text())

    def extend(self, tokens: Sequence[int]) -> None:
        self.ids += list(tokens)
        self.evaluated += len(tokens)

    def rewind(self, n: int) -> None:
        del self.ids[n:]

    def logprobs(self) -> Sequence[float]:
        text = self.text()
        favoured = self.favour(text)
        logits = [0.0] * len(VOCAB)
        if favoured:
            logits[_IDS.get(_next_char(text, favoured), UNKNOWN)] = self.weight
        return log_softmax(logits)

    def reset(self) -> None:
        self.ids = []

