"""The in-process reference backend: the protocol's semantics, exactly, in a dict.

Statuses follow :mod:`lm_eval_memrisk.episodes.state`: ``write`` stores an active item,
``update(old, new)`` stores ``new`` and marks ``old`` superseded at
``new.written_at``, ``revoke`` marks an item revoked.  ``search`` returns only
active items, ranked by a scorer:

* ``lexical`` (default): number of distinct query tokens found in ``key: value``;
* ``embedding``: cosine similarity under all-MiniLM-L6-v2
  (:mod:`lm_eval_memrisk.running.embedding`) -- the embedding-based backend.

Ties go to the newer item, then the smaller id, so results are deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.trace import ItemState
from lm_eval_memrisk.running.memory.text import note_text, tokenize

Scorer = Callable[[Sequence[ItemState], str], list[float]]


def lexical_scores(items: Sequence[ItemState], query: str) -> list[float]:
    """Distinct query tokens that occur in each item's ``key: value``."""
    q = set(tokenize(query))
    return [float(len(q & set(tokenize(note_text(i))))) for i in items]


def embedding_scores(items: Sequence[ItemState], query: str) -> list[float]:
    """Cosine similarity of each item's ``key: value`` to the query (MiniLM)."""
    from lm_eval_memrisk.running.embedding import embed

    if not items:
        return []
    vecs = embed([note_text(i) for i in items] + [query])
    return [float(s) for s in vecs[:-1] @ vecs[-1]]


SCORERS: dict[str, Scorer] = {"lexical": lexical_scores, "embedding": embedding_scores}


class ReferenceBackend:
    """In-process memory store implementing :class:`MemoryBackend` exactly."""

    filters_by_status = True  # search ranks only active items

    def __init__(self, scorer: str = "lexical"):
        if scorer not in SCORERS:
            raise MemriskError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORERS)}")
        self.scorer = scorer
        self.name = "reference" if scorer == "lexical" else f"reference-{scorer}"
        self._items: dict[str, ItemState] = {}

    def write(self, item: ItemState) -> None:
        self._items[item.id] = dataclasses.replace(item, status="active", status_changed_at=None)

    def update(self, old_id: str, item: ItemState) -> None:
        old = self._get(old_id)
        self.write(item)
        self._items[old_id] = dataclasses.replace(old, status="superseded", status_changed_at=item.written_at)

    def revoke(self, item_id: str, at: int | None = None) -> None:
        old = self._get(item_id)
        self._items[item_id] = dataclasses.replace(old, status="revoked", status_changed_at=at)

    def search(self, query: str, k: int) -> list[str]:
        live = [i for i in self._items.values() if i.status == "active"]
        scores = SCORERS[self.scorer](live, query)
        order = sorted(range(len(live)), key=lambda n: (-round(scores[n], 6), -live[n].written_at, live[n].id))
        return [live[n].id for n in order[:k]]

    def dump(self) -> list[ItemState]:
        return list(self._items.values())

    def _get(self, item_id: str) -> ItemState:
        try:
            return self._items[item_id]
        except KeyError:
            raise MemriskError(f"memory backend {self.name}: no item {item_id!r}") from None
