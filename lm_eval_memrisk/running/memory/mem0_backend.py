"""Adapter for mem0 (``pip install mem0ai``), fully local and offline.

mem0 runs here with:

* ``infer=False``: items are stored verbatim (no LLM extraction; the OpenAI
  LLM/embedder classes mem0 builds by default are constructed with a placeholder
  key and never called);
* the embedder replaced by :class:`MiniLMEmbedder` (all-MiniLM-L6-v2 in numpy,
  :mod:`lm_eval_memrisk.running.embedding`) through mem0's own ``EmbeddingBase``;
* an in-memory Qdrant collection (``qdrant-client`` local mode) and an in-memory
  SQLite history database;
* telemetry off (``MEM0_TELEMETRY=False`` before mem0 is imported) and ``MEM0_DIR``
  in a temporary folder unless the user set one.

Lifecycle mapping: ``write`` = ``Memory.add``; ``update(old, new)`` = ``add`` of the
new item plus ``Memory.update`` of the old one's metadata to ``status=superseded``;
``revoke`` = ``Memory.update`` to ``status=revoked``.  ``search`` is
``Memory.search`` restricted by mem0's metadata filter to ``status=active``, so
the agent sees what mem0 ranks among the live items (``filters_by_status``: the
backend, not the agent, drops superseded and revoked notes; which of mem0's rankers
are active here is :func:`effective_config`, recorded with every run); ``dump`` is ``Memory.get_all``
read back into :class:`ItemState`.  Each backend uses its own ``user_id``
namespace, so many backends can share one ``Memory`` (and ``close`` empties it).
"""

from __future__ import annotations

import itertools
import os
import tempfile
import warnings
from typing import Any

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.trace import ItemState
from lm_eval_memrisk.running.memory.text import note_text

INSTALL_HINT = "pip install mem0ai==2.2.1 (extra [memory])"
_PLACEHOLDER_KEY = "unused-offline"
_counter = itertools.count(1)


def _import_mem0() -> Any:
    """Import mem0 with telemetry off; a clear error when it is missing or already on."""
    import sys

    if "mem0" not in sys.modules:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "memrisk-mem0"))
    try:
        import mem0
        from mem0.memory import telemetry
    except ImportError as exc:
        raise MemriskError(f"the mem0 memory backend needs mem0: {INSTALL_HINT}") from exc
    if telemetry.MEM0_TELEMETRY:
        raise MemriskError("mem0 was imported with telemetry on; set MEM0_TELEMETRY=False before importing it")
    return mem0


def _embedder_class() -> type:
    from mem0.embeddings.base import EmbeddingBase

    class MiniLMEmbedder(EmbeddingBase):  # type: ignore[misc]
        """mem0 embedder backed by :func:`lm_eval_memrisk.running.embedding.embed`."""

        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            from lm_eval_memrisk.running.embedding import embed

            return [float(x) for x in embed([str(text)])[0]]

    return MiniLMEmbedder


def new_memory() -> Any:
    """A fresh, offline ``mem0.Memory`` (in-memory Qdrant and history, MiniLM embeddings)."""
    mem0 = _import_mem0()
    from qdrant_client import QdrantClient

    from lm_eval_memrisk.running.embedding import DIM

    config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {"collection_name": "memrisk", "embedding_model_dims": DIM,
                       "client": QdrantClient(location=":memory:")},
        },
        "llm": {"provider": "openai", "config": {"api_key": _PLACEHOLDER_KEY}},
        "embedder": {"provider": "openai", "config": {"api_key": _PLACEHOLDER_KEY, "embedding_dims": DIM}},
        "history_db_path": ":memory:",
    }
    with warnings.catch_warnings():
        # local Qdrant ignores payload indexes and says so; harmless here
        warnings.filterwarnings("ignore", message="Payload indexes have no effect")
        memory = mem0.Memory.from_config(config)
    memory.embedding_model = _embedder_class()()
    return memory


def _spacy_model_loaded() -> bool:
    """Whether mem0's spaCy model (lemmatizer, entity extraction) is available here."""
    import importlib.util

    if importlib.util.find_spec("spacy") is None:
        return False
    from mem0.utils.spacy_models import get_nlp_full

    return get_nlp_full() is not None


