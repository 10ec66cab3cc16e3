"""Episodes as flat doc rows (lm-eval docs, Hub dataset rows, logged ``doc`` objects).

A row holds a few flat columns plus the canonical episode JSON, so that any loader
(package data, a JSONL file, a Hugging Face Hub dataset) yields the same docs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lm_eval_memrisk.episodes.codec import dumps_episode, fingerprint_of_lines
from lm_eval_memrisk.episodes.records import Episode

COLUMNS = ("episode_id", "risk", "tier", "track", "family", "version", "dataset_hash", "episode_json")


def to_rows(episodes: Sequence[Episode], dataset_hash: str | None = None) -> list[dict[str, str]]:
    """One doc row per episode (see :data:`COLUMNS`); the hash defaults to their fingerprint."""
    lines = [dumps_episode(e) for e in episodes]  # serialised once, for the hash and the rows
    h = dataset_hash or fingerprint_of_lines(lines)
    return [
        {
            "episode_id": e.id, "risk": e.risk, "tier": e.tier, "track": e.track,
            "family": e.family, "version": e.version, "dataset_hash": h,
            "episode_json": line,
        }
        for e, line in zip(episodes, lines)
    ]


@functools.lru_cache(maxsize=4096)
def _episode_from_json(text: str) -> Episode:
    from lm_eval_memrisk.episodes.loader import episode_from_dict

    return episode_from_dict(json.loads(text), path="<doc>")


def episode_of(doc: Mapping[str, Any]) -> Episode:
    """The Episode a doc row carries (parsed once, cached)."""
    return _episode_from_json(doc["episode_json"])
