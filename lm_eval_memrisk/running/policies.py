"""Memory policies: which memory notes the agent sees at a decision point.

* ``full`` — every note (the default; the paper's setting);
* ``recency:K`` — the K most recently written notes;
* ``bm25:K`` — the K notes that best match the last user message (BM25 via
  the ``rank_bm25`` library);
* ``embedding:K`` — the K notes closest to the last user message under a real
  local sentence-embedding model (see :mod:`lm_eval_memrisk.running.embedding`);
* ``mem0:K``, ``reference:K``, ``reference-embedding:K`` — what a memory backend
  (see :mod:`lm_eval_memrisk.running.memory`) returns for the query, e.g. the mem0 library.

The policy name and parameters are written into every trace and result.

Every policy declares ``filters_by_status``: whether it drops notes by their
ground-truth status before ranking.  ``recency``, ``bm25`` and ``embedding`` rank
all notes (False); the ``reference*`` and ``mem0`` backends search only the items
they hold as active, i.e. they drop superseded and revoked notes themselves (True),
which does part of the R1/R4 work for the agent.  :func:`policy_description` gives
that declaration, the signature form of the name (``mem0:3+active-only``) and, for
mem0, the effective search configuration; ``memrisk run`` records it with the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.render import MemoryPolicy
from lm_eval_memrisk.episodes.trace import ItemState
from lm_eval_memrisk.running.memory.text import note_text, tokenize

__all__ = ["BM25", "Embedding", "Recency", "make_policy", "note_text", "tokenize"]


@dataclass(frozen=True)
class Recency:
    k: int
    filters_by_status: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return f"recency:{self.k}"

    def select(self, items: Sequence[ItemState], query: str) -> list[ItemState]:
        return sorted(items, key=lambda i: (i.written_at, i.id))[-self.k :]


@dataclass(frozen=True)
class BM25:
    k: int
    filters_by_status: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return f"bm25:{self.k}"

    def select(self, items: Sequence[ItemState], query: str) -> list[ItemState]:
        if len(items) <= self.k:
            return list(items)
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise MemriskError("the bm25 memory policy needs `pip install rank-bm25` (extra [memory])") from exc
        corpus = [tokenize(note_text(i)) or ["_"] for i in items]
        scores = BM25Okapi(corpus).get_scores(tokenize(query))
        order = sorted(range(len(items)), key=lambda n: (-scores[n], -items[n].written_at, items[n].id))
        return [items[n] for n in order[: self.k]]


@dataclass(frozen=True)
class Embedding:
    k: int
    filters_by_status: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return f"embedding:{self.k}"

    def select(self, items: Sequence[ItemState], query: str) -> list[ItemState]:
        if len(items) <= self.k:
            return list(items)
        from lm_eval_memrisk.running.embedding import embed

        vecs = embed([note_text(i) for i in items] + [query])
        sims = vecs[:-1] @ vecs[-1]
        order = sorted(range(len(items)), key=lambda n: (-round(float(sims[n]), 6), -items[n].written_at, items[n].id))
        return [items[n] for n in order[: self.k]]


def policy_description(policy: MemoryPolicy | None) -> dict[str, Any]:
    """``{"name", "filters_by_status", "signature", ...}`` of a policy (None = full).

    ``signature`` is the name, plus ``+active-only`` when the policy filters by status,
    so results of status-filtering and ranking-only policies are never compared unmarked.
    A policy's own ``describe()`` (e.g. mem0's effective configuration) is merged in.
    """
    if policy is None:
        return {"name": "full", "filters_by_status": False, "signature": "full"}
    filters = bool(getattr(policy, "filters_by_status", False))
    out: dict[str, Any] = {
        "name": policy.name, "filters_by_status": filters,
        "signature": policy.name + ("+active-only" if filters else ""),
    }
    describe = getattr(policy, "describe", None)
    if callable(describe):
        out.update(describe())
    return out


def make_policy(spec: str | None) -> MemoryPolicy | None:
    """Parse ``full``, ``recency:K``, ``bm25:K`` or ``embedding:K`` (None = full)."""
    if spec is None or spec == "full":
        return None
    name, _, k = spec.partition(":")
    if name in ("mem0", "reference", "reference-embedding"):
        from lm_eval_memrisk.running.memory import make_backend_policy

        return make_backend_policy(spec)
    classes = {"recency": Recency, "bm25": BM25, "embedding": Embedding}
    if name not in classes or not k.isdigit() or int(k) < 1:
        raise MemriskError(
            f"unknown memory policy {spec!r}; use full, recency:K, bm25:K, embedding:K, "
            f"mem0:K, reference:K or reference-embedding:K"
        )
    return classes[name](int(k))  # type: ignore[return-value]
