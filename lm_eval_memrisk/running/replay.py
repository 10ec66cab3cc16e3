"""``replay:FILE``: an agent that answers with replies written beforehand.

A replies file is JSON Lines, one object per decision point::

    {"episode": "R1-easy-01", "decision": "e14", "reply": "...", "prompt_sha256": "..."}

``prompt_sha256`` (optional) is :func:`prompt_sha256` of the messages the reply was
written for; when present, a different rendered prompt is an error (the replies no longer
answer what the model sees).  This is how replies written outside any model (the
``careful-assistant`` row: a capable assistant writing blind) are run through every
reader: ``memrisk eval --model memrisk-agent --model_args agent=replay:FILE,model=NAME``.
A bad line is an error naming the file, line and field; a decision with no reply is an
error naming the episode and decision, never an empty reply.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from lm_eval_memrisk.episodes.errors import MemriskError
from lm_eval_memrisk.episodes.jsonl import numbered_lines
from lm_eval_memrisk.episodes.records import Episode

__all__ = ["ReplayAgent", "load_replies", "prompt_sha256"]

PREFIX = "replay:"
_FIELDS = ("episode", "decision", "reply")


def prompt_sha256(messages: Sequence[Mapping[str, str]]) -> str:
    """The hash a replies file records for the messages a reply answers."""
    canonical = json.dumps([dict(m) for m in messages], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_replies(path: str | Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    """``(episode, decision) -> (reply, prompt_sha256 or None)`` from a replies file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MemriskError(f"replay: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise MemriskError(f"replay: {path} is not UTF-8 ({exc.reason})") from None
    out: dict[tuple[str, str], tuple[str, str | None]] = {}
    for n, line in numbered_lines(text):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MemriskError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise MemriskError(f"{path}:{n}: expected a JSON object")
        for field in _FIELDS:
            if not isinstance(row.get(field), str):
                raise MemriskError(f"{path}:{n}: field {field!r} must be a string")
        sha = row.get("prompt_sha256")
        if sha is not None and not isinstance(sha, str):
            raise MemriskError(f"{path}:{n}: field 'prompt_sha256' must be a string")
        key = (row["episode"], row["decision"])
        if key in out:
            raise MemriskError(f"{path}:{n}: a second reply for {key[0]} {key[1]}")
        out[key] = (row["reply"], sha)
    return out


class ReplayAgent:
    """Answers each decision point with its reply from a replies file."""

    wants_episode = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.replies = load_replies(self.path)
        self.name = f"replay:{self.path.name}"

    def __call__(
        self, messages: Sequence[Mapping[str, str]], *, episode: Episode | None = None,
        decision_id: str | None = None,
    ) -> str:
        if episode is None or decision_id is None:
            raise MemriskError("replay agent needs the episode and decision id")
        found = self.replies.get((episode.id, decision_id))
        if found is None:
            raise MemriskError(f"replay: {self.path} has no reply for {episode.id} {decision_id}")
        reply, sha = found
        if sha is not None and sha != prompt_sha256(messages):
            raise MemriskError(
                f"replay: the prompt of {episode.id} {decision_id} is not the one its reply in {self.path} "
                f"was written for (another dataset version, presentation or render)"
            )
        return reply