def effective_config() -> dict[str, Any]:
    """Which of mem0's search rankers are active in this environment (recorded with a run).

    mem0 2.2 combines semantic search with BM25 keyword scores (Qdrant sparse vectors,
    needs ``fastembed`` and its model), entity boosts (needs spaCy and
    ``en_core_web_sm``) and an optional reranker; each is silently skipped when its
    dependency is missing, so the ranking depends on the environment.
    """
    mem0 = _import_mem0()
    memory = new_memory()
    try:
        keyword = memory.vector_store.keyword_search(query="probe", top_k=1, filters=None) is not None
    except Exception:  # noqa: BLE001 - any failure means mem0 skips keyword scores too
        keyword = False
    spacy = _spacy_model_loaded()
    return {
        "backend": "mem0", "mem0_version": str(getattr(mem0, "__version__", "unknown")),
        "infer": False, "vector_store": "qdrant (in-memory)", "embedder": "all-MiniLM-L6-v2 (numpy)",
        "search_filter": "status=active",
        "rankers": {"semantic": True, "keyword_bm25": keyword, "entity_boost": spacy,
                    "lemmatizer": spacy, "reranker": getattr(memory, "reranker", None) is not None},
    }


class Mem0Backend:
    """:class:`MemoryBackend` on top of a local ``mem0.Memory``."""

    name = "mem0"
    filters_by_status = True  # search filters on metadata status=active

    def __init__(self, memory: Any | None = None, namespace: str | None = None):
        self.memory = memory if memory is not None else new_memory()
        self.namespace = namespace or f"memrisk-{next(_counter)}"
        self._ids: dict[str, str] = {}  # benchmark item id -> mem0 id

    # -- protocol ------------------------------------------------------------------
    def write(self, item: ItemState) -> None:
        meta = {"item_id": item.id, "key": item.key, "value": item.value, "scope": item.scope,
                "source": item.source, "trust": item.trust, "written_at": item.written_at,
                "status": "active", "status_changed_at": None}
        if item.id in self._ids:  # rewriting an id replaces the item, as in state.py
            self.memory.update(self._ids[item.id], text=note_text(item), metadata=meta)
            return
        result = self.memory.add(note_text(item), user_id=self.namespace, infer=False, metadata=meta)
        added = [r for r in result.get("results", []) if r.get("event") == "ADD"]
        if len(added) != 1:
            raise MemriskError(f"mem0 did not store item {item.id}: {result!r}")
        self._ids[item.id] = str(added[0]["id"])

    def update(self, old_id: str, item: ItemState) -> None:
        old = self._mem0_id(old_id)
        self.write(item)
        self.memory.update(old, metadata={"status": "superseded", "status_changed_at": item.written_at})

    def revoke(self, item_id: str, at: int | None = None) -> None:
        self.memory.update(self._mem0_id(item_id), metadata={"status": "revoked", "status_changed_at": at})

    def search(self, query: str, k: int) -> list[str]:
        """mem0's ranking of the active items (cosine >= 0); an empty query finds nothing."""
        if not query.strip() or k < 1:
            return []
        hits = self.memory.search(
            query, top_k=k, threshold=0.0,
            filters={"user_id": self.namespace, "status": "active"},
        )["results"]
        ranked = sorted(
            hits, key=lambda h: (-round(float(h.get("score") or 0.0), 6),
                                 -int(h["metadata"]["written_at"]), str(h["metadata"]["item_id"])),
        )
        return [str(h["metadata"]["item_id"]) for h in ranked[:k]]

    def dump(self) -> list[ItemState]:
        rows = self.memory.get_all(filters={"user_id": self.namespace}, top_k=max(len(self._ids), 1))["results"]
        by_item = {str(r["metadata"]["item_id"]): _item_from_row(r) for r in rows}
        return [by_item[i] for i in self._ids if i in by_item]

    def close(self) -> None:
        if self._ids:
            self.memory.delete_all(user_id=self.namespace)
        self._ids.clear()

    def _mem0_id(self, item_id: str) -> str:
        try:
            return self._ids[item_id]
        except KeyError:
            raise MemriskError(f"memory backend mem0: no item {item_id!r}") from None


def _item_from_row(row: dict[str, Any]) -> ItemState:
    m = row["metadata"]
    changed = m.get("status_changed_at")
    return ItemState(
        id=str(m["item_id"]), key=str(m["key"]), value=str(m["value"]), scope=str(m["scope"]),
        source=str(m["source"]), trust=float(m["trust"]), written_at=int(m["written_at"]),
        status=str(m["status"]), status_changed_at=None if changed is None else int(changed),
    )


def mem0_factory() -> Any:
    """A backend factory for :class:`BackendPolicy`: one shared ``Memory``, a namespace per replay."""
    shared: list[Any] = []

    def make() -> Mem0Backend:
        if not shared:
            shared.append(new_memory())
        return Mem0Backend(shared[0])

    return make
