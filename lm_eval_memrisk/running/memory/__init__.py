"""Memory backends: a protocol, an in-process reference store and a mem0 adapter.

``make_backend_policy("mem0:5")`` (or ``reference:5``, ``reference-embedding:5``)
gives a :class:`render.MemoryPolicy` that shows the agent what the backend's
search returns; see :mod:`lm_eval_memrisk.running.memory.protocol`.
"""

from __future__ import annotations

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.running.memory.protocol import (
    BackendPolicy,
    MemoryBackend,
    item_state,
    replay,
    replay_items,
)
from lm_eval_memrisk.running.memory.reference import ReferenceBackend

__all__ = [
    "BACKENDS",
    "BackendPolicy",
    "MemoryBackend",
    "ReferenceBackend",
    "item_state",
    "make_backend_policy",
    "replay",
    "replay_items",
]

BACKENDS: tuple[str, ...] = ("reference", "reference-embedding", "mem0")


def make_backend_policy(spec: str) -> BackendPolicy:
    """Parse ``NAME:K`` with NAME in :data:`BACKENDS` into a :class:`BackendPolicy`."""
    name, _, k = spec.partition(":")
    if name not in BACKENDS or not k.isdigit() or int(k) < 1:
        raise MemriskError(f"unknown memory backend policy {spec!r}; use NAME:K with NAME in {', '.join(BACKENDS)}")
    if name == "mem0":
        from lm_eval_memrisk.running.memory.mem0_backend import (
            Mem0Backend,
            effective_config,
            mem0_factory,
        )

        return BackendPolicy(
            mem0_factory(), int(k), name="mem0", filters_by_status=Mem0Backend.filters_by_status,
            describe=effective_config,
        )
    scorer = "lexical" if name == "reference" else name.split("-", 1)[1]
    return BackendPolicy(
        lambda: ReferenceBackend(scorer), int(k), name=name,
        filters_by_status=ReferenceBackend.filters_by_status,
    )
