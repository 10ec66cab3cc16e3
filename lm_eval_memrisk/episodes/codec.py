"""Canonical JSON form of episodes (the inverse lives in :mod:`lm_eval_memrisk.episodes.loader`).

``dumps_episode`` is byte-stable: the same Episode always gives the same line, which
is what makes the committed dataset reproducible.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from lm_eval_memrisk.episodes.records import Episode


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is None or v == () or v == {}:
                continue  # omit unset optional fields
            out[f.name] = _plain(v)
        return out
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def episode_to_dict(episode: Episode) -> dict[str, Any]:
    """Episode -> JSON-ready dict; fields left at their empty default are omitted."""
    data = _plain(episode)
    assert isinstance(data, dict)
    return data


def fingerprint_of_lines(lines: Iterable[str]) -> str:
    """Dataset hash from canonical episode lines: sha256 of the sorted lines, 16 hex digits."""
    text = "\n".join(sorted(lines))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fingerprint(episodes: Iterable[Episode]) -> str:
    """The dataset hash of result signatures: independent of file order and formatting."""
    return fingerprint_of_lines(dumps_episode(e) for e in episodes)


def dumps_episode(episode: Episode) -> str:
    """One canonical JSONL line (no trailing newline)."""
    return json.dumps(episode_to_dict(episode), ensure_ascii=False, separators=(",", ":"))
