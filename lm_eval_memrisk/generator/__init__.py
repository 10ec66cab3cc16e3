"""Seeded, deterministic generator of MemRiskBench episodes.

``generate(seed, counts)`` builds the episodes, ``write_dataset(path, episodes)``
writes them as canonical JSONL; ``python -m lm_eval_memrisk.generator --out FILE``
does both.  With :data:`DEFAULT_SEED` and the default counts the output is the
shipped ``lm_eval_memrisk/data/episodes_v8.jsonl`` (``version="v1"``..``"v7"``: the older files), byte for byte.

Layout: ``pools``/``values``/``people`` (entities and values), ``families/`` (what a
scenario is about and how users phrase it), ``risks/`` (one builder per risk),
``fillers``/``distractors`` (tier-dependent distractors and padding), ``plan``
(symbolic sessions compiled to records), ``templating`` (sandboxed jinja2),
``verify`` (generation-time invariants) and ``build`` (datasets).
"""

from __future__ import annotations

from lm_eval_memrisk.generator.build import (
    GenerationError,
    build_episode,
    default_counts,
    generate,
    scaled_counts,
    write_dataset,
)
from lm_eval_memrisk.generator.seeding import DEFAULT_SEED

__all__ = [
    "DEFAULT_SEED",
    "GenerationError",
    "build_episode",
    "default_counts",
    "generate",
    "scaled_counts",
    "write_dataset",
]
