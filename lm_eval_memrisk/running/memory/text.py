"""How a memory note reads as text, for the retrieval policies and the backends."""

from __future__ import annotations

import re

from lm_eval_memrisk.episodes.trace import ItemState

_TOKEN = re.compile(r"[a-z0-9]+")


def note_text(item: ItemState) -> str:
    return f"{item.key}: {item.value}"


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())
