"""The memory-backend protocol, replay helpers and the policy that puts a backend behind the agent.

A *backend* is a long-term memory store the agent's harness writes to as the
episode unfolds (write, update = supersede, revoke) and searches at a decision
point.  :class:`BackendPolicy` turns any backend into a :class:`render.MemoryPolicy`:
at each decision point it replays the memory events into a fresh backend and
shows the agent exactly what ``backend.search(query, k)`` returns.  The
ground-truth statuses (see :mod:`lm_eval_memrisk.episodes.state`) stay the scorer's; a
backend only decides what the agent sees.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode, Event
from lm_eval_memrisk.episodes.state import events_before
from lm_eval_memrisk.episodes.trace import ItemState


@runtime_checkable
class MemoryBackend(Protocol):
    """A memory store keyed by the benchmark's item ids."""

    name: str
    filters_by_status: bool
    """True when ``search`` returns only active items (drops superseded/revoked ones)."""

    def write(self, item: ItemState) -> None:
        """Store a new item (status active); writing an existing id replaces it."""

    def update(self, old_id: str, item: ItemState) -> None:
        """Store ``item`` as the correction of ``old_id`` (which becomes superseded)."""

    def revoke(self, item_id: str, at: int | None = None) -> None:
        """Mark ``item_id`` revoked (deleted by the user) at logical time ``at``."""

    def search(self, query: str, k: int) -> list[str]:
        """Ids of at most ``k`` items to show for ``query``, best first."""

    def dump(self) -> list[ItemState]:
        """Every item ever stored, with its status, in first-write order."""


def item_state(event: Event) -> ItemState:
    """The active :class:`ItemState` written by a memory_write/update/summary event."""
    it = event.item
    if it is None:
        raise MemriskError(f"event {event.id} ({event.type}) carries no memory item")
    return ItemState(
        id=it.id, key=it.key, value=it.value, scope=it.scope, source=it.source,
        trust=it.trust, written_at=event.time, status="active",
    )


def replay(backend: MemoryBackend, episode: Episode, decision_id: str) -> MemoryBackend:
    """Drive ``backend`` with the memory events before ``decision_id`` (state.py semantics)."""
    seen: set[str] = set()
    for ev in events_before(episode, decision_id):
        if ev.item is not None:
            new = item_state(ev)
            if ev.type == "memory_update" and ev.supersedes in seen:
                backend.update(str(ev.supersedes), new)
            else:
                backend.write(new)
            seen.add(new.id)
        elif ev.type == "memory_revoke" and ev.target in seen:
            backend.revoke(str(ev.target), at=ev.time)
    return backend


def replay_items(backend: MemoryBackend, items: Sequence[ItemState]) -> MemoryBackend:
    """Drive ``backend`` so that its dump equals ``items`` (a snapshot's memory).

    The operations are rebuilt from the items themselves: a write at ``written_at``;
    a superseded item is paired with the item written at its ``status_changed_at``
    (same key first, then lowest id) and that write becomes ``update(old, new)``;
    a revoked item gets ``revoke`` at its ``status_changed_at``.
    """
    by_time: dict[int, list[ItemState]] = {}
    for it in items:
        by_time.setdefault(it.written_at, []).append(it)
    successor_of: dict[str, str] = {}  # new id -> old id
    for old in sorted((i for i in items if i.status == "superseded"), key=lambda i: (i.status_changed_at or 0, i.id)):
        free = [n for n in by_time.get(old.status_changed_at if old.status_changed_at is not None else -1, [])
                if n.id not in successor_of and n.id != old.id]
        if not free:
            raise MemriskError(
                f"cannot replay memory: item {old.id} is superseded at time {old.status_changed_at} "
                f"but no item was written then"
            )
        new = min(free, key=lambda n: (n.key != old.key, n.id))
        successor_of[new.id] = old.id
    # (time, phase, is a successor, id): an old item is written before its successor,
    # and a revocation comes after the writes of its time.
    ops: list[tuple[int, int, bool, str]] = []
    for it in items:
        ops.append((it.written_at, 0, it.id in successor_of, it.id))
        if it.status == "revoked":
            ops.append((it.status_changed_at if it.status_changed_at is not None else it.written_at,
                        1, False, it.id))
    states = {it.id: it for it in items}
    for time, phase, _, item_id in sorted(ops):
        if phase == 1:
            backend.revoke(item_id, at=time)
            continue
        fresh = dataclasses.replace(states[item_id], status="active", status_changed_at=None)
        if item_id in successor_of:
            backend.update(successor_of[item_id], fresh)
        else:
            backend.write(fresh)
    return backend


BackendFactory = Callable[[], MemoryBackend]


class BackendPolicy:
    """A :class:`render.MemoryPolicy` whose selection is a backend's search result.

    ``factory`` makes an empty backend; each ``select`` replays the items into a
    fresh one (:func:`replay_items`), searches the last user message for ``k``
    items and closes the backend (``close()`` if it has one).  Results are cached
    per (items, query), so the renderer and the trace recorder ask only once.
    """

    def __init__(
        self, factory: BackendFactory, k: int, name: str | None = None,
        filters_by_status: bool = True, describe: Callable[[], dict[str, Any]] | None = None,
    ):
        if k < 1:
            raise MemriskError(f"a memory backend policy needs k >= 1, got {k}")
        self.factory = factory
        self.k = k
        self._name = name
        self.filters_by_status = filters_by_status
        """Declared by the backend (see :class:`MemoryBackend`)."""
        self._describe = describe
        self._cache: dict[tuple[tuple[ItemState, ...], str], tuple[str, ...]] = {}

    def describe(self) -> dict[str, Any]:
        """The backend's effective configuration (e.g. mem0's active rankers); {} if none."""
        return dict(self._describe()) if self._describe is not None else {}

    @property
    def name(self) -> str:
        if self._name is None:
            probe = self.factory()
            self._name = str(getattr(probe, "name", type(probe).__name__))
            _close(probe)
        return f"{self._name}:{self.k}"

    def search_ids(self, items: Sequence[ItemState], query: str) -> tuple[str, ...]:
        key = (tuple(items), query)
        hit = self._cache.get(key)
        if hit is None:
            backend = self.factory()
            try:
                replay_items(backend, items)
                hit = tuple(backend.search(query, self.k))
            finally:
                _close(backend)
            known = {i.id for i in items}
            unknown = [i for i in hit if i not in known]
            if unknown:
                raise MemriskError(f"memory backend returned unknown item ids {unknown}")
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def select(self, items: Sequence[ItemState], query: str) -> list[ItemState]:
        chosen = set(self.search_ids(items, query))
        return [i for i in items if i.id in chosen]


def _close(backend: object) -> None:
    close = getattr(backend, "close", None)
    if callable(close):
        close()
