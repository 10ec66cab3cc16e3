"""Episodes as lm-eval docs: the slice a task reads (risk, tier, track, shipped subset).

The rows themselves are :mod:`lm_eval_memrisk.doc_rows` (core, shared with ``memrisk run``
and the Hub export).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from lm_eval_memrisk.doc_rows import COLUMNS, episode_of, to_rows
from lm_eval_memrisk.errors import MemriskError
from lm_eval_memrisk.records import Episode

__all__ = ["COLUMNS", "SUBSET_DIR", "episode_of", "select", "subset_ids", "to_rows"]

SUBSET_DIR = Path(__file__).resolve().parent.parent / "data"


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
