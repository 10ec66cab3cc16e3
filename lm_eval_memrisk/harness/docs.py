"""Episodes as lm-eval docs: one flat row per episode, loaded offline by default.

Rows hold a few flat columns plus the canonical episode JSON, so that any loader
(package data, a JSONL file, a Hugging Face Hub dataset) yields the same docs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lm_eval_memrisk.codec import dumps_episode, fingerprint, fingerprint_of_lines  # noqa: F401 (re-export)
from lm_eval_memrisk.errors import MemriskError
from lm_eval_memrisk.records import Episode

COLUMNS = ("episode_id", "risk", "tier", "track", "family", "version", "dataset_hash", "episode_json")
SUBSET_DIR = Path(__file__).resolve().parent.parent / "data"


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
    from lm_eval_memrisk.loader import episode_from_dict

    return episode_from_dict(json.loads(text), path="<doc>")


def episode_of(doc: dict[str, Any]) -> Episode:
    """The Episode a doc row carries (parsed once, cached)."""
    return _episode_from_json(doc["episode_json"])


def subset_ids(name: str) -> list[str]:
    """Episode ids of a shipped subset (e.g. ``subset20``) written by the selector."""
    path = SUBSET_DIR / f"{name}.json"
    if not path.exists():
        raise MemriskError(
            f"the {name} subset file {path} does not exist yet: run `memrisk select` on a "
            f"reference set and copy its subset.json there (see README, 'Subset selection'); "
            f"refusing to silently run the full benchmark instead"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    return [e["episode_id"] if isinstance(e, dict) else str(e) for e in data["episodes"]]


def select(
    episodes: Sequence[Episode], risk: str | None = None, tier: str | None = None,
    track: str | None = None, subset: str | None = None,
) -> list[Episode]:
    out = [
        e for e in episodes
        if (risk is None or e.risk == risk) and (tier is None or e.tier == tier)
        and (track is None or e.track == track)
    ]
    if subset:
        wanted = subset_ids(subset)
        by_id = {e.id: e for e in out}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise MemriskError(f"subset {subset} names episodes not in the dataset: {', '.join(missing[:5])}")
        out = [by_id[i] for i in wanted]
    return out
