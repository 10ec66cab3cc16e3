"""Shipped episode subsets (``data/subset20.json``, written by ``memrisk select``).

The lm-eval glue (:mod:`lm_eval_memrisk.harness.docs`) and the run readers
(:mod:`lm_eval_memrisk.logs.runs`) both read them through :func:`read_subset_ids`, so the
core never imports the harness.
"""

from __future__ import annotations

import json
from pathlib import Path

from lm_eval_memrisk.episodes.errors import MemriskError

__all__ = ["SUBSET_DIR", "read_subset_ids"]

SUBSET_DIR = Path(__file__).resolve().parent.parent / "data"


def read_subset_ids(name: str, directory: Path = SUBSET_DIR) -> list[str]:
    """Episode ids of the shipped subset ``name`` (e.g. ``subset20``), in file order."""
    path = directory / f"{name}.json"
    if not path.exists():
        raise MemriskError(
            f"the {name} subset file {path} does not exist yet: run `memrisk select` on a "
            f"reference set and copy its subset.json there (see docs/selector.md, 'Subset selection'); "
            f"refusing to silently run the full benchmark instead"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    return [e["episode_id"] if isinstance(e, dict) else str(e) for e in data["episodes"]]
