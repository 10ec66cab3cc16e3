"""Surface features of a decision's options, read from a :class:`View` only.

An option is a candidate value for one memory slot of the decision's action (the
values of the notes of the slot's key, in any scope, and the values of other notes the
conversation names), or the special *ask* option (ask which value to use).  Each
option is a bag of string features: the words around each place the conversation
names the value (``L:word`` before, ``R:word`` after, within :data:`WINDOW` words of
the same paragraph), the kind of message it sits in, its notes' labels (scope,
source, trust), its recency among the key's notes, the session it was last named in
(counted back from the latest), whether an earlier assistant call named it.  The ask
option carries the words of the request turn and how many values the key has.

Nothing here reads ground truth: the learned reader (:mod:`.learned`) labels the
options of training episodes separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lm_eval_memrisk.audit.shortcuts import TOOL_RESULT
from lm_eval_memrisk.audit.view import SIGN_IN, Note, View
from lm_eval_memrisk.episodes.normalize import contains_value, normalize
from lm_eval_memrisk.scoring.parse import parse_action

#: Words on each side of a value's occurrence that become features.
WINDOW = 8
WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Option:
    """One choice at a decision: a value for ``key``'s slot, or asking (``value`` None)."""

    key: str
    value: str | None
    features: frozenset[str]


def message_kind(view: View, i: int) -> str:
    """``header``, ``tool``, ``call``, ``assistant`` or ``user`` for message ``i``."""
    role, text = view.messages[i]
    if role == "assistant":
        return "call" if parse_action(text).kind == "tool_call" else "assistant"
    if SIGN_IN.search(text):
        return "header"
    return "tool" if TOOL_RESULT.match(text) else "user"


class _Index:
    """A view's messages normalised once, their kinds and sessions: where values are named."""

    def __init__(self, view: View) -> None:
        self.view = view
        self.norm = [f" {normalize(text)} " for _, text in view.messages]
        self.kinds = [message_kind(view, i) for i in range(len(view.messages))]
        self.session = _sessions(view)

    def mentions(self, value: str) -> list[int]:
        v = normalize(value)
        return [i for i, text in enumerate(self.norm) if v and f" {v} " in text]

    def called_with(self, value: str) -> bool:
        return any(self.kinds[i] == "call" for i in self.mentions(value))


def _window(text: str, value: str) -> set[str]:
    """``L:``/``R:`` words around each literal occurrence of ``value`` in ``text`` (the
    whole paragraph's words as ``W:`` when the value only matches after normalising)."""
    low = text.lower()
    spans = [m.span() for m in re.finditer(re.escape(value.lower()), low)]
    if not spans:
        return {f"W:{w}" for w in WORD.findall(low)}
    out: set[str] = set()
    for start, end in spans:
        out.update(f"L:{w}" for w in WORD.findall(low[:start])[-WINDOW:])
        out.update(f"R:{w}" for w in WORD.findall(low[end:])[:WINDOW])
    return out


def _sessions(view: View) -> list[int]:
    """Index of the session header that opens each message's session (-1: none)."""
    out, current = [], -1
    for i, (_, text) in enumerate(view.messages):
        if SIGN_IN.search(text):
            current = i
        out.append(current)
    return out


def _bucket(n: int, top: int = 2) -> str:
    return str(n) if n < top else f"{top}+"


def _rank(i: int, n: int) -> str:
    if n == 1:
        return "only"
    return "newest" if i == n - 1 else "oldest" if i == 0 else "middle"


def _by_value(notes: list[Note]) -> dict[str, list[Note]]:
    """Notes grouped by normalised value, groups ordered by their newest note."""
    groups: dict[str, list[Note]] = {}
    for n in sorted(notes, key=lambda n: (n.time, n.id)):
        groups.setdefault(normalize(n.value), []).append(n)
    return dict(sorted(groups.items(), key=lambda kv: (kv[1][-1].time, kv[1][-1].id)))


def _value_features(index: _Index, notes: list[Note]) -> set[str]:
    """Features of one value (held by ``notes``) in the indexed view."""
    view, value = index.view, notes[-1].value
    feats = {f"src:{n.source}" for n in notes} | {f"trust:{n.trust}" for n in notes}
    feats |= {("scope:current" if view.in_scope(n) else "scope:other") for n in notes}
    feats.add(f"notes:{_bucket(len(notes))}")
    where = index.mentions(value)
    feats.add(f"named:{_bucket(len(where), 3)}")
    if index.called_with(value):
        feats.add("called")
    starts = sorted(set(index.session))
    for tag, i in (("last", where[-1]), ("first", where[0])) if where else ():
        back = len([s for s in starts if s > index.session[i]])
        feats.add(f"{tag}-session:{_bucket(back, 3)}")
        feats.add(f"{tag}-msg:{index.kinds[i]}")
    for i in where:
        kind = index.kinds[i]
        words = _window(view.messages[i][1], value)
        feats.add(f"msg:{kind}")
        feats |= words
        feats |= {f"{kind}:{w}" for w in words}
    return feats


def options(view: View) -> list[Option]:
    """Every option of the decision in ``view``: for each slot key its candidate values
    (same key first, then other keys' values the conversation names), then *ask*."""
    index = _Index(view)
    out: list[Option] = []
    own = 0
    for key in view.keys:
        named_at: dict[str, int] = {}
        same = _by_value(view.candidates(key))
        in_scope = _by_value([n for n in view.candidates(key) if view.in_scope(n)])
        own = max(own, len(in_scope))
        for rank, (norm, notes) in enumerate(same.items()):
            feats = _value_features(index, notes)
            feats.add("key:same")
            feats.add(f"rank:{_rank(rank, len(same))}")
            if norm in in_scope:
                feats.add(f"scope-rank:{_rank(list(in_scope).index(norm), len(in_scope))}")
            where = index.mentions(notes[-1].value)
            named_at[norm] = where[-1] if where else -1
            out.append(Option(key, notes[-1].value, frozenset(feats)))
        order = sorted((i, v) for v, i in named_at.items() if i >= 0)
        if order:
            last_named = order[-1][1]
            out = [
                Option(o.key, o.value, o.features | {"named-last"})
                if o.key == key and o.value is not None and normalize(o.value) == last_named
                else o
                for o in out
            ]
        others = _by_value([n for n in view.notes if n.key != key and index.mentions(n.value)])
        for norm, notes in others.items():
            if norm in same:
                continue
            feats = _value_features(index, notes) | {"key:other"}
            out.append(Option(key, notes[-1].value, frozenset(feats)))
    request = next((t for r, t in reversed(view.messages) if r == "user"), "")
    ask = {"ask", f"ask:own:{_bucket(own, 3)}"} | {
        f"ask:w:{w}" for w in WORD.findall(request.lower())
    }
    out.append(Option(view.keys[0] if view.keys else "", None, frozenset(ask)))
    return out


def names(option: Option, text: str) -> bool:
    """Whether ``text`` (a reference action's content) names ``option``'s value."""
    return option.value is not None and contains_value(text, option.value)
