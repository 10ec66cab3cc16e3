"""What a shortcut agent may read: the rendered messages, parsed back into notes and
text, plus the decision's action skeleton (tool and argument layout).

Nothing here looks at the episode's ground truth: :func:`read_view` takes only the
chat messages a model would receive and the ``naive`` action template, whose
``{{mem:KEY}}`` slots say which key an action needs but not which note holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lm_eval_memrisk.episodes.normalize import contains_value
from lm_eval_memrisk.episodes.render import make_presentation
from lm_eval_memrisk.scoring.parse import parse_action

#: The audit reads the ``chat`` presentation: every turn a message of its own, the most
#: structure a shallow agent can use (the notes are the same in every presentation).
AUDIT_PRESENTATION = make_presentation("chat")

#: One memory note line of the system message (render.format_note).
NOTE_LINE = re.compile(
    r"^\[(?P<id>[^\]]+)\] time (?P<time>\d+) · scope (?P<scope>\S+) · source (?P<source>\S+) · "
    r"trust (?P<trust>\w+) · (?P<key>[^:]+): (?P<value>.*)$",
    re.MULTILINE,
)
#: The header line of the notes block (render: "Memory notes (oldest first):" and variants).
NOTES_HEADER = re.compile(r"^Memory notes[^\n]*:\s*$", re.MULTILINE)
#: A session header: "... signed in as Ines Whitfield (workspace Bluebird)".
SIGN_IN = re.compile(r"signed in as (?P<first>[^\s(]+)[^(]*\(workspace (?P<ws>[^)]+)\)")
SLOT = re.compile(r"\{\{mem:([^{}]+)\}\}")
TRUST_ORDER = {"low": 0, "medium": 1, "high": 2}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Note:
    """A memory note as the agent reads it."""

    id: str
    time: int
    scope: str
    source: str
    trust: str
    key: str
    value: str


@dataclass(frozen=True)
class View:
    """One decision point as a shallow agent sees it."""

    notes: tuple[Note, ...]
    messages: tuple[tuple[str, str], ...]
    """(role, content) of the conversation after the system message, in order."""
    scopes: tuple[str, ...]
    """The scopes of the last session header (``user:x``, ``workspace:y``)."""
    skeleton: Mapping[str, Any]
    """The action template; ``{{mem:KEY}}`` marks a memory slot."""

    @property
    def keys(self) -> list[str]:
        """The memory keys the skeleton's slots need, in order."""
        return list(dict.fromkeys(SLOT.findall(_flat(self.skeleton))))

    def candidates(self, key: str) -> list[Note]:
        """Notes of ``key``, oldest first."""
        return sorted((n for n in self.notes if n.key == key), key=lambda n: (n.time, n.id))

    def in_scope(self, note: Note) -> bool:
        return note.scope == "global" or note.scope in self.scopes

    def mentions(self, value: str) -> list[int]:
        """Indices of the messages that name ``value``."""
        return [i for i, (_, text) in enumerate(self.messages) if contains_value(text, value)]

    def called_with(self, value: str) -> bool:
        """Whether an earlier assistant tool call (a passed decision point's reply, or a
        scripted call) names ``value``."""
        return any(
            self.messages[i][0] == "assistant" and parse_action(self.messages[i][1]).kind == "tool_call"
            for i in self.mentions(value)
        )


def _flat(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return " ".join(_flat(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return " ".join(_flat(v) for v in obj)
    return str(obj)


def _without_notes(text: str) -> str:
    """A message's text with the notes block (its header and note lines) removed."""
    return NOTES_HEADER.sub("", NOTE_LINE.sub("", text)).strip()


def read_view(messages: Sequence[Mapping[str, str]], skeleton: Mapping[str, Any]) -> View:
    """Parse rendered chat messages into a :class:`View`: the notes, wherever the layout
    puts them (the system message, or the block that opens the last user message), and
    the conversation without the notes block."""
    every = "\n".join(m["content"] for m in messages)
    notes = tuple(
        Note(
            id=m["id"],
            time=int(m["time"]),
            scope=m["scope"],
            source=m["source"],
            trust=m["trust"],
            key=m["key"].strip(),
            value=m["value"].strip(),
        )
        for m in NOTE_LINE.finditer(every)
    )
    # one entry per paragraph: a turn merged from several events (a session header and the
    # first message; since render 4, statements no longer split by acknowledgements)
    # reads as the events it was made of
    convo = tuple(
        (m["role"], part)
        for m in messages if m["role"] != "system"
        for part in _without_notes(m["content"]).split("\n\n") if part.strip()
    )
    scopes: tuple[str, ...] = ()
    for _, text in convo:
        for h in SIGN_IN.finditer(text):
            scopes = (f"user:{_slug(h['first'])}", f"workspace:{_slug(h['ws'])}")
    return View(notes=notes, messages=convo, scopes=scopes, skeleton=skeleton)


def fill(skeleton: Any, choose: Mapping[str, str]) -> Any:
    """The skeleton with each ``{{mem:KEY}}`` slot replaced by ``choose[KEY]``."""
    if isinstance(skeleton, str):
        return SLOT.sub(lambda m: choose.get(m.group(1).strip(), m.group(0)), skeleton)
    if isinstance(skeleton, Mapping):
        return {k: fill(v, choose) for k, v in skeleton.items()}
    if isinstance(skeleton, (list, tuple)):
        return [fill(v, choose) for v in skeleton]
    return skeleton
