"""Episodes as lm-eval docs: the slice a task reads (risk, tier, track, shipped subset).

The rows themselves are :mod:`lm_eval_memrisk.episodes.doc_rows` (core, shared with ``memrisk run``
and the Hub export).
"""

from __future__ import annotations

from collections.abc import Sequence

from lm_eval_memrisk.episodes.doc_rows import COLUMNS, episode_of, to_rows
from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.records import Episode
from lm_eval_memrisk.episodes.subsets import SUBSET_DIR as _SUBSET_DIR
from lm_eval_memrisk.episodes.subsets import read_subset_ids

__all__ = ["COLUMNS", "SUBSET_DIR", "episode_of", "select", "subset_ids", "to_rows"]

SUBSET_DIR = _SUBSET_DIR


def subset_ids(name: str) -> list[str]:
    """Episode ids of a shipped subset (e.g. ``subset20``) written by the selector."""
    return read_subset_ids(name, SUBSET_DIR)


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
